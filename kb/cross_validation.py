"""Cross-validation of the search on labelled questions: each question's evidence collected with
its own fold held out, both models fitted without each fold, and the figures of the held-out folds.

Learned questions among the queries are learned only from the other folds, and a query adapter
is refitted without them, so a question is measured as if its own fold had never been linked.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .confidence import OperatingCurve, reliability, summary
from .evaluate import DEPTH, EvalQuery, is_expected
from .fitting import Labelled, answer_rows, confidence_set, fit, right_ranks
from .folds import FoldOf, fold
from .scoring import DEFAULT_PRECISION, Weights
from .search import Searcher
from .text import question_key
from .tuning import refit_without

__all__ = ["collect", "cross_validate", "figures"]


def collect(
    searcher: Searcher, queries: Sequence[EvalQuery], folds: int, fold_of: FoldOf | None = None
) -> list[Labelled]:
    """Each question's evidence against every entry. Learned questions that are among the
    queries are learned only from the other folds: a question is measured as if its own
    fold had never been linked (as the shipped tune split's questions are; a whole issue's title with
    it, as a new issue's title was never learned). So is the query
    adapter, when there is one: each fold's questions are searched through an adapter fitted
    the same way without them."""
    fold_of = fold_of or fold
    ids = np.arange(len(searcher.entries))
    found: list[Labelled | None] = [None] * len(queries)
    for part in range(folds):
        members = [i for i, query in enumerate(queries) if fold_of(query, folds) == part]
        held = {question_key(text) for i in members for text in (queries[i].q, queries[i].title) if text}
        view = searcher.with_learned(searcher.learned.without(held))
        if searcher.adapter is not None and searcher.adapter.examples is not None:
            view = view.with_adapter(refit_without(searcher, searcher.adapter, held))
        for i in members:
            query = queries[i]
            plan = view.plan(query.q, k=DEPTH)
            vector = view.embedder.embed_query(plan.embed_text)
            features = view.features(view.query_terms(plan), vector, ids)
            correct = (
                np.array([is_expected(e, query.expect) for e in view.entries])
                if query.answerable
                else np.zeros(len(ids), bool)
            )
            found[i] = Labelled(query, features, correct, plan.query_lang == "zh", plan.text, plan.query_lang)
    return [q for q in found if q is not None]


def figures(questions: list[Labelled], ranks: list[int | None], answered: list[bool]) -> dict[str, Any]:
    def block(members: list[int]) -> dict[str, Any]:
        n = len(members)
        found = [ranks[i] for i in members]
        return {
            "queries": n,
            "recall_at_1": round(sum(r == 1 for r in found) / n, 4) if n else 0.0,
            "recall_at_3": round(sum(r is not None and r <= 3 for r in found) / n, 4) if n else 0.0,
            "mrr_at_10": round(sum(1 / r for r in found if r) / n, 4) if n else 0.0,
            "false_abstention": round(sum(not answered[i] for i in members) / n, 4) if n else 0.0,
        }

    answerable = [i for i, q in enumerate(questions) if q.query.answerable]
    outside = [i for i, q in enumerate(questions) if not q.query.answerable]
    langs = sorted({questions[i].query.lang for i in answerable})
    return {
        "overall": block(answerable),
        "by_lang": {lang: block([i for i in answerable if questions[i].query.lang == lang]) for lang in langs},
        "out_of_scope": {"queries": len(outside), "abstained": sum(not answered[i] for i in outside)},
    }


def cross_validate(
    questions: list[Labelled], base: Weights, folds: int, fitted: Sequence[str], fold_of: FoldOf | None = None
) -> dict[str, Any]:
    """Each question ranked and its confidence taken by weights fitted without its fold; the figures of
    the held-out folds, the confidence's curve (over the questions it is fitted to, `kb.fitting.confidence_set`),
    and whether each was answered at the curve's threshold for DEFAULT_PRECISION."""
    fold_of = fold_of or fold
    ranks: list[int | None] = [None] * len(questions)
    confidence = np.zeros(len(questions))
    chosen = []
    for part in range(folds):
        train = [q for q in questions if fold_of(q.query, folds) != part]
        test = [i for i, q in enumerate(questions) if fold_of(q.query, folds) == part]
        w = fit(train, base, fitted)
        chosen.append(dict(zip(w.rank_features, w.rank_coef)))
        held = [questions[i] for i in test]
        for i, rank, p in zip(test, right_ranks(held, w), w.answer_probability(answer_rows(held, w))):
            ranks[i], confidence[i] = rank, float(p)
    right = np.array([r == 1 for r in ranks], dtype=bool)
    measured = confidence_set(questions, right)
    curve = OperatingCurve.of(confidence[measured], right[measured])
    threshold = curve.threshold(DEFAULT_PRECISION)
    answered = [bool(p >= threshold) for p in confidence]
    return {
        "folds": folds,
        "cross_validated": figures(questions, ranks, answered),
        "confidence": {
            **summary(confidence[measured], right[measured]),
            "of": "real questions" if not measured.all() else "every question",
            "reliability": reliability(confidence[measured], right[measured]),
        },
        "curve": curve,
        "fold_weights": chosen,
        "outcomes": (ranks, answered),  # each question's, held out; not written
        "confidences": confidence,  # each question's, held out; not written
    }
