"""The confidence of a whole issue: an answer model fitted on issues read as the GitHub bot reads them.

A question (an issue's title, a chat message, a pasted error) and a whole issue (its title, then
what its body asks: `kb.issue_question.question_of`) are different inputs: an issue's body adds
words, code and logs whether or not the first entry answers it, so a confidence fitted on titles
reads every issue as surer than it is. Whole issues get their own: the same ranking (the
question calibration's weights), an answer model over the signals that separate right first hits
from wrong ones on whole issues, chosen and measured on folds by repository, its held-out curve
(which turns a channel's precision into a threshold) and its floor of "may answer".

Every signal is held within the range it took on the issues fitted on (`Weights.ranges`): no
issue longer, or more alike an entry, than those moves the confidence further.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from .confidence import OperatingCurve, floor_of, summary
from .cross_validation import collect
from .evaluate import EvalQuery
from .fitting import Labelled, answer_rows, right_first, signal_ranges, signed_logistic
from .folds import grouped_fold, repository
from .scoring import DEFAULT_PRECISION, SIGNALS, Weights
from .search import Searcher

__all__ = ["fit_issue_confidence", "held_out", "CANDIDATE_SIGNALS", "MIN_GAIN"]

# The signals the whole-issue model may weigh: every signal but the query's language (the same
# entry answers an issue in either language).
CANDIDATE_SIGNALS = tuple(name for name in SIGNALS if name != "zh")
# A signal joins the model only when it raises the held-out AUROC by at least this much.
MIN_GAIN = 0.005


def held_out(
    questions: list[Labelled], right: np.ndarray, weights: Weights, signals: Sequence[str], folds: int
) -> np.ndarray:
    """Each question's confidence from an answer model over `signals` fitted without its fold (by repository), its
    signals held within the range of the folds it was fitted on."""
    w = replace(weights, signals=tuple(signals), answer_coef=(0.0,) * len(signals), answer_bias=0.0, ranges=())
    rows = answer_rows(questions, w)
    parts = np.array([grouped_fold(q.query, folds) for q in questions])
    confidence = np.zeros(len(questions))
    for part in range(folds):
        train, test = parts != part, parts == part
        if not test.any():
            continue
        if len(set(right[train])) < 2:
            confidence[test] = float(right[train].mean()) if train.any() else 0.0
            continue
        coef, bias = signed_logistic(rows[train], right[train].astype(float), signals)
        ranges = tuple(zip(rows[train].min(0), rows[train].max(0)))
        fitted = replace(w, answer_coef=tuple(coef), answer_bias=bias, ranges=ranges)
        confidence[test] = fitted.answer_probability(rows[test])
    return confidence


def _auroc(confidence: np.ndarray, right: np.ndarray) -> float:
    value = summary(confidence, right)["auroc"]
    return float(value) if value is not None else 0.0


def _chosen(
    questions: list[Labelled], right: np.ndarray, weights: Weights, folds: int
) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """The signals, added one at a time while the held-out AUROC rises by MIN_GAIN or more; and each step."""
    chosen: list[str] = []
    best = 0.5
    steps = []
    while True:
        trials = [
            (_auroc(held_out(questions, right, weights, [*chosen, name], folds), right), name)
            for name in CANDIDATE_SIGNALS
            if name not in chosen
        ]
        if not trials:
            break
        score, name = max(trials)
        if score < best + MIN_GAIN:
            break
        chosen.append(name)
        best = score
        steps.append({"signal": name, "auroc": round(score, 4)})
    return tuple(chosen), steps


def fit_issue_confidence(
    searcher: Searcher,
    issues: Sequence[EvalQuery],
    weights: Weights,
    folds: int = 5,
    signals: Sequence[str] | None = None,
) -> tuple[Weights, dict[str, Any]]:
    """The confidence of whole issues (`issues`, each `q` the question the bot builds): `weights`' ranking, an answer
    model over `signals` (default: chosen by held-out AUROC, folds by repository) fitted on every issue, the held-out
    curve and its thresholds, the floor, the signals' ranges; and the held-out figures."""
    questions = collect(searcher, issues, folds, grouped_fold)
    right = right_first(questions, weights)
    steps: list[dict[str, Any]] = []
    if signals is None:
        signals, steps = _chosen(questions, right, weights, folds)
    signals = tuple(signals) or weights.signals
    confidence = held_out(questions, right, weights, signals, folds)
    curve = OperatingCurve.of(confidence, right)
    w = replace(weights, signals=signals, answer_coef=(0.0,) * len(signals), answer_bias=0.0, ranges=())
    coef, bias = signed_logistic(answer_rows(questions, w), right.astype(float), signals)
    w = replace(
        w,
        answer_coef=tuple(round(float(c), 6) for c in coef),
        answer_bias=round(bias, 6),
        curve=curve,
        answer_threshold=curve.threshold(DEFAULT_PRECISION),
        ranges=signal_ranges(questions, w),
    )
    w = replace(w, floor=min(floor_of(curve), w.answer_threshold))
    report = {
        "folds": folds,
        "issues": len(questions),
        "covered": sum(q.query.answerable for q in questions),
        "repositories": len({repository(q.query) for q in questions}),
        "right_first": int(right.sum()),
        "confidence": summary(confidence, right),
        "signals_chosen": steps,
    }
    return w, report
