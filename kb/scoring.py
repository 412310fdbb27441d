"""How the evidence for an entry is weighed, and when the best entry is good enough to answer with.

An entry's score is a weighted sum of its evidence (`RANK_FEATURES`); the weights and the
abstention model are fitted by `kb calibrate` (k-fold cross-validation over labelled
questions) and stored in kb/data/calibration.json.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

__all__ = ["ANSWER_FEATURES", "CALIBRATION_PATH", "RANK_FEATURES", "Features", "Weights"]

log = logging.getLogger(__name__)

CALIBRATION_PATH = Path(__file__).resolve().parent / "data" / "calibration.json"
# An entry's evidence, in the order of `Weights.rank_coef` (see `Features.matrix`):
# - dense: its best vector's cosine with the query, minus what general text scores for the query;
# - coverage, question: the share of the query's words in the whole entry, in its question alone;
# - named: the query names the entry's framework ("slime OOM");
# - length: how long the entry is (log of its distinct words, centred on the corpus): a long
#   entry (a traceback, many config lines) shares some words and meaning with almost anything.
# - alternate: how far the query's cosine with the nearest of the entry's alternate questions
#   rises above `Weights.alternate_floor`; two questions compare higher than a question and
#   a passage, and most pairs of questions of this field reach 0.85, so only what rises
#   above the floor says "the same question".
RANK_FEATURES = ("dense", "coverage", "question", "named", "length", "alternate")
# The abstention model's inputs, in order (see `Features.of_best`): the best entry's evidence,
# and not_covered: how far the nearest question the FAQ is known not to cover rises above
# both `Weights.not_covered_floor` and the best entry's nearest alternate (two cosines of
# questions, on one scale).
ANSWER_FEATURES = (
    "score", "gap", "coverage", "question", "other_framework", "dense_margin", "zh", "alternate", "not_covered",
)


@dataclass(frozen=True)
class Weights:
    """How the evidence is weighed, and when the best entry is good enough to answer with.

    Written by `kb calibrate` into kb/data/calibration.json; these defaults are only for a
    missing file (the dense margin, with a little lexical evidence).
    """

    rank_coef: tuple[float, ...] = (1.0, 0.2, 0.05, 0.05, 0.0, 1.0)
    # A logistic model over ANSWER_FEATURES of the best hit: answer when it gives >= threshold.
    answer_coef: tuple[float, ...] = (40.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.8, 40.0, -40.0)
    answer_bias: float = -2.4
    answer_threshold: float = 0.5
    # Cosines between two questions above which they count as the same question, chosen by
    # cross-validation in `kb calibrate`.
    alternate_floor: float = 0.9
    not_covered_floor: float = 0.9

    @classmethod
    def load(cls, path: Path = CALIBRATION_PATH) -> "Weights":
        if not path.exists():
            return cls()
        raw = json.loads(path.read_text(encoding="utf-8"))
        data = raw["weights"]
        if data.get("rank_features") != list(RANK_FEATURES) or raw.get("answer_features") != list(ANSWER_FEATURES):
            log.warning("%s weighs other evidence than this ranking; using default weights until `kb calibrate` runs", path)
            return cls()
        return cls(
            rank_coef=tuple(data["rank_coef"]), answer_coef=tuple(data["answer_coef"]),
            answer_bias=data["answer_bias"], answer_threshold=data["answer_threshold"],
            alternate_floor=data["alternate_floor"], not_covered_floor=data["not_covered_floor"],
        )

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "rank_features": list(RANK_FEATURES),
            "rank_coef": list(self.rank_coef),
            "answer_coef": list(self.answer_coef),
        }

    def answer_probability(self, x: np.ndarray) -> np.ndarray:
        """P(answerable) for rows of ANSWER_FEATURES."""
        z = np.asarray(x, dtype=np.float64) @ np.asarray(self.answer_coef) + self.answer_bias
        return 1.0 / (1.0 + np.exp(-z))


@dataclass(frozen=True)
class Features:
    """The evidence for some entries against one query, as arrays over those entries."""

    cosine: np.ndarray  # best of the entry's own vectors · query
    background: float  # what general-domain sentences score for this query
    coverage: np.ndarray  # share of the query's weight this entry contains
    question: np.ndarray  # share of the query's weight this entry's question contains
    named: np.ndarray  # the query names this entry's framework
    framework: str | None  # the corpus framework the query names, if any
    length: np.ndarray  # the entry's length (log of its distinct words, centred)
    alternate: np.ndarray | None = None  # best of the entry's alternates · query (-1: it has none)
    not_covered: float = -1.0  # the nearest not-covered question's cosine with the query (-1: none)

    def above(self, floor: float) -> np.ndarray:
        """The `alternate` feature: how far each entry's best alternate rises above `floor`."""
        if self.alternate is None:
            return np.zeros(len(self.cosine))
        return np.maximum(self.alternate - floor, 0.0)

    def best_alternate(self, i: int) -> float:
        """The cosine of entry i's nearest alternate with the query (-1: none)."""
        return float(self.alternate[i]) if self.alternate is not None else -1.0

    def matrix(self, w: Weights) -> np.ndarray:
        """RANK_FEATURES, a row per entry."""
        return np.stack([
            self.cosine - self.background,
            self.coverage,
            self.question,
            self.named.astype(np.float64),
            self.length,
            self.above(w.alternate_floor),
        ], axis=1)

    def score(self, w: Weights) -> np.ndarray:
        return self.matrix(w) @ np.asarray(w.rank_coef)

    def of_best(self, score: np.ndarray, order: np.ndarray, zh: bool, w: Weights) -> np.ndarray:
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
            self.above(w.alternate_floor)[best],
            max(self.not_covered - max(self.best_alternate(best), w.not_covered_floor), 0.0),
        ])
