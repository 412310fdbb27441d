"""Fitting: the ranking's conditional logit and the confidence's logistic model, on labelled
questions' evidence against every entry.

The ranking weights make the entry that answers a question likely under a softmax of the
entries' weighted evidence; the confidence is a logistic model of "the first hit answers" over
the best hit's signals (kb.scoring), each weight of the sign its evidence allows. A set that
cannot fit a model keeps the weights it started from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .evaluate import DEPTH, EvalQuery
from .scoring import JUDGE, RANK_FEATURES, Features, Weights

__all__ = [
    "ANSWER_SIGNS",
    "MIN_REAL_EACH",
    "Labelled",
    "answer_rows",
    "best_ranking",
    "confidence_set",
    "fit",
    "logistic",
    "right_ranks",
    "right_first",
    "signed_logistic",
    "signal_ranges",
]
L2 = 1.0  # ridge penalty of both models, on standardised features


@dataclass
class Labelled:
    """A labelled question's evidence against every entry, and which entries answer it."""

    query: EvalQuery
    features: Features  # against every entry
    correct: np.ndarray  # which entries answer it
    zh: bool
    text: str = ""  # what was searched (what a judge reads)
    lang: str = "en"


def right_ranks(questions: list[Labelled], w: Weights) -> list[int | None]:
    """Each question's rank of its first right entry under `w` (None when none is in the first DEPTH)."""
    found: list[int | None] = []
    for q in questions:
        order = np.argsort(-q.features.score(w), kind="stable")[:DEPTH]
        hit = np.flatnonzero(q.correct[order])
        found.append(int(hit[0]) + 1 if len(hit) else None)
    return found


def _standardised(questions: list[Labelled], fitted: np.ndarray, w: Weights) -> tuple[list[np.ndarray], np.ndarray]:
    matrices = [q.features.matrix(w) for q in questions]
    scale = np.concatenate(matrices).std(axis=0) if matrices else np.ones(len(w.rank_features))
    scale = np.where((scale > 0) & fitted, scale, np.inf)  # an unfitted or constant feature weighs 0
    return [m / scale for m in matrices], scale


def best_ranking(questions: list[Labelled], base: Weights, fitted: Sequence[str] = RANK_FEATURES) -> Weights:
    """Ranking weights by a conditional logit over the answerable questions: maximise the
    log of the softmax share the correct entries get, with a ridge penalty. Damped Newton."""
    answerable = [q for q in questions if q.query.answerable and q.correct.any()]
    if not answerable:
        return base
    names = base.rank_features
    mask = np.array([name in fitted for name in names])
    matrices, scale = _standardised(answerable, mask, base)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        loss, gradient, hessian = L2 * w @ w, 2 * L2 * w, 2 * L2 * np.eye(len(w))
        for z, q in zip(matrices, answerable):
            s = z @ w
            s -= s.max()
            p = np.exp(s)
            total = p.sum()
            p /= total
            # The correct entries' share, in logs: a trial step far out would round it to 0.
            sc = s[q.correct]
            top = sc.max()
            pc = np.exp(sc - top)
            mean = p @ z
            mean_correct = (pc @ z[q.correct]) / pc.sum()
            loss -= top + np.log(pc.sum()) - np.log(total)
            gradient += mean - mean_correct
            centred = z - mean
            hessian += (centred * p[:, None]).T @ centred  # the softmax's Fisher information
        return loss, gradient, hessian

    w = np.zeros(len(names))
    loss, gradient, hessian = objective(w)
    for _ in range(100):
        step = np.linalg.solve(hessian, gradient)
        rate = 1.0
        while rate > 1e-4:
            trial = objective(w - rate * step)
            if trial[0] <= loss:
                break
            rate /= 2
        else:
            break
        w = w - rate * step
        converged = loss - trial[0] < 1e-9
        loss, gradient, hessian = trial
        if converged:
            break
    coef = w / scale
    if "alternate" in fitted and coef[names.index("alternate")] < 0:
        # An alternate is evidence for its own entry or none: never against it.
        return best_ranking(questions, base, [name for name in fitted if name != "alternate"])
    return replace(base, rank_coef=tuple(round(float(c), 6) for c in coef))


def answer_rows(questions: list[Labelled], w: Weights) -> np.ndarray:
    rows = [np.zeros((0, len(w.answer_features)))]  # no questions: no rows, as many columns
    for q in questions:
        score = q.features.score(w)
        rows.append(q.features.of_best(score, np.argsort(-score, kind="stable"), q.zh, w)[None, :])
    return np.concatenate(rows)


def signal_ranges(questions: list[Labelled], weights: Weights) -> tuple[tuple[float, float], ...]:
    """The range (lowest, highest) of each of `weights.signals` over `questions`' best hits."""
    rows = answer_rows(questions, weights)[:, : len(weights.signals)]
    if not len(rows):
        return ()
    return tuple((round(float(low), 6), round(float(high), 6)) for low, high in zip(rows.min(0), rows.max(0)))


def logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Ridge logistic regression by Newton's method; coefficients in the features' own units."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    beta = np.zeros(z.shape[1])
    penalty = np.diag([L2] * (z.shape[1] - 1) + [0.0])
    for _ in range(50):
        p = 0.5 * (1 + np.tanh(0.5 * (z @ beta)))  # the logistic function, without overflow far out
        gradient = z.T @ (p - y) + penalty @ beta
        hessian = z.T @ (z * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    coef = beta[:-1] / scale
    return coef, float(beta[-1] - coef @ mean)


# Evidence for the best entry never counts against its confidence, and a near not-covered
# question never for it: a signal whose fitted weight has the wrong sign is left out and the
# model fitted again (real out-of-scope questions share words and meaning with the entries as
# much as answerable ones do, so a free fit can learn that more of either means less likely
# right, and then answers "the best pizza in Naples, ROLL?").
ANSWER_SIGNS = {
    "score": 1,
    "gap": 1,
    "coverage": 1,
    "question": 1,
    "named_match": 1,
    "dense_margin": 1,
    "cosine": 1,
    "share": 1,
    "alternate": 1,
    "nearest_alternate": 1,
    "not_covered": -1,
    JUDGE: 1,
}
# The confidence is fitted to real questions alone (those with a `url`: asked in a tracker) when
# a set holds at least this many first hits right and as many wrong: written questions are easier
# and worded like the entries, and a model fitted to both is surer than real questions bear out.
MIN_REAL_EACH = 30


def signed_logistic(x: np.ndarray, y: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, float]:
    """`logistic`, leaving out each feature whose weight takes the wrong sign (ANSWER_SIGNS)."""
    signs = np.array([ANSWER_SIGNS.get(name, 0) for name in names])
    kept = np.ones(len(names), bool)
    while True:
        coef, bias = logistic(np.where(kept, x, 0.0), y)
        wrong = kept & (coef * signs < 0)
        if not wrong.any():
            return np.where(kept, coef, 0.0), bias
        kept &= ~wrong


def right_first(questions: list[Labelled], w: Weights) -> np.ndarray:
    """Whether each question's first hit under `w` answers it (never, for an out-of-scope question)."""
    return np.array([r == 1 for r in right_ranks(questions, w)], dtype=bool)


def confidence_set(questions: list[Labelled], right: np.ndarray) -> np.ndarray:
    """Which questions the confidence is fitted to and measured on: the real ones (with a `url`)
    when MIN_REAL_EACH of them had the right first hit and as many the wrong one, else all."""
    real = np.array([bool(q.query.url) for q in questions], dtype=bool)
    if min(int((right & real).sum()), int((~right & real).sum())) >= MIN_REAL_EACH:
        return real
    return np.ones(len(questions), dtype=bool)


def fit(questions: list[Labelled], base: Weights, fitted: Sequence[str] = RANK_FEATURES) -> Weights:
    """The ranking and the confidence, each fitted when `questions` can tell it anything: without
    answerable questions the ranking is `base`'s, and without first hits both right and wrong the
    confidence is. The threshold is the caller's: it comes from held-out folds (`kb.calibrate`)."""
    w = best_ranking(questions, base, fitted)
    right = right_first(questions, w)
    chosen = confidence_set(questions, right)
    y = right[chosen].astype(float)
    if len(set(y)) == 2:
        fitted_on = [q for q, c in zip(questions, chosen) if c]
        coef, bias = signed_logistic(answer_rows(fitted_on, w), y, w.answer_features)
        w = replace(w, answer_coef=tuple(round(float(c), 6) for c in coef), answer_bias=round(bias, 6))
        w = replace(w, ranges=signal_ranges(fitted_on, w))  # never extrapolated past what it was fitted on
    return w
