"""Fitting the search to labelled questions: the evidence weights and when to answer, by
k-fold cross-validation, reporting only what the held-out folds score.

Each question is searched once; its evidence against every entry is kept, so any weights
can be tried without searching again. Per fold: the ranking weights (a conditional logit model:
an entry's chance of being the one that answers is a softmax of its weighted evidence, fitted
to the training folds' answerable questions), then the confidence: a logistic model of "the
first hit answers" over the best hit's signals (kb.scoring), fitted to the real questions when
there are enough of them. The figures reported are those of the held-out folds, pooled; the
confidence's held-out curve (kb.confidence) turns a channel's precision into a threshold. The
weights written are fitted on all the questions.

With a judge (kb/judge/), the same is done again over each question's first-stage candidates
(the best `DEPTH` under the weights just fitted), the judge's scores of the first `top` of
them one more column of both models; both sets of figures are reported side by side. The
lead of the first stage's best entry over its second above which the judge changed no
held-out outcome is written as `skip_gap`: the search does not ask the judge there.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .confidence import LIKELY_PRECISION, OperatingCurve, floor_of
from .cross_validation import collect, cross_validate
from .errors import TooFewQuestions
from .evaluate import EvalQuery
from .fitting import Labelled, confidence_set, fit, right_first, signal_ranges
from .folds import grouped_fold, repository
from .judge import Judge
from .judge_weights import judge_report
from .scoring import ANSWER_FEATURES, CALIBRATION_PATH, DEFAULT_PRECISION, RANK_FEATURES, Weights
from .search import Searcher

__all__ = [
    "PRECISIONS",
    "calibrate",
    "check_questions",
    "issue_block",
    "operating_points",
    "question_ranges",
    "write_calibration",
]

# The cosines between two questions tried as `Weights.alternate_floor` and `not_covered_floor`.
FLOORS = (0.88, 0.9, 0.92, 0.94, 0.96)


def calibrate(
    searcher: Searcher,
    queries: Sequence[EvalQuery],
    folds: int = 5,
    fitted: Sequence[str] = RANK_FEATURES,
    judge: Judge | None = None,
    top: int = 10,
    signals: Sequence[str] | None = None,
) -> tuple[Weights, dict[str, Any]]:
    """Weights fitted on all `queries`, and the figures of a `folds`-fold cross-validation.
    Only the `fitted` ones of RANK_FEATURES are weighed; the others get 0. The confidence weighs
    `signals` (default: ANSWER_FEATURES). With a `judge` reading the first `top`
    candidates, the report's `judge` holds its weights and figures.

    The floors above which a learned question counts as the same question are chosen by
    the same cross-validation: the pair whose held-out folds put the right entry first most
    often and whose confidence best tells a right first hit from a wrong one (AUROC).

    The confidence is cross-validated twice: on folds by question (`cross_validated`) and on
    folds by repository (`grouped`: each fold's questions searched with no question of their
    repositories learned, what a tracker the knowledge base has never seen meets). Its
    operating points are read off the grouped folds' held-out curve."""
    check_questions(queries)
    start = replace(searcher.weights, signals=tuple(signals or ANSWER_FEATURES))
    start = replace(start, answer_coef=(0.0,) * len(start.signals), answer_bias=0.0)
    questions = collect(searcher, queries, folds)
    base, report = _best_floors(questions, start, folds, fitted)
    grouped_questions = collect(searcher, queries, folds, grouped_fold)
    grouped = cross_validate(grouped_questions, base, folds, fitted, grouped_fold)
    report["grouped"] = {
        "folds": folds,
        "repositories": len({repository(q.query) for q in grouped_questions if q.query.url}),
        "cross_validated": grouped["cross_validated"],
        "confidence": grouped["confidence"],
    }
    # The query adapter the evidence was taken through (each fold's refitted without it), if any.
    report["query_adapter"] = searcher.adapter.summary() if searcher.adapter is not None else None
    curve = grouped.pop("curve")
    weights = fit(questions, base, fitted)
    weights = replace(weights, curve=curve, answer_threshold=curve.threshold(DEFAULT_PRECISION))
    weights, report["likely_floor"] = _likely_floor(weights, grouped_questions, grouped.pop("confidences"))
    report["operating_points"] = operating_points(curve)
    report.pop("curve", None)
    if judge is not None:
        report["judge"] = judge_report(searcher, questions, weights, report.pop("outcomes"), folds, fitted, judge, top)
    report.pop("outcomes", None)
    report.pop("confidences", None)
    return weights, report


def _best_floors(
    questions: list[Labelled], start: Weights, folds: int, fitted: Sequence[str]
) -> tuple[Weights, dict[str, Any]]:
    """The pair of FLOORS whose held-out folds (by question) score best, R@1 plus the confidence's
    AUROC: those weights, and that cross-validation's report."""
    trials = []
    for alternate_floor in FLOORS:
        for not_covered_floor in FLOORS:
            base = replace(start, alternate_floor=alternate_floor, not_covered_floor=not_covered_floor)
            report = cross_validate(questions, base, folds, fitted)
            merit = report["cross_validated"]["overall"]["recall_at_1"] + (report["confidence"]["auroc"] or 0.0)
            trials.append((merit, alternate_floor, not_covered_floor, base, report))
    _, alternate_floor, not_covered_floor, base, report = max(trials, key=lambda t: t[0])
    report["floors"] = {"alternate": alternate_floor, "not_covered": not_covered_floor, "tried": list(FLOORS)}
    return base, report


def _likely_floor(weights: Weights, questions: list[Labelled], held: np.ndarray) -> tuple[Weights, dict[str, Any]]:
    """`weights` with the floor of "may answer" (the held-out curve's threshold for precision 0.5,
    never above the default point's), and how many out-of-scope questions (held out by repository,
    their confidences `held`) lie below it."""
    outside = np.array([not q.query.answerable for q in questions], dtype=bool)
    floor = min(floor_of(weights.curve), weights.answer_threshold)
    return replace(weights, floor=floor), {
        "floor": floor,
        "precision": LIKELY_PRECISION,
        "out_of_scope": int(outside.sum()),
        "below": int((held[outside] < floor).sum()),
        "answerable_above": int((held[~outside] >= floor).sum()),
        "answerable": int((~outside).sum()),
    }


# The precisions whose threshold and held-out coverage `kb calibrate` reports and writes.
PRECISIONS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


def operating_points(curve: OperatingCurve) -> list[dict[str, float]]:
    """For each of PRECISIONS: its threshold and the held-out precision and coverage that gives."""
    rows = []
    for precision in PRECISIONS:
        threshold = curve.threshold(precision)
        got, coverage = curve.at(threshold)
        rows.append({"precision": precision, "threshold": threshold, "held_out_precision": got, "coverage": coverage})
    return rows


def check_questions(queries: Sequence[EvalQuery]) -> None:
    """Raise TooFewQuestions when `queries` can fit nothing: the ranking and the answer
    threshold are fitted to answerable questions. Short of that each model is fitted as far
    as the questions go (`_fit`): without out-of-scope questions, the answer model of the
    calibration in use is kept and only its threshold fitted."""
    if not any(q.answerable for q in queries):
        count = f"{len(queries)} question{'s' if len(queries) != 1 else ''}"
        raise TooFewQuestions(
            f"{count}, none with an answer",
            "at least 1 answerable question is needed to fit the ranking",
            "add questions the FAQ answers, each with the entry that answers it in `expect`",
        )


def question_ranges(searcher: Searcher, queries: Sequence[EvalQuery], weights: Weights, folds: int = 5) -> Weights:
    """`weights` (kept as they are) with the range of each confidence signal over the questions of `queries` the
    confidence is fitted on (`kb.fitting.confidence_set`), each searched with its own fold held out: the ranges a
    refit would keep, for a calibration written before ranges were."""
    questions = collect(searcher, queries, folds)
    chosen = confidence_set(questions, right_first(questions, weights))
    return replace(weights, ranges=signal_ranges([q for q, c in zip(questions, chosen) if c], weights))


def issue_block(issues: Weights, report: dict[str, Any], source: str) -> dict[str, Any]:
    """What a calibration file keeps of the whole-issue confidence (`kb.issue_confidence`): its weights, the file it
    was fitted on, its held-out figures and operating points."""
    return {
        "questions": [source],
        "weights": issues.to_dict(),
        **report,
        "operating_points": operating_points(issues.curve),
    }


def write_calibration(
    weights: Weights, report: dict[str, Any], sources: Sequence[str], path: Path = CALIBRATION_PATH
) -> None:
    report = {name: value for name, value in report.items() if name not in ("outcomes", "curve", "confidences")}
    data = {
        "about": "Written by `kb calibrate`; figures are those of held-out folds only.",
        "questions": list(sources),
        "answer_features": list(weights.signals),
        "weights": weights.to_dict(),
        **report,
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
