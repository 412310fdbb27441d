"""What the query adapter gains, measured on questions neither it nor the calibration saw.

Two systems, each with its own calibration fitted by `kb calibrate`'s cross-validation on
dev, holdout and the tune split (kb.calibrate; with the adapter, each fold searched through
an adapter refitted without that fold's questions):

- **without**: the model's own query vectors;
- **with**: the shipped adapter (fitted on the entries' questions, the shipped learned
  questions (the tune split's, less those near a test question) and dev.jsonl).

Reported, for each, on the test split (never fitted on, never learned from), holdout and dev:
R@1, R@3, MRR@10 and abstention; the test split's answerable questions split by whether their
entry has learned questions; how often each entry comes first for out-of-scope questions (the
hubs) and whether a few questions far from any entry are answered; and the learning curve:
the test split with 0/25/50/100% of the tune split learned, with and without an adapter
fitted on what was learned (three random orders of the tune split, as `bench/learning.py`).

    python bench/adapter.py            # about ten minutes on 2 cores
    python bench/adapter.py --quick    # one order per share
"""

from __future__ import annotations

import collections
import copy
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main, ready_settings, table  # noqa: E402
from learning import SHARES, Teacher, tune_to_test  # noqa: E402

from kb.adapter import FitSettings  # noqa: E402
from kb.calibrate import calibrate  # noqa: E402
from kb.evaluate import EvalQuery, evaluate, is_expected, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.search import Searcher  # noqa: E402
from kb.tuning import examples_of, fit, tune  # noqa: E402

DATA = ROOT / "tests" / "data"
ORDERS = 3
# Questions no entry's words or meaning come near: they must stay unanswered.
FAR = ("what's the weather in Paris", "how do I bake bread", "今天天气怎么样", "怎么学好英语", "hi")


def _weighed(searcher: Searcher, queries: Sequence[EvalQuery]) -> Searcher:
    """`searcher` with weights fitted on `queries` by cross-validation, as `kb calibrate` fits them."""
    weights, _ = calibrate(searcher, queries)
    fitted = copy.copy(searcher)
    fitted.weights = weights
    return fitted


def _search(searcher: Searcher):
    def search(q: str, k: int):
        plan = searcher.plan(q, k)
        return searcher.rank(plan, searcher.embedder.embed_query(plan.embed_text))

    return search


def _figures(searcher: Searcher, queries: list[EvalQuery]) -> dict[str, float]:
    report = evaluate(_search(searcher), queries)
    o = report.overall
    return {
        "R@1": o.recall_at_1,
        "R@3": o.recall_at_3,
        "MRR@10": o.mrr_at_10,
        "answerable abstained": o.false_abstention,
        "out of scope abstained": report.abstained,
        "out of scope": report.out_of_scope,
        "answerable": o.queries,
    }


def at_false_abstention(searcher: Searcher, queries: list[EvalQuery], most: float = 0.05) -> tuple[int, int, float]:
    """Out-of-scope questions abstained at the highest answer threshold that leaves at most `most`
    of the answerable ones unanswered, on `queries` themselves: a point of the trade-off to compare
    two systems at, not a threshold to ship. Returns (abstained, out of scope, answerable abstained)."""
    best = (0, 0, 0.0)
    for threshold in np.linspace(0.0, 0.9, 91):
        trial = copy.copy(searcher)
        trial.weights = replace(searcher.weights, answer_threshold=float(threshold))
        report = evaluate(_search(trial), queries)
        if report.overall.false_abstention > most:
            break
        best = (report.abstained, report.out_of_scope, report.overall.false_abstention)
    return best


def _split(searcher: Searcher, test: list[EvalQuery]) -> dict[str, dict[str, float]]:
    """The test split's answerable questions by whether their entry has learned questions."""
    taught = {int(o) for o in searcher.learned.owners if o >= 0}
    groups: dict[str, list[EvalQuery]] = {"entry has learned questions": [], "entry has none": []}
    for q in test:
        if not q.answerable:
            continue
        positions = [i for i, e in enumerate(searcher.entries) if is_expected(e, q.expect)]
        groups["entry has learned questions" if any(p in taught for p in positions) else "entry has none"].append(q)
    out = {}
    for name, queries in groups.items():
        report = evaluate(_search(searcher), queries)
        out[name] = {"questions": len(queries), "R@1": report.overall.recall_at_1, "MRR@10": report.overall.mrr_at_10}
    return out


def _hubs(searcher: Searcher, outside: list[EvalQuery]) -> tuple[list[tuple[str, int]], list[str]]:
    """The entries that come first most often for out-of-scope questions, and which FAR questions are answered."""
    firsts: collections.Counter[str] = collections.Counter()
    search = _search(searcher)
    for q in outside:
        result = search(q.q, 1)
        if result.hits:
            firsts[result.hits[0].entry.question[:60]] += 1
    answered = [q for q in FAR if search(q, 1).answered]
    return firsts.most_common(5), answered


def _prepared(dev: list[EvalQuery], adapted: bool, weighed: Searcher) -> Callable[[Searcher], Searcher]:
    """What makes a taught searcher ready to measure: an adapter fitted on what it learned (and
    dev), or none; the weights of the system measured."""

    def prepare(searcher: Searcher) -> Searcher:
        searcher = searcher.with_adapter(None)
        if adapted:
            examples = examples_of(searcher, [("dev.jsonl", dev)])
            searcher = searcher.with_adapter(fit(searcher, examples, FitSettings()))
        searcher.weights = weighed.weights
        return searcher

    return prepare


def run(quick: bool = False) -> list[Row]:
    results, tune_seconds = measured(quick)
    report(results, quick)
    if not quick:
        save(results)
    return figures(results, tune_seconds)


def measured(quick: bool) -> tuple[dict[str, dict], float]:
    """Each system's figures (without the adapter, with it) on every set, and the seconds a refit took."""
    orders = 1 if quick else ORDERS
    sets = {name: load_queries(DATA / f"{name}.jsonl") for name in ("dev", "holdout", "real_tune", "real_test")}
    fitted_on = sets["dev"] + sets["holdout"] + sets["real_tune"]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
        if kb.searcher.adapter is None:
            raise SystemExit(
                "the index has no query adapter: run `kb ingest` (the shipped FAQs carry one) or `kb tune`"
            )
        started = time.perf_counter()
        tune(kb.searcher, (), kb.searcher.adapter)  # what a refit from the insights page does
        tune_seconds = time.perf_counter() - started
        systems = {
            "without": _weighed(kb.searcher.with_adapter(None), fitted_on),
            "with": _weighed(kb.searcher, fitted_on),
        }
        outside = [q for name in ("dev", "holdout", "real_tune", "real_test") for q in sets[name] if not q.answerable]
        for name, searcher in systems.items():
            results[name] = {
                "sets": {s: _figures(searcher, sets[s]) for s in ("real_test", "holdout", "dev")},
                "at 5%": at_false_abstention(searcher, sets["real_test"]),
                "split": _split(searcher, sets["real_test"]),
                "hubs": _hubs(searcher, outside),
            }
        teacher = Teacher(kb, sets["real_tune"] + sets["real_test"])
        for name, adapted in (("without", False), ("with", True)):
            results[name]["curve"] = tune_to_test(
                teacher, sets["real_tune"], sets["real_test"], orders, _prepared(sets["dev"], adapted, systems[name])
            )
    return results, tune_seconds


def report(results: dict[str, dict], quick: bool) -> None:
    """The tables: the whole search, abstention at 5%, learned or not, hubs, and the learning curve."""
    print("\nthe whole search, each with its own calibration:")
    lines = []
    for s in ("real_test", "holdout", "dev"):
        for name in ("without", "with"):
            f = results[name]["sets"][s]
            lines.append(
                (
                    s,
                    name,
                    f"{f['R@1']:.3f}",
                    f"{f['R@3']:.3f}",
                    f"{f['MRR@10']:.3f}",
                    f"{f['out of scope abstained']} / {f['out of scope']}",
                    f"{f['answerable abstained']:.1%}",
                )
            )
    print(table(lines, ("set", "adapter", "R@1", "R@3", "MRR@10", "out of scope abstained", "answerable abstained")))
    print("\nreal_test's out-of-scope questions abstained where at most 5% of its answerable ones are:")
    for name in ("without", "with"):
        abstained, outside, false = results[name]["at 5%"]
        print(f"- {name}: {abstained} / {outside} (answerable abstained {false:.1%})")
    print("\nreal_test's answerable questions by whether their entry has learned questions:")
    print(
        table(
            [
                (
                    group,
                    name,
                    str(results[name]["split"][group]["questions"]),
                    f"{results[name]['split'][group]['R@1']:.3f}",
                    f"{results[name]['split'][group]['MRR@10']:.3f}",
                )
                for group in results["with"]["split"]
                for name in ("without", "with")
            ],
            ("group", "adapter", "questions", "R@1", "MRR@10"),
        )
    )
    print(
        "\nentries first most often for the out-of-scope questions of all four sets, and questions far from any entry answered:"
    )
    for name in ("without", "with"):
        hubs, answered = results[name]["hubs"]
        print(
            f"- {name}: " + "; ".join(f"{q!r} {n}" for q, n in hubs) + f"; far questions answered: {answered or 'none'}"
        )
    print(f"\nthe learning curve on real_test ({ORDERS if not quick else 1} orders of the tune split per share):")
    metrics = ("R@1", "MRR@10", "out of scope abstained", "answerable abstained")
    print(
        table(
            [
                (f"{100 * s:.0f}%", name, *(f"{results[name]['curve'][s][m][0]:.3f}" for m in metrics))
                for s in SHARES
                for name in ("without", "with")
            ],
            ("linked", "adapter", *metrics),
        )
    )


def figures(results: dict[str, dict], tune_seconds: float) -> list[Row]:
    rows = []
    test_with, test_without = results["with"]["sets"]["real_test"], results["without"]["sets"]["real_test"]
    rows.append(
        Row(
            "real_test R@1 with the adapter",
            f"{test_with['R@1']:.3f} (without: {test_without['R@1']:.3f})",
            ">= 0.80",
            test_with["R@1"] >= 0.80,
        )
    )
    rows.append(
        Row(
            "real_test MRR@10 with the adapter",
            f"{test_with['MRR@10']:.3f} (without: {test_without['MRR@10']:.3f})",
            ">= 0.86",
            test_with["MRR@10"] >= 0.86,
        )
    )
    rows.append(Row("refitting the shipped adapter", f"{tune_seconds:.1f} s", "< 120 s", tune_seconds < 120))
    return rows


def save(results: dict[str, dict]) -> None:
    """The figures written to bench/adapter.json."""
    (ROOT / "bench" / "adapter.json").write_text(
        json.dumps(
            {n: {**r, "curve": {str(s): c for s, c in r["curve"].items()}} for n, r in results.items()},
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main(run, __doc__)
