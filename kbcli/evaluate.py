"""`kb eval`: measure retrieval on a labelled query set, and what each channel's operating point answers there.

    kb eval FILE [--json] [--explain] [--questions]

The figures are `kb.evaluate.evaluate`'s, on the index and calibration alone (no links of this
machine's insights database); `--explain` shows each miss with its signals; `--questions` prints one
JSON line a question instead: the question searched, the first entry, the confidence, the state and
whether each channel's point answers it. A line with `title` and `body` is a whole issue, read as the
GitHub bot reads one. The points are kb.channel_points', for the registry's channels that read whole issues, and
KB_CHANNEL_PRECISION's: the app is not loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.settings import Settings

from .terminal import progress_bar

if TYPE_CHECKING:
    from kb.evaluate import EvalReport
    from kb.knowledge import KnowledgeBase
    from kb.scoring import Weights

__all__ = ["add_parser", "cmd_eval", "operating_points", "print_operating"]


def add_parser(sub: Any) -> None:
    """Add `eval` to the `kb` command's subparsers."""
    p = sub.add_parser("eval", help="measure retrieval on a JSONL query set, and what each channel's point answers")
    p.add_argument(
        "file",
        help="the labelled JSONL query set to measure on (one `kb calibrate` did not fit on): each line's `q`, "
        "or a whole issue's `title` and `body`, read as a tracker's bot reads an issue",
    )
    p.add_argument("--json", action="store_true", help="print figures as JSON")
    p.add_argument("--explain", action="store_true", help="show each miss with its signals")
    p.add_argument(
        "--questions",
        action="store_true",
        help="print one JSON line a question: the question searched, first entry, confidence, state, each point's answer",
    )
    p.set_defaults(run=cmd_eval)


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from kb.evaluate import evaluate, load_queries, question_lines, unmatched
    from kb.knowledge import KnowledgeBase

    queries = load_queries(Path(args.file))
    kb = KnowledgeBase.open(settings)  # the index and calibration alone: no links of this machine's database
    for query in unmatched(queries, kb.entries):
        print(
            f"kb: warning: {args.file}:{query.line}: 'expect' {list(query.expect)!r} names no entry of the index; "
            "counted as a miss",
            file=sys.stderr,
        )
    with progress_bar() as progress:
        done = 0

        def search(query: str, k: int, **reads: str):
            nonlocal done
            result = kb.search_blocking(query, k, **reads)
            done += 1
            progress("eval", done, len(queries))
            return result

        report = evaluate(search, queries)
    points = {"default (KB_ANSWER_PRECISION)": settings.answer_precision} | operating_points(settings)
    weights = judged_by(report, kb)
    if args.questions:
        needed = {name: weights.threshold(precision) for name, precision in points.items()}
        for line in question_lines(report, needed):
            print(json.dumps(line, ensure_ascii=False))
        return 0
    if args.json:
        figures = report.to_dict()
        figures["points"] = {
            name: {"point": precision} | report.answering(weights.threshold(precision))
            for name, precision in points.items()
        }
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(f"{'':10}{'queries':>8}{'R@1':>8}{'R@3':>8}{'MRR@10':>8}{'abstained':>11}")
    rows = [(lang, s) for lang, s in report.by_lang.items()] + [("all", report.overall)]
    for name, s in rows:
        print(
            f"{name:10}{s.queries:>8}{s.recall_at_1:>8.3f}{s.recall_at_3:>8.3f}"
            f"{s.mrr_at_10:>8.3f}{s.false_abstention:>10.1%}"
        )
    print(f"out of scope: {report.abstained}/{report.out_of_scope} abstained")
    print_operating(report, kb, settings)
    if args.explain:
        _explain(report)
    return 0


def judged_by(report: EvalReport, kb: KnowledgeBase) -> Weights:
    """The confidence the questions are judged by: the whole issues' (`Calibration.issues`) for a set of whole
    issues, else the questions'."""
    return kb.searcher.answer_weights("issue" if any(o.query.issue for o in report.outcomes) else "question")


def operating_points(settings: Settings) -> dict[str, float]:
    """The point of each channel that declares one (a tracker bot's comment and suggest modes apart, for each
    channel that reads whole issues: kb.channel_points) or is given one in KB_CHANNEL_PRECISION."""
    from kb.channel_points import tracker_points
    from server.channels.registry import CHANNELS

    trackers = [c.name for c in CHANNELS if c.reads == "issue"]
    points = {k: v for name in trackers for k, v in tracker_points(settings.channel_precisions, name).items()}
    return points | {name: p for name, p in settings.channel_precisions.items() if name not in trackers}


def print_operating(report: EvalReport, kb: KnowledgeBase, settings: Settings) -> None:
    """The confidence's figures on a query set, and what each channel's operating point answers there."""
    c = report.confidence()
    print(
        f"confidence: AUROC {c['auroc']}, answered at precision 0.8: {c['coverage_at_0.8']:.1%}, "
        f"at 0.9: {c['coverage_at_0.9']:.1%} of {c['questions']} ({c['right_first']} right first); "
        f"calibration error {c['calibration_error']}"
    )
    points = {"default (KB_ANSWER_PRECISION)": settings.answer_precision} | operating_points(settings)
    issues = sum(o.query.issue for o in report.outcomes)
    if issues:
        print(f"{issues} of {len(report.outcomes)} questions are whole issues, read as a tracker's bot reads them")
    for name, precision in points.items():
        a = report.answering(judged_by(report, kb).threshold(precision))
        got = "-" if a["precision"] is None else f"{a['precision']:.3f}"
        print(
            f"  {name} at precision {precision}: answers {a['answered']} ({a['coverage']:.1%}), "
            f"{a['right']} right first (precision {got})"
        )


def _explain(report) -> None:
    for o in report.outcomes:
        wrong = (o.query.answerable and (o.rank != 1 or not o.answered)) or (not o.query.answerable and o.answered)
        if not wrong:
            continue
        print(f"\n{o.query.id} [{o.query.lang}] {o.query.q}")
        print(f"  expected rank: {o.rank or '-'}; answered: {o.answered}")
        for hit in o.result.hits[:3]:
            s = hit.signals
            detail = (
                f"cos {s.cosine:.3f} bg {s.background:.3f} cov {s.coverage:.2f} question {s.question:.2f}" if s else ""
            )
            print(f"  {hit.rank}. {hit.score:+.3f} {detail}  {hit.entry.question[:60]}")
