"""The GitHub bot on whole issues: the same issues searched by their titles alone and read whole as the bot reads
them, on issues_test.jsonl (real_test's issues with their bodies, never fitted on), against the channel's targets.

Each issue is read as `kb.issue_question.question_of` reads it and judged by the whole issues' confidence
(`Calibration.issues`, fitted on issues_tune.jsonl by `kb calibrate --issues`); its title alone is judged by the
questions' confidence, as a question is. Comment mode answers at precision 0.9, suggest mode drafts at 0.7
(kb/channel_points.py). Targets: suggest mode's drafts right at least 0.7 of the time, at least a quarter of the
covered issues drafted, at most 5% of the others; comment mode at least 10% of the covered issues at precision 0.9,
none of the others; the whole issue's AUROC and R@1 at least the title's.

    .venv/bin/python bench/bench_issues.py [--quick] [--issues tests/data/issues_test.jsonl]

Needs an index (`kb ingest`) in $KB_DATA_DIR.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main  # noqa: E402

from kb.channel_points import DRAFT_PRECISION, PUBLIC_COMMENT_PRECISION  # noqa: E402
from kb.evaluate import EvalQuery, EvalReport, evaluate, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402

SECTION = "GitHub, whole issues"
ISSUES = ROOT / "tests" / "data" / "issues_test.jsonl"


def decisions(report: EvalReport, threshold: float) -> dict[str, int]:
    """At `threshold`: how many issues answered, how many with the right entry first, how many the FAQ does not cover."""
    said = [o for o in report.outcomes if o.result.confidence >= min(threshold, 1.0)]
    return {
        "made": len(said),
        "right": sum(o.rank == 1 for o in said),
        "uncovered": sum(not o.query.answerable for o in said),
    }


def figures(kb: KnowledgeBase, queries: list[EvalQuery], reads: str) -> dict[str, object]:
    """R@1, AUROC and each mode's decisions on `queries` (whole issues when `reads` is "issue")."""
    report = evaluate(kb.search_blocking, queries)
    weights = kb.searcher.answer_weights(reads)
    return {
        "right_first": sum(o.rank == 1 for o in report.outcomes),
        "auroc": report.confidence()["auroc"],
        "comment": decisions(report, weights.threshold(PUBLIC_COMMENT_PRECISION)),
        "suggest": decisions(report, weights.threshold(DRAFT_PRECISION)),
    }


def run(quick: bool = False, issues: str = str(ISSUES)) -> list[Row]:
    kb = KnowledgeBase.open(Settings.from_env())
    whole = load_queries(Path(issues))[: 60 if quick else None]
    titles = [EvalQuery(q.id, q.title, q.expect, q.lang, q.url) for q in whole]
    covered = sum(q.answerable for q in whole)
    outside = len(whole) - covered
    by = {"title alone": figures(kb, titles, "question"), "whole issue": figures(kb, whole, "issue")}
    rows = [Row(f"issues ({Path(issues).name})", f"{len(whole)}: {covered} covered, {outside} not")]
    for name, f in by.items():
        c, s = f["comment"], f["suggest"]
        assert isinstance(c, dict) and isinstance(s, dict)
        rows += [
            Row(f"{name}: right entry first", f"{f['right_first']} of {covered}"),
            Row(f"{name}: confidence AUROC", f"{f['auroc']}"),
            Row(f"{name}: comment mode", f"{c['made']} ({c['right']} right, {c['uncovered']} not covered)"),
            Row(f"{name}: suggest mode", f"{s['made']} ({s['right']} right, {s['uncovered']} not covered)"),
        ]
    w = by["whole issue"]
    c, s = w["comment"], w["suggest"]
    t = by["title alone"]
    assert isinstance(c, dict) and isinstance(s, dict)
    precision = s["right"] / s["made"] if s["made"] else 1.0
    rows += [
        Row("suggest mode: drafts right", f"{precision:.3f}", ">= 0.7", precision >= 0.7),
        Row(
            "suggest mode: covered issues drafted",
            f"{s['right'] / covered:.3f}",
            ">= 0.25",
            s["right"] >= 0.25 * covered,
        ),
        Row(
            "suggest mode: issues not covered drafted",
            f"{s['uncovered'] / outside:.3f}",
            "<= 0.05",
            s["uncovered"] <= 0.05 * outside,
        ),
        Row(
            "comment mode: covered issues commented, right",
            f"{c['right'] / covered:.3f} (precision {c['right'] / c['made'] if c['made'] else 1.0:.3f})",
            ">= 0.10 at >= 0.9",
            c["right"] >= 0.1 * covered and (not c["made"] or c["right"] / c["made"] >= 0.9),
        ),
        Row("comment mode: issues not covered commented", str(c["uncovered"]), "0", c["uncovered"] == 0),
        Row(
            "whole issue against title: AUROC, R@1",
            f"{w['auroc']} vs {t['auroc']}; {w['right_first']} vs {t['right_first']}",
            ">= both",
            float(w["auroc"] or 0) >= float(t["auroc"] or 0) and int(w["right_first"]) >= int(t["right_first"]),  # type: ignore[call-overload]
        ),
    ]
    return rows


if __name__ == "__main__":
    main(run, __doc__, issues=(str, str(ISSUES), "a file of whole issues (lines with `title` and `body`)"))
