"""Judge weights: both models fitted again with a second-stage judge's score as one more column,
over each labelled question's first-stage candidates, and the lead above which the judge is not asked.

Each question's candidates are the best `DEPTH` under the first stage's weights; the judge reads
the first `top` of them. The figures are the held-out folds', the first stage's outcome standing
for a question the judge gave no verdict on. The lead of the first stage's best entry over its
second above which the judge changed no held-out outcome is `skip_gap`: the search does not ask
the judge there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from .cross_validation import cross_validate, figures
from .errors import JudgeFailed
from .evaluate import DEPTH
from .fitting import Labelled, fit
from .judge import Judge
from .scoring import DEFAULT_PRECISION, JUDGE, Weights
from .search import Searcher

__all__ = ["judge_report"]


def _no_verdict(judge: Judge, failures: list[JudgeFailed]) -> JudgeFailed:
    """The error for a judge that gave no usable verdict on any question: its failures by kind, the first's message."""
    kinds = {kind: sum(f.kind == kind for f in failures) for kind in JudgeFailed.KINDS}
    counts = ", ".join(f"{kind}: {n}" for kind, n in kinds.items() if n)
    settings = "KB_RERANK_MODEL" if judge.kind == "cross-encoder" else "KB_LLM_BASE_URL, KB_LLM_MODEL"
    return JudgeFailed(
        max(kinds, key=lambda kind: kinds[kind]),
        f"{judge.kind} {judge.model!r} gave no usable verdict on any of the {len(failures)} questions ({counts}; "
        f"the first: {failures[0].message}): there is nothing to weigh its score on; check {settings} "
        "and KB_RERANK_TIMEOUT",
    )


def _judged(
    searcher: Searcher, questions: list[Labelled], weights: Weights, judge: Judge, top: int
) -> tuple[list[Labelled | None], list[float], list[JudgeFailed]]:
    """Each question's first-stage candidates with the judge's score of each (None where the judge
    failed), the first stage's lead of its best entry over its second, and the judge's failures."""
    judged: list[Labelled | None] = []
    failures: list[JudgeFailed] = []
    gaps = []
    for q in questions:
        score = q.features.score(weights)
        order = np.argsort(-score, kind="stable")
        gaps.append(float(score[order[0]] - score[order[1]]) if len(order) > 1 else float("inf"))
        rows = order[: max(top, DEPTH)]
        candidates = [searcher.entries[int(r)].localized(q.lang) for r in rows[:top]]
        try:
            scores = judge.scores(q.text, candidates)
        except Exception as exc:  # as in the search: the first stage's outcome stands
            failed = exc if isinstance(exc, JudgeFailed) else JudgeFailed("error", f"{type(exc).__name__}: {exc}")
            failures.append(failed)
            judged.append(None)
            continue
        column = np.zeros(len(rows))
        column[: len(scores)] = scores
        judged.append(
            Labelled(q.query, replace(q.features.take(rows), judge=column), q.correct[rows], q.zh, q.text, q.lang)
        )
    return judged, gaps, failures


def judge_report(
    searcher: Searcher,
    questions: list[Labelled],
    weights: Weights,
    plain: tuple[list[int | None], list[bool]],
    folds: int,
    fitted: Sequence[str],
    judge: Judge,
    top: int,
) -> dict[str, Any]:
    """The judged weights, fitted and cross-validated over each question's first-stage candidates
    with the judge's scores; the gap from which it is skipped, and the figures with it."""
    judged, gaps, failures = _judged(searcher, questions, weights, judge, top)
    kept = [i for i, q in enumerate(judged) if q is not None]
    kept_questions = [q for q in judged if q is not None]  # judged[i] for i in kept
    if questions and not kept_questions:
        raise _no_verdict(judge, failures)
    base = weights.with_judge()
    names = (*fitted, JUDGE)
    report = cross_validate(kept_questions, base, folds, names)
    curve = report.pop("curve")
    ranks, answered = list(plain[0]), list(plain[1])
    changed = []
    for i, rank, said in zip(kept, *report.pop("outcomes")):
        if (rank, said) != (ranks[i], answered[i]):
            changed.append(i)
        ranks[i], answered[i] = rank, said
    # Above the widest lead at which the judge changed an outcome, it changed none: skip it there.
    skip_gap = max((gaps[i] for i in changed), default=0.0) + 1e-6
    final = fit(kept_questions, base, names)
    final = replace(final, curve=curve, answer_threshold=curve.threshold(DEFAULT_PRECISION))
    return {
        "kind": judge.kind,
        "model": judge.model,
        "top": top,
        "questions": len(questions),
        "failed": len(questions) - len(kept),
        "skip_gap": round(skip_gap, 6),
        "skipped": int(sum(gaps[i] >= skip_gap for i in kept)),
        "changed": len(changed),
        "cross_validated": figures(questions, ranks, answered),
        "fold_weights": report["fold_weights"],
        "weights": final.to_dict(),
    }
