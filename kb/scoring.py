"""How the evidence for an entry is weighed, and when the best entry is good enough to answer with.

The weights and the abstention model are fitted by `kb calibrate` (k-fold cross-validation
over labelled questions) and stored in kb/data/calibration.json.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

__all__ = ["ANSWER_FEATURES", "CALIBRATION_PATH", "Features", "Weights"]

CALIBRATION_PATH = Path(__file__).resolve().parent / "data" / "calibration.json"
# The abstention model's inputs, in order (see `Features.of_best`).
ANSWER_FEATURES = ("score", "gap", "coverage", "question", "other_framework", "dense_margin", "zh")


@dataclass(frozen=True)
class Weights:
    """How the evidence is weighed, and when the best entry is good enough to answer with.

    Written by `kb calibrate` (k-fold cross-validation over labelled questions) into
    kb/data/calibration.json; these defaults are only for a missing file.
    """

    question: float = 0.05  # share of the query found in the entry's question
    coverage: float = 0.20  # share of the query found anywhere in the entry
    framework: float = 0.05  # the query names the entry's framework ("slime OOM")
    hub: float = 0.0  # how much of an entry's similarity to text at large is taken off (hubness)
    # A logistic model over ANSWER_FEATURES of the best hit: answer when it gives >= threshold.
    answer_coef: tuple[float, ...] = (40.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.8)
    answer_bias: float = -2.4
    answer_threshold: float = 0.5

    @classmethod
    def load(cls, path: Path = CALIBRATION_PATH) -> "Weights":
        if not path.exists():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))["weights"]
        data["answer_coef"] = tuple(data["answer_coef"])
        return cls(**data)

    def to_dict(self) -> dict:
        return {**asdict(self), "answer_coef": list(self.answer_coef)}

    def answer_probability(self, x: np.ndarray) -> np.ndarray:
        """P(answerable) for rows of ANSWER_FEATURES."""
        z = np.asarray(x, dtype=np.float64) @ np.asarray(self.answer_coef) + self.answer_bias
        return 1.0 / (1.0 + np.exp(-z))


@dataclass(frozen=True)
class Features:
    """The evidence for some entries against one query, as arrays over those entries."""

    cosine: np.ndarray  # best of the entry's vectors · query
    background: float  # what general-domain sentences score for this query
    coverage: np.ndarray  # share of the query's weight this entry contains
    question: np.ndarray  # share of the query's weight this entry's question contains
    named: np.ndarray  # the query names this entry's framework
    framework: str | None  # the corpus framework the query names, if any
    hub: np.ndarray  # the entry's typical similarity to text at large

    def score(self, w: Weights) -> np.ndarray:
        return (
            (self.cosine - self.background)
            - w.hub * self.hub
            + w.question * self.question
            + w.coverage * self.coverage
            + w.framework * self.named
        )

    def of_best(self, score: np.ndarray, order: np.ndarray, zh: bool) -> np.ndarray:
        """ANSWER_FEATURES of the best entry (`order[0]`), given the scores."""
        best = order[0]
        second = score[order[1]] if len(order) > 1 else score[best] - 0.1
        return np.array([
            score[best],
            score[best] - second,
            self.coverage[best],
            self.question[best],
            float(self.framework is not None and not self.named[best]),
            self.cosine[best] - self.background,
            float(zh),
        ])
