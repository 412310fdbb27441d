"""Confidence: how likely the first hit is to answer, and the operating points a channel answers at.

`kb calibrate` fits the confidence (a logistic model over the best hit's evidence, `kb.scoring`)
to "the first hit answers" on held-out folds, and keeps the held-out curve: for each threshold,
the precision of the answers it gives (how many of the questions at or above it had the right
entry first) and their coverage (the share of all questions answered). A channel names a
precision (`KB_ANSWER_PRECISION`, `KB_CHANNEL_PRECISION`); `OperatingCurve.threshold` turns it
into the lowest threshold whose held-out answers were at least that precise, with a margin for
the noise of a precision measured on a few hundred questions.

Below a channel's point, the floor (`floor_of`) tells "the first hit may answer" from "not covered":
the held-out curve's threshold for precision 0.5, under which most questions the FAQ does not cover lie.

The figures of a curve (AUROC, coverage at a precision, the reliability by bin) are computed
here for `kb calibrate`, `kb eval` and the benchmarks alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence, Union

import numpy as np

__all__ = [
    "MIN_ANSWERED",
    "NEVER",
    "OperatingCurve",
    "auroc",
    "coverage_at",
    "curve_points",
    "floor_of",
    "lower_bound",
    "reliability",
    "summary",
]

Values = Union[Sequence[float], Sequence[bool], np.ndarray]  # a list or an array of numbers, or of booleans

# The fewest answers a threshold must give before its precision counts: the first few answers'
# precision is too noisy to choose a threshold by.
MIN_ANSWERED = 10
# The threshold of a precision no held-out threshold reached: above every confidence, so nothing is answered.
NEVER = 1.01


def curve_points(confidence: Values, right: Values) -> tuple[tuple[float, float, float], ...]:
    """(threshold, precision, coverage) at each distinct confidence, highest first: of the questions
    whose confidence is at least the threshold, the share whose first hit was right, and their
    share of all questions."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(right, dtype=bool)
    if not len(c):
        return ()
    order = np.argsort(-c, kind="stable")
    c, y = c[order], y[order]
    answered = np.arange(1, len(c) + 1)
    precision = np.cumsum(y) / answered
    last = np.flatnonzero(np.append(c[1:] != c[:-1], True))  # the last question of each distinct confidence
    return tuple(
        (round(float(c[i]), 6), round(float(precision[i]), 4), round(float(answered[i] / len(c)), 4)) for i in last
    )


@dataclass(frozen=True)
class OperatingCurve:
    """A held-out curve of (threshold, precision, coverage), highest threshold first, and how many questions it holds."""

    points: tuple[tuple[float, float, float], ...] = ()
    questions: int = 0

    @classmethod
    def of(cls, confidence: Values, right: Values) -> "OperatingCurve":
        return cls(curve_points(confidence, right), len(confidence))

    def threshold(self, precision: float) -> float:
        """The lowest threshold whose held-out answers (at least MIN_ANSWERED of them) were at least
        `precision` precise, counting their precision at its lower bound (`lower_bound`): a threshold
        chosen on these questions should keep its promise on new ones. NEVER when none was."""
        if precision <= 0:
            return 0.0
        found = NEVER
        for threshold, p, coverage in self.points:
            answered = round(coverage * self.questions)
            if answered >= min(MIN_ANSWERED, self.questions) and lower_bound(p, answered) >= precision:
                found = threshold
        return found

    def at(self, threshold: float) -> tuple[float, float]:
        """(precision, coverage) of the held-out answers at `threshold` ((1.0, 0.0) when none reaches it)."""
        reached = [(p, coverage) for t, p, coverage in self.points if t >= threshold]
        return reached[-1] if reached else (1.0, 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "points": [list(p) for p in self.points]}

    @classmethod
    def of_dict(cls, data: dict[str, Any]) -> "OperatingCurve":
        points = tuple((float(t), float(p), float(c)) for t, p, c in data["points"])
        return cls(points, int(data["questions"]))


# How many standard errors below a held-out precision an operating point counts it (Wilson's score
# interval, one-sided: the true precision is above this bound about 84 times in 100).
BOUND_Z = 1.0


def lower_bound(precision: float, answered: int, z: float = BOUND_Z) -> float:
    """Wilson's lower bound of a precision measured on `answered` answers."""
    if answered <= 0:
        return 0.0
    n, z2 = answered, z * z
    centre = precision + z2 / (2 * n)
    spread = z * math.sqrt(precision * (1 - precision) / n + z2 / (4 * n * n))
    return (centre - spread) / (1 + z2 / n)


def auroc(confidence: Values, right: Values) -> float:
    """The chance that a right first hit is more confident than a wrong one (ties count half); NaN with one kind only."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(right, dtype=bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if not positives or not negatives:
        return float("nan")
    order = np.argsort(c, kind="stable")
    _, first, counts = np.unique(c[order], return_index=True, return_counts=True)
    ranks = np.empty(len(c))
    ranks[order] = np.repeat(first + (counts + 1) / 2, counts)  # 1-based, ties sharing their mean rank
    return float((ranks[y].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def coverage_at(confidence: Values, right: Values, precision: float) -> float:
    """The largest share of the questions answered, most confident first, whose answers are at
    least `precision` precise (at least MIN_ANSWERED of them; 0.0 when none)."""
    curve = OperatingCurve.of(confidence, right)
    return next(
        (c for t, p, c in reversed(curve.points) if p >= precision and c * curve.questions >= MIN_ANSWERED), 0.0
    )


def reliability(confidence: Values, right: Values, bins: int = 10) -> list[dict[str, Any]]:
    """Per confidence bin ([0, 0.1), ..., [0.9, 1.0]): how many questions, their mean confidence, the share right."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(right, dtype=bool)
    which = np.minimum((c * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        members = which == b
        n = int(members.sum())
        rows.append(
            {
                "bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}",
                "questions": n,
                "confidence": round(float(c[members].mean()), 3) if n else None,
                "right": round(float(y[members].mean()), 3) if n else None,
            }
        )
    return rows


def summary(confidence: Values, right: Values) -> dict[str, Any]:
    """AUROC, coverage at precision 0.8 and 0.9, and the expected calibration error (by ten bins)."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(right, dtype=bool)
    bins = reliability(c, y)
    error = sum(row["questions"] * abs(row["confidence"] - row["right"]) for row in bins if row["questions"])
    value = auroc(c, y)
    return {
        "questions": len(c),
        "right_first": int(y.sum()),
        "auroc": None if np.isnan(value) else round(value, 4),
        "coverage_at_0.8": round(coverage_at(c, y, 0.8), 4),
        "coverage_at_0.9": round(coverage_at(c, y, 0.9), 4),
        "calibration_error": round(error / len(c), 4) if len(c) else None,
    }


# The precision of the floor of "may answer": above it, the held-out answers were right at least
# this often (at their lower bound, as every operating point): more likely right than wrong.
LIKELY_PRECISION = 0.5


def floor_of(curve: OperatingCurve) -> float:
    """The floor of "may answer" on a held-out curve: the threshold of LIKELY_PRECISION. Above it
    the first hit may answer; below it lie the questions the FAQ does not cover, and the first
    hits right less than half the time."""
    return curve.threshold(LIKELY_PRECISION)
