"""How the evidence for an entry is weighed, and when the best entry is good enough to answer with.

An entry's score is a weighted sum of its evidence (`RANK_FEATURES`); the weights and the
abstention model are fitted by `kb calibrate` (k-fold cross-validation over labelled
questions) and stored in kb/data/calibration.json (or where KB_CALIBRATION says).

With a second-stage judge (kb/judge/), its score of an entry is one more column (`JUDGE`)
of both models: a calibration fitted with a judge holds a second set of weights that weigh
it, used on the first stage's candidates once the judge has read them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .confidence import OperatingCurve, floor_of
from .errors import CalibrationError

__all__ = [
    "ANSWER_FEATURES",
    "CALIBRATION_PATH",
    "DEFAULT_PRECISION",
    "JUDGE",
    "RANK_FEATURES",
    "SIGNALS",
    "Calibration",
    "Features",
    "Weights",
]

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
# The signals of the best hit a confidence model may weigh (see `Features.signals`):
# - score: its score, without the lift of a named framework; gap: its lead over the second;
# - coverage, question: the share of the query's words in the whole entry, in its question;
# - other_framework: the query names a framework and the best entry is another's;
# - named_match: the query names a framework and the best entry is that framework's;
# - dense_margin: its cosine above what general text scores; cosine: its cosine as it is;
# - zh: the query is Chinese; words: how many words the query has (log);
# - share: its share of the softmax over the candidates' scores (the ranking model's own
#   chance that it, and not another, is the answer);
# - alternate: how far its nearest alternate question rises above `Weights.alternate_floor`;
#   nearest_alternate: that alternate's cosine as it is (from NEAR up; below, no evidence);
# - not_covered: how far the nearest question the FAQ is known not to cover rises above both
#   `Weights.not_covered_floor` and the best entry's nearest alternate.
SIGNALS = (
    "score",
    "gap",
    "coverage",
    "question",
    "other_framework",
    "named_match",
    "dense_margin",
    "cosine",
    "zh",
    "words",
    "share",
    "alternate",
    "nearest_alternate",
    "not_covered",
)
NEAR = 0.7  # two questions of this field below this cosine say nothing of being the same question
# The confidence model's inputs, in order: the signals kept because they separated right first
# hits from wrong ones on repository-grouped held-out folds (docs/retrieval.md#confidence).
ANSWER_FEATURES = ("gap", "nearest_alternate", "words")
# The precision a search answers at when no channel names one (KB_ANSWER_PRECISION's default).
DEFAULT_PRECISION = 0.8
# The judge's score of an entry, in [0, 1] (0 for an entry it did not read): the last column of
# both models in weights fitted with a judge.
JUDGE = "judge"


@dataclass(frozen=True)
class Weights:
    """How the evidence is weighed, and when the best entry is good enough to answer with.

    Written by `kb calibrate` into kb/data/calibration.json; these defaults are only for a
    missing file (the dense margin, with a little lexical evidence).
    """

    rank_coef: tuple[float, ...] = (1.0, 0.2, 0.05, 0.05, 0.0, 1.0)
    # The confidence: a logistic model over `signals` of the best hit, the chance that it answers.
    answer_coef: tuple[float, ...] = (0.29, 12.8, 0.6)
    answer_bias: float = -12.5
    # The threshold of the calibration's default precision (DEFAULT_PRECISION), and the held-out
    # curve that turns any other precision into a threshold.
    answer_threshold: float = 0.65
    signals: tuple[str, ...] = ANSWER_FEATURES
    curve: OperatingCurve = field(default_factory=OperatingCurve, compare=False)
    # Cosines between two questions above which they count as the same question, chosen by
    # cross-validation in `kb calibrate`.
    alternate_floor: float = 0.9
    not_covered_floor: float = 0.9
    # The confidence below which a search says the FAQ does not cover the question; between it and
    # a channel's operating point, the first hit "may answer". Fitted by `kb calibrate`: the held-out
    # curve's threshold for precision 0.5 (`kb.confidence.floor_of`).
    floor: float = 0.185
    # The range of each of `signals` over the questions the confidence was fitted on: a signal is held within
    # it, so the confidence never extrapolates (a 180-word issue read by a model fitted on 1 to 29 words). Empty:
    # unbounded (a calibration written before ranges were kept).
    ranges: tuple[tuple[float, float], ...] = ()

    @classmethod
    def load(cls, path: Path = CALIBRATION_PATH) -> "Weights":
        """The first stage's weights of a calibration (the defaults when there is none)."""
        return Calibration.load(path).weights

    @classmethod
    def of_dict(cls, data: dict[str, Any]) -> "Weights":
        weights = cls(
            rank_coef=tuple(data["rank_coef"]),
            answer_coef=tuple(data["answer_coef"]),
            answer_bias=data["answer_bias"],
            answer_threshold=data["answer_threshold"],
            alternate_floor=data["alternate_floor"],
            not_covered_floor=data["not_covered_floor"],
            signals=tuple(data["signals"]),
            curve=OperatingCurve.of_dict(data["curve"]) if data.get("curve") else OperatingCurve(),
            ranges=tuple((float(low), float(high)) for low, high in data.get("ranges", ())),
        )
        # A calibration written before the floor: the floor its curve gives (`kb.confidence.floor_of`).
        floor = float(data["floor"]) if "floor" in data else min(floor_of(weights.curve), weights.answer_threshold)
        return replace(weights, floor=floor) if weights.curve.points else weights

    @property
    def judged(self) -> bool:
        """Whether these weights weigh a judge's score (the last column of both models)."""
        return len(self.rank_coef) > len(RANK_FEATURES)

    def with_judge(self) -> "Weights":
        """These weights with a judge column, weighed 0 until fitted."""
        return (
            self
            if self.judged
            else replace(self, rank_coef=(*self.rank_coef, 0.0), answer_coef=(*self.answer_coef, 0.0))
        )

    @property
    def rank_features(self) -> tuple[str, ...]:
        return RANK_FEATURES + ((JUDGE,) if self.judged else ())

    @property
    def answer_features(self) -> tuple[str, ...]:
        return self.signals + ((JUDGE,) if self.judged else ())

    def threshold(self, precision: float | None) -> float:
        """The confidence to answer at: the held-out curve's threshold for `precision` (None: the
        calibration's default); without a curve, `answer_threshold`."""
        if precision is None or not self.curve.points:
            return self.answer_threshold
        return self.curve.threshold(precision)

    def to_dict(self) -> dict[str, Any]:
        data = {name: value for name, value in asdict(self).items() if name != "curve"}
        return {
            **data,
            "rank_features": list(self.rank_features),
            "rank_coef": list(self.rank_coef),
            "answer_coef": list(self.answer_coef),
            "signals": list(self.signals),
            "curve": self.curve.to_dict(),
        }

    def answer_probability(self, x: np.ndarray) -> np.ndarray:
        """The confidence that the best hit answers, for rows of `answer_features` (each signal held within its
        fitted range)."""
        x = np.array(x, dtype=np.float64, ndmin=2)
        if self.ranges:
            low, high = np.asarray(self.ranges, dtype=np.float64).T
            x[:, : len(self.ranges)] = np.clip(x[:, : len(self.ranges)], low, high)
        z = x @ np.asarray(self.answer_coef) + self.answer_bias
        probability: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * z))  # 1 / (1 + e^-z), without overflow far out
        return probability


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
    judge: np.ndarray | None = None  # the judge's score of each entry (None: no judge read them)
    words: int = 0  # how many words the query has (groups of its lexical terms)

    def take(self, rows: np.ndarray) -> "Features":
        """The evidence for some of these entries, in the order of `rows`."""

        def part(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[rows]

        return replace(
            self,
            cosine=self.cosine[rows],
            coverage=self.coverage[rows],
            question=self.question[rows],
            named=self.named[rows],
            length=self.length[rows],
            alternate=part(self.alternate),
            judge=part(self.judge),
        )

    def _judge(self) -> np.ndarray:
        return self.judge if self.judge is not None else np.zeros(len(self.cosine))

    def above(self, floor: float) -> np.ndarray:
        """The `alternate` feature: how far each entry's best alternate rises above `floor`."""
        if self.alternate is None:
            return np.zeros(len(self.cosine))
        return np.maximum(self.alternate - floor, 0.0)

    def no_evidence(self, i: int, w: Weights) -> bool:
        """Whether nothing speaks for entry i: it shares no word with the query, the query is no
        nearer to it than general text is, and none of its alternates comes near. Such an entry
        is never an answer, whatever the answer model makes of its lead over the others."""
        return bool(
            self.coverage[i] <= 0 and self.cosine[i] <= self.background and self.above(w.alternate_floor)[i] <= 0
        )

    def best_alternate(self, i: int) -> float:
        """The cosine of entry i's nearest alternate with the query (-1: none)."""
        return float(self.alternate[i]) if self.alternate is not None else -1.0

    def matrix(self, w: Weights) -> np.ndarray:
        """`w.rank_features`, a row per entry."""
        columns = [
            self.cosine - self.background,
            self.coverage,
            self.question,
            self.named.astype(np.float64),
            self.length,
            self.above(w.alternate_floor),
        ]
        return np.stack(columns + ([self._judge()] if w.judged else []), axis=1)

    def score(self, w: Weights) -> np.ndarray:
        score: np.ndarray = self.matrix(w) @ np.asarray(w.rank_coef)
        return score

    def of_best(self, score: np.ndarray, order: np.ndarray, zh: bool, w: Weights) -> np.ndarray:
        """`w.answer_features` of the best entry (`order[0]`), given the scores."""
        signals = self.signals(score, order, zh, w)
        judge = [float(self._judge()[order[0]])] if w.judged else []
        return np.array([signals[name] for name in w.signals] + judge)

    def signals(self, score: np.ndarray, order: np.ndarray, zh: bool, w: Weights) -> dict[str, float]:
        """Every one of SIGNALS for the best entry (`order[0]`), given the scores."""
        best = order[0]
        second = score[order[1]] if len(order) > 1 else score[best] - 0.1
        # Naming a framework lifts its entries over the others' but says nothing of whether one
        # answers ("the best pizza in Naples, ROLL?"): the confidence reads the score without it.
        named = float(self.named[best]) * w.rank_coef[RANK_FEATURES.index("named")]
        top = score.max()
        share = 1.0 / float(np.exp(score - top).sum())  # the best's share of the softmax (its own term is 1)
        nearest = self.best_alternate(best)
        return {
            "score": float(score[best] - named),
            "gap": float(score[best] - second),
            "coverage": float(self.coverage[best]),
            "question": float(self.question[best]),
            "other_framework": float(self.framework is not None and not self.named[best]),
            "named_match": float(self.framework is not None and bool(self.named[best])),
            "dense_margin": float(self.cosine[best] - self.background),
            "cosine": float(self.cosine[best]),
            "zh": float(zh),
            "words": float(np.log1p(self.words)),
            "share": share,
            "alternate": float(self.above(w.alternate_floor)[best]),
            "nearest_alternate": max(nearest, NEAR),
            "not_covered": max(self.not_covered - max(nearest, w.not_covered_floor), 0.0),
        }


@dataclass(frozen=True)
class Calibration:
    """What `kb calibrate` wrote: the first stage's weights and, when fitted with a judge, the
    weights that also weigh its score, which judge that was, and the first stage's lead over
    its second entry from which the judge is not asked (it changed no outcome there)."""

    weights: Weights
    path: Path = CALIBRATION_PATH
    judged: Weights | None = None
    # The confidence of a whole issue (its title and body, as the GitHub bot reads it), fitted on whole issues: the
    # same ranking, its own answer model, curve and floor (None: the questions' own is used).
    issues: Weights | None = None
    judge: str = ""  # "cross-encoder" or "llm"
    judge_model: str = ""  # the cross-encoder's name or path, or the LLM's model name
    skip_gap: float = float("inf")

    @classmethod
    def load(cls, path: Path = CALIBRATION_PATH) -> "Calibration":
        """The calibration in `path` (default weights when there is none); CalibrationError
        naming the file and what is wrong when it cannot be read or is not one."""
        if not path.exists():
            return cls(Weights(), path)
        rewrite = "run `kb calibrate` to write it again, or point KB_CALIBRATION at another file"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CalibrationError(
                path, f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); {rewrite}"
            ) from None
        except UnicodeDecodeError as exc:
            raise CalibrationError(path, f"not UTF-8 ({exc.reason} at byte {exc.start}); {rewrite}") from None
        except OSError as exc:
            raise CalibrationError(path, f"cannot be read ({exc.strerror or exc})") from None
        try:
            return cls._of_json(raw, path)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise CalibrationError(path, f"not a calibration written by `kb calibrate` ({what}); {rewrite}") from None

    @classmethod
    def _of_json(cls, raw: Any, path: Path) -> "Calibration":
        if not isinstance(raw, dict) or not isinstance(raw.get("weights"), dict):
            raise ValueError("no weights object")
        data = raw["weights"]
        if data.get("rank_features") != list(RANK_FEATURES) or not set(data.get("signals", ["?"])) <= set(SIGNALS):
            log.warning(
                "%s weighs other evidence than this ranking; using default weights until `kb calibrate` runs", path
            )
            return cls(Weights(), path)
        weights = _checked(Weights.of_dict(data), judged=False)
        issues = _checked(Weights.of_dict(raw["issues"]["weights"]), judged=False) if raw.get("issues") else None
        judge = raw.get("judge")
        if not judge:
            return cls(weights, path, issues=issues)
        skip = judge.get("skip_gap")
        return cls(
            weights,
            path,
            _checked(Weights.of_dict(judge["weights"]), judged=True),
            issues,
            str(judge["kind"]),
            str(judge["model"]),
            float("inf") if skip is None else float(skip),
        )

    def check(self, judge: str, judge_model: str) -> None:
        """Raise CalibrationError, naming the setting, when the judge configured (`judge`:
        "cross-encoder", "llm" or "") is not the kind this calibration was fitted with."""
        setting = {"cross-encoder": "KB_RERANK_MODEL", "llm": "KB_RERANK"}
        if self.judge and self.judge != judge:
            wanted = f"KB_RERANK_MODEL={self.judge_model}" if self.judge == "cross-encoder" else "KB_RERANK=llm"
            raise CalibrationError(
                self.path,
                f"fitted with the {self.judge} judge {self.judge_model!r}, which is not configured: set "
                f"{wanted}, or point KB_CALIBRATION at a calibration fitted without a judge",
            )
        if judge and not self.judge:
            raise CalibrationError(
                self.path,
                f"weighs no judge, but {setting[judge]} is set: run `kb calibrate FILE... --output PATH` "
                f"with it set and KB_CALIBRATION=PATH, or unset {setting[judge]}",
            )
        if judge and judge_model != self.judge_model:
            log.warning("%s was fitted with the judge %r; %r judges now", self.path, self.judge_model, judge_model)


def _checked(weights: Weights, judged: bool) -> Weights:
    """`weights`, when they have a coefficient for each feature (and the judge's when `judged`)."""
    extra = 1 if judged else 0
    for name, coef, features in (
        ("rank_coef", weights.rank_coef, RANK_FEATURES),
        ("answer_coef", weights.answer_coef, weights.signals),
    ):
        if len(coef) != len(features) + extra or not all(isinstance(c, (int, float)) for c in coef):
            raise ValueError(f"{name} holds {len(coef)} values, not {len(features) + extra} numbers")
    return weights
