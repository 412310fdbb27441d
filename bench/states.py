"""The three answer states measured, per population: how often each query set's questions are
answered, shown as "may answer", or said not covered, at each channel's operating point; the
confidence's AUROC, coverage at precision 0.9, calibration error and reliability per population
(written questions, real tracker titles, pasted error lines); a mixed stream at precision 0.9;
questions far outside the field and near it; every entry asked in its own words; and the search's p50.

    python bench/states.py    # every table (Markdown), with the shipped calibration

Needs an index (`kb ingest`) in $KB_DATA_DIR. dev and holdout were fitted on (the ranking weights
and the query adapter; the confidence is fitted on real questions alone); real_test never was:
it is only reported. far_outside (cooking, weather, travel) and near_outside (other frameworks'
errors, other tools' settings) are reported only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb.confidence import auroc, coverage_at, reliability, summary  # noqa: E402
from kb.evaluate import DEPTH, EvalQuery, is_expected, load_queries  # noqa: E402
from kb.hits import SearchResult  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402
from kb.verbatim import Verbatim, verbatim_key  # noqa: E402
from kb.verdict import AnswerState  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SETS = ("dev", "holdout", "real_test", "far_outside", "near_outside")
# The operating points the channels declare by default (kb.settings, server channels, GitHub).
POINTS = {"default 0.8": 0.8, "MCP 0.85": 0.85, "Slack, GitHub comment 0.9": 0.9}


@dataclass
class MeasuredQuestion:
    query: EvalQuery
    result: SearchResult  # searched at the default point
    right: bool  # its first hit answers it

    @property
    def population(self) -> str:
        if not self.query.url:
            return "written"
        return "traces" if self.query.q.count("\n") or _kind(self.query) == "body-line" else "real titles"


KINDS: dict[str, str] = {}


def _kind(query: EvalQuery) -> str:
    return KINDS.get(query.id, "")


def measure(kb: KnowledgeBase, name: str) -> list[MeasuredQuestion]:
    import json

    path = DATA / f"{name}.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            KINDS[row["id"]] = row.get("kind", "")
    found = []
    for query in load_queries(path):
        result = kb.search_blocking(query.q, DEPTH)
        right = query.answerable and bool(result.hits) and is_expected(result.hits[0].entry, query.expect)
        found.append(MeasuredQuestion(query, result, right))
    return found


def states(rows: Sequence[MeasuredQuestion], threshold: float) -> dict[str, Any]:
    """Of the answerable questions: answered, "may answer" with the right entry first, declined; of the
    out-of-scope ones: answered, "may answer", not covered."""
    answerable = [r for r in rows if r.query.answerable]
    outside = [r for r in rows if not r.query.answerable]

    def said(r: MeasuredQuestion) -> AnswerState:
        return r.result.at(threshold).state

    a = [said(r) for r in answerable]
    o = [said(r) for r in outside]
    answered = [r for r, s in zip(answerable, a) if s is AnswerState.ANSWERED]
    every_answered = [r for r in rows if said(r) is AnswerState.ANSWERED]
    return {
        "answerable": len(answerable),
        "declined": sum(s is not AnswerState.ANSWERED for s in a) / len(answerable) if answerable else float("nan"),
        "answered_right": sum(r.right for r in answered),
        "answered": len(answered),
        "shown": sum(s is AnswerState.ANSWERED or (s is AnswerState.LIKELY and r.right) for r, s in zip(answerable, a))
        / len(answerable)
        if answerable
        else float("nan"),
        "outside": len(outside),
        "outside_declined": sum(s is not AnswerState.ANSWERED for s in o),
        "outside_below_floor": sum(s is AnswerState.NOT_COVERED for s in o),
        "precision": sum(r.right for r in every_answered) / len(every_answered) if every_answered else float("nan"),
        "coverage": len(every_answered) / len(rows) if rows else 0.0,
    }


def pct(x: float) -> str:
    return "–" if x != x else f"{x:.1%}"


def own_words(kb: KnowledgeBase) -> None:
    """Every entry's own question (each language) and learned alternate, asked as it stands."""
    s = kb.searcher
    asked_texts = []
    for position, entry in enumerate(s.entries):
        for version in entry.versions():
            asked_texts.append((version.question, position))
    for question, owner in zip(s.learned.questions, s.learned.owners):
        if owner >= 0:
            asked_texts.append((question.question, int(owner)))
    print(f"\n## Entries asked in their own words ({len(asked_texts)} questions, titles and alternates)\n")
    owners: dict[str, set[str]] = {}
    for text, position in asked_texts:
        owners.setdefault(verbatim_key(text), set()).add(s.entries[position].id)
    own_only = [(t, p) for t, p in asked_texts if len(owners[verbatim_key(t)]) == 1]
    print(f"({len(asked_texts) - len(own_only)} of them are the words of two entries, or more: left out)\n")
    print(
        "True by construction, not a measure of the ranking: an entry's own words are found by the verbatim lookup "
        "and answered with confidence 1.0; the table checks that the lookup is wired in at every point.\n"
    )
    print("| operating point | answered | with its own entry first |")
    print("|---|---|---|")
    results = [(kb.search_blocking(text, 5), position) for text, position in own_only]
    for name, precision in POINTS.items():
        threshold = min(s.weights.threshold(precision), 1.0)
        answered = [(r, p) for r, p in results if r.hits and r.confidence >= threshold]
        own = sum(r.hits[0].entry.id == s.entries[p].id for r, p in answered)
        print(f"| {name} | {len(answered)} / {len(results)} | {own} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    kb = KnowledgeBase.open(Settings.from_env())
    kb.warm()
    w = kb.searcher.weights
    print(f"floor {w.floor:.3f}; thresholds: " + ", ".join(f"{p}: {w.threshold(p):.3f}" for p in POINTS.values()))
    started = time.perf_counter()
    by_set = {name: measure(kb, name) for name in SETS}
    print(f"({time.perf_counter() - started:.0f} s to search every set)")
    per_set(by_set, w)
    per_population(by_set)
    for name, said in (("far_outside", "far outside the field"), ("near_outside", "near the field, outside the FAQs")):
        rows = by_set[name]
        print(
            f"\n{said}: {sum(r.result.answered for r in rows)} of {len(rows)} answered, "
            f"{sum(r.result.state == 'not_covered' for r in rows)} below the floor, highest confidence "
            f"{max(r.result.confidence for r in rows):.3f}"
        )
    own_words(kb)
    timing(kb, [r.query.q for r in by_set["holdout"] + by_set["real_test"]])


def per_set(by_set: dict[str, list[MeasuredQuestion]], w: Any) -> None:
    """Each set's states at each operating point, and a mixed stream's at precision 0.9."""
    print("\n## Per query set, at each operating point\n")
    print(
        "| set | point | answerable declined | answered (right) | answered or 'may answer' with the right entry first "
        "| out of scope declined | out of scope below the floor | precision | coverage |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rows in by_set.items():
        for point, precision in POINTS.items():
            f = states(rows, w.threshold(precision))
            print(
                f"| {name} | {point} | {pct(f['declined'])} | {f['answered']} ({f['answered_right']}) | {pct(f['shown'])} "
                f"| {f['outside_declined']} / {f['outside']} | {f['outside_below_floor']} / {f['outside']} "
                f"| {pct(f['precision'])} | {pct(f['coverage'])} |"
            )
    mixed = by_set["holdout"] + by_set["real_test"]
    f = states(mixed, w.threshold(0.9))
    print(
        f"\nmixed stream (holdout + real_test, {len(mixed)} questions) at precision 0.9: answered "
        f"{pct(f['coverage'])}, precision {pct(f['precision'])}"
    )


def per_population(by_set: dict[str, list[MeasuredQuestion]]) -> None:
    """The confidence's AUROC, coverage at precision 0.9, calibration error and reliability per population."""
    print("\n## The confidence per population (searched as served; real_test never fitted on)\n")
    print("| population | questions | right first | AUROC | coverage at precision 0.9 | calibration error |")
    print("|---|---|---|---|---|---|")
    pops: dict[str, list[MeasuredQuestion]] = {}
    for name in ("dev", "holdout", "real_test"):
        for r in by_set[name]:
            pops.setdefault(f"{r.population} ({name if name == 'real_test' else 'dev+holdout'})", []).append(r)
    pops["real_test, titles and traces"] = list(by_set["real_test"])
    pops["every question (dev + holdout + real_test)"] = [r for n in ("dev", "holdout", "real_test") for r in by_set[n]]
    for pop, rows in pops.items():
        c = [r.result.confidence for r in rows]
        y = [r.right for r in rows]
        s = summary(c, y)
        value = auroc(c, y)
        print(
            f"| {pop} | {len(rows)} | {sum(y)} | {'–' if value != value else f'{value:.3f}'} "
            f"| {pct(coverage_at(c, y, 0.9))} | {s['calibration_error']} |"
        )
    for pop, rows in pops.items():
        print(f"\n**Reliability, {pop}**\n")
        print("| confidence | questions | mean confidence | right |")
        print("|---|---|---|---|")
        for row in reliability([r.result.confidence for r in rows], [r.right for r in rows]):
            if row["questions"]:
                print(f"| {row['bin']} | {row['questions']} | {row['confidence']:.3f} | {row['right']:.3f} |")


def timing(kb: KnowledgeBase, questions: Sequence[str]) -> None:
    """The ranking's time with and without the verbatim lookup, interleaved in one run (the question's
    vector given), and a whole search's p50 (a question not searched before)."""
    s = kb.searcher
    with_lookup, without = s, s.with_learned(s.learned)
    without.verbatim = Verbatim([], type(s.learned).empty(s.dense.dim))
    plans = [(s.plan(q, k=DEPTH), s.embedder.embed_query(s.plan(q, k=DEPTH).embed_text)) for q in questions]
    times: dict[str, list[float]] = {"with": [], "without": []}
    for round_ in range(3):
        for plan, vector in plans:
            for name, searcher in (("with", with_lookup), ("without", without))[:: 1 if round_ % 2 else -1]:
                started = time.perf_counter()
                searcher.rank(plan, vector)
                times[name].append(time.perf_counter() - started)
    p50 = {name: statistics.median(t) * 1000 for name, t in times.items()}
    print(
        f"\nranking p50 (the question's vector given, {len(plans)} questions x 3, interleaved): "
        f"{p50['with']:.2f} ms with the verbatim lookup, {p50['without']:.2f} ms without"
    )
    whole = []
    for q in questions[:100]:
        started = time.perf_counter()
        kb.search_blocking(q + " ?", DEPTH)  # a new question: nothing cached
        whole.append(time.perf_counter() - started)
    print(f"a new question's whole search (embedding included): p50 {statistics.median(whole) * 1000:.1f} ms over 100")


if __name__ == "__main__":
    main()
