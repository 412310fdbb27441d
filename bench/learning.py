"""How the knowledge base improves with use: retrieval on real questions as links are added.

Two curves, on the real questions collected from the frameworks' issue trackers
(tests/data/real_tune.jsonl and real_test.jsonl, each with its URL):

- **tune -> test**: the test split measured with none, 25%, 50% and 100% of the tune
  split's questions learned (each answerable one as an alternate of its entry, each
  out-of-scope one as not covered, exactly as `tools/ship_links.py` ships them), five
  random orders each: the mean and the spread (min-max) over the orders;
- **cross-validated**: all the real questions in five folds; each fold measured with the
  same shares of the other four folds' questions learned.

In both, a learned question within cosine NEAR_TEST (0.95) of a measured one is left out,
as the shipped files leave out tune questions near the test split: the same error posted
twice would otherwise be measured as its own alternate.

What is learned replaces what the shipped index learned from its files (the tune split),
so 0% is the knowledge base as it would be without any link. The ranking and answer
weights are the shipped calibration's (fitted by `kb calibrate` on dev, holdout and the tune
split, each question as if its own fold had not been linked); the cross-validated curve's
folds that hold tune questions were seen by that fit, which is why the tune -> test curve
is the one to quote. Writes a Markdown table, `bench/learning.json` and `bench/learning.png`.

    python bench/learning.py            # about two minutes on 2 cores
    python bench/learning.py --quick    # one order per share
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main, ready_settings, table  # noqa: E402

from kb.evaluate import EvalQuery, evaluate, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.learning import LearnedQuestion  # noqa: E402
from kb.learning.overlay import Learned  # noqa: E402
from kb.search import Searcher, searched_text  # noqa: E402
from kb.text import question_key  # noqa: E402
from tools.ship_links import NEAR_TEST, learned_from  # noqa: E402

DATA = ROOT / "tests" / "data"
SHARES = (0.0, 0.25, 0.5, 1.0)
ORDERS = 5
FOLDS = 5
METRICS = ("R@1", "MRR@10", "out of scope abstained", "answerable abstained")


def measure(searcher: Searcher, queries: Sequence[EvalQuery]) -> dict[str, float]:
    """The four figures of `queries` on `searcher`."""

    def search(q: str, k: int):
        plan = searcher.plan(q, k)
        return searcher.rank(plan, searcher.embedder.embed_query(plan.embed_text))

    report = evaluate(search, list(queries))
    return {
        "R@1": report.overall.recall_at_1,
        "MRR@10": report.overall.mrr_at_10,
        "out of scope abstained": report.abstained / report.out_of_scope if report.out_of_scope else 0.0,
        "answerable abstained": report.overall.false_abstention,
    }


class Teacher:
    """Real questions as learned questions, embedded once, taught to a searcher in any share."""

    def __init__(self, kb: KnowledgeBase, queries: Sequence[EvalQuery]):
        # The shipped query adapter learned from the tune split too: the learned questions alone are measured here
        # (bench/adapter.py measures an adapter fitted on each share).
        self.base = kb.searcher.with_learned(Learned.empty(kb.searcher.dense.dim)).with_adapter(None)
        urls = {q.id: q.url for q in queries}
        self.by_query: dict[str, list[LearnedQuestion]] = {q.id: learned_from([q], kb.entries, urls) for q in queries}
        texts = sorted({searched_text(lq.question) for found in self.by_query.values() for lq in found})
        vectors = kb.searcher.embedder.embed_queries(texts)
        self.vector = dict(zip(texts, vectors))
        asked = kb.searcher.embedder.embed_queries([searched_text(q.q) for q in queries])
        self.query_vector = {q.id: v for q, v in zip(queries, asked)}
        self.positions = kb.position
        self.dim = kb.searcher.dense.dim

    def searcher(self, taught: Sequence[EvalQuery], measured: Sequence[EvalQuery]) -> Searcher:
        """The searcher taught the questions `taught`, but those within NEAR_TEST of one of
        `measured` (as tools/ship_links.py leaves them out of what is shipped)."""
        found = [lq for q in taught for lq in self.by_query[q.id]]
        vectors = np.array([self.vector[searched_text(lq.question)] for lq in found]).reshape(len(found), self.dim)
        asked = np.array([self.query_vector[q.id] for q in measured]).reshape(len(measured), self.dim)
        far = (vectors @ asked.T).max(axis=1, initial=-1.0) < NEAR_TEST if len(found) else np.zeros(0, bool)
        kept = [lq for lq, ok in zip(found, far) if ok]
        return self.base.with_learned(Learned.of(kept, vectors[far], self.positions, self.dim))


def summarize(samples: list[dict[str, float]]) -> dict[str, tuple[float, float, float]]:
    return {
        m: (statistics.mean(s[m] for s in samples), min(s[m] for s in samples), max(s[m] for s in samples))
        for m in METRICS
    }


def tune_to_test(
    teacher: Teacher,
    tune: list[EvalQuery],
    test: list[EvalQuery],
    orders: int,
    prepare: Callable[[Searcher], Searcher] = lambda searcher: searcher,
) -> dict[float, dict]:
    """The test split measured with each share of the tune split learned (`orders` random orders
    of it), each searcher made ready by `prepare` first (bench/adapter.py fits an adapter there)."""
    curve = {}
    for share in SHARES:
        samples = []
        for seed in range(orders if 0 < share < 1 else 1):
            order = tune[:]
            random.Random(seed).shuffle(order)
            samples.append(measure(prepare(teacher.searcher(order[: round(share * len(order))], test)), test))
        curve[share] = summarize(samples)
    return curve


def cross_validated(teacher: Teacher, real: list[EvalQuery], orders: int) -> dict[float, dict]:
    folds = [real[i::FOLDS] for i in range(FOLDS)]
    curve = {}
    for share in SHARES:
        samples = []
        for seed in range(orders if 0 < share < 1 else 1):
            per_fold = []
            for k, fold in enumerate(folds):
                others = [q for j, f in enumerate(folds) if j != k for q in f]
                # a question asked twice (the same words in two folds) is learned only from its own fold
                own = {question_key(q.q) for q in fold}
                others = [q for q in others if question_key(q.q) not in own]
                random.Random(seed * 100 + k).shuffle(others)
                per_fold.append(
                    (len(fold), measure(teacher.searcher(others[: round(share * len(others))], fold), fold))
                )
            samples.append(_pooled(per_fold, folds))
        curve[share] = summarize(samples)
    return curve


def _pooled(per_fold: list[tuple[int, dict[str, float]]], folds: list[list[EvalQuery]]) -> dict[str, float]:
    """The folds' figures pooled over their questions (answerable or out of scope, as each figure counts)."""
    answerable = [sum(q.answerable for q in f) for f in folds]
    outside = [sum(not q.answerable for q in f) for f in folds]
    pooled = {}
    for metric in METRICS:
        weights = outside if metric == "out of scope abstained" else answerable
        pooled[metric] = sum(w * figures[metric] for w, (_, figures) in zip(weights, per_fold)) / max(sum(weights), 1)
    return pooled


def plot(curves: dict[str, dict[float, dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (title, curve) in zip(axes, curves.items()):
        x = [100 * s for s in SHARES]
        for metric, style in zip(METRICS, ("o-", "s-", "^--", "v:")):
            mean = [curve[s][metric][0] for s in SHARES]
            low = [curve[s][metric][1] for s in SHARES]
            high = [curve[s][metric][2] for s in SHARES]
            ax.plot(x, mean, style, label=metric)
            ax.fill_between(x, low, high, alpha=0.15)
        ax.set_title(title)
        ax.set_xlabel("share of the other real questions linked (%)")
        ax.set_xticks(x)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of questions")
    axes[1].legend(loc="center right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def run(quick: bool = False) -> list[Row]:
    orders = 1 if quick else ORDERS
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
        tune, test = load_queries(DATA / "real_tune.jsonl"), load_queries(DATA / "real_test.jsonl")
        teacher = Teacher(kb, tune + test)
        curves = {
            "tune split linked, test split measured": tune_to_test(teacher, tune, test, orders),
            "cross-validated, all real questions": cross_validated(teacher, tune + test, orders),
        }
    rows = []
    for title, curve in curves.items():
        print(f"\n{title} ({len(test) if title.startswith('tune') else len(tune) + len(test)} questions):")
        print(
            table(
                [
                    (
                        f"{100 * s:.0f}%",
                        *(f"{curve[s][m][0]:.3f} ({curve[s][m][1]:.3f}-{curve[s][m][2]:.3f})" for m in METRICS),
                    )
                    for s in SHARES
                ],
                ("linked", *METRICS),
            )
        )
        full = curve[1.0]
        rows.append(
            Row(
                f"{title}: R@1 with all linked",
                f"{full['R@1'][0]:.3f} (none: {curve[0.0]['R@1'][0]:.3f})",
                ">= 0.82",
                full["R@1"][0] >= 0.82 if title.startswith("tune") else None,
            )
        )
    if not quick:
        (ROOT / "bench" / "learning.json").write_text(
            json.dumps({t: {str(s): c[s] for s in SHARES} for t, c in curves.items()}, indent=2) + "\n",
            encoding="utf-8",
        )
        plot(curves, ROOT / "bench" / "learning.png")
    return rows


if __name__ == "__main__":
    main(run, __doc__)
