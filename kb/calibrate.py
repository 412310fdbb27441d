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

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .confidence import LIKELY_PRECISION, OperatingCurve, floor_of, reliability, summary
from .errors import JudgeFailed, TooFewQuestions
from .evaluate import DEPTH, EvalQuery, is_expected
from .judge import Judge
from .scoring import ANSWER_FEATURES, CALIBRATION_PATH, DEFAULT_PRECISION, JUDGE, RANK_FEATURES, Features, Weights
from .search import Searcher
from .text import question_key
from .tuning import refit_without

__all__ = ["PRECISIONS", "calibrate", "check_questions", "operating_points", "repository", "write_calibration"]
L2 = 1.0  # ridge penalty of both models, on standardised features


@dataclass
class _Question:
    query: EvalQuery
    features: Features  # against every entry
    correct: np.ndarray  # which entries answer it
    zh: bool
    text: str = ""  # what was searched (what a judge reads)
    lang: str = "en"


def _collect(
    searcher: Searcher, queries: Sequence[EvalQuery], folds: int, fold_of: FoldOf | None = None
) -> list[_Question]:
    """Each question's evidence against every entry. Learned questions that are among the
    queries are learned only from the other folds: a question is measured as if its own
    fold had never been linked (as the shipped tune split's questions are). So is the query
    adapter, when there is one: each fold's questions are searched through an adapter fitted
    the same way without them."""
    fold_of = fold_of or _fold
    ids = np.arange(len(searcher.entries))
    found: list[_Question | None] = [None] * len(queries)
    for fold in range(folds):
        members = [i for i, query in enumerate(queries) if fold_of(query, folds) == fold]
        held = {question_key(queries[i].q) for i in members}
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
            found[i] = _Question(query, features, correct, plan.query_lang == "zh", plan.text, plan.query_lang)
    return [q for q in found if q is not None]


def _ranks(questions: list[_Question], w: Weights) -> list[int | None]:
    ranks: list[int | None] = []
    for q in questions:
        order = np.argsort(-q.features.score(w), kind="stable")[:DEPTH]
        hit = np.flatnonzero(q.correct[order])
        ranks.append(int(hit[0]) + 1 if len(hit) else None)
    return ranks


def _standardised(questions: list[_Question], fitted: np.ndarray, w: Weights) -> tuple[list[np.ndarray], np.ndarray]:
    matrices = [q.features.matrix(w) for q in questions]
    scale = np.concatenate(matrices).std(axis=0) if matrices else np.ones(len(w.rank_features))
    scale = np.where((scale > 0) & fitted, scale, np.inf)  # an unfitted or constant feature weighs 0
    return [m / scale for m in matrices], scale


def _best_ranking(questions: list[_Question], base: Weights, fitted: Sequence[str] = RANK_FEATURES) -> Weights:
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
        return _best_ranking(questions, base, [name for name in fitted if name != "alternate"])
    return replace(base, rank_coef=tuple(round(float(c), 6) for c in coef))


def _answer_rows(questions: list[_Question], w: Weights) -> np.ndarray:
    rows = [np.zeros((0, len(w.answer_features)))]  # no questions: no rows, as many columns
    for q in questions:
        score = q.features.score(w)
        rows.append(q.features.of_best(score, np.argsort(-score, kind="stable"), q.zh, w)[None, :])
    return np.concatenate(rows)


def _logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
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


def _signed_logistic(x: np.ndarray, y: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, float]:
    """`_logistic`, leaving out each feature whose weight takes the wrong sign (ANSWER_SIGNS)."""
    signs = np.array([ANSWER_SIGNS.get(name, 0) for name in names])
    kept = np.ones(len(names), bool)
    while True:
        coef, bias = _logistic(np.where(kept, x, 0.0), y)
        wrong = kept & (coef * signs < 0)
        if not wrong.any():
            return np.where(kept, coef, 0.0), bias
        kept &= ~wrong


def _right_first(questions: list[_Question], w: Weights) -> np.ndarray:
    """Whether each question's first hit under `w` answers it (never, for an out-of-scope question)."""
    return np.array([r == 1 for r in _ranks(questions, w)], dtype=bool)


def _confidence_set(questions: list[_Question], right: np.ndarray) -> np.ndarray:
    """Which questions the confidence is fitted to and measured on: the real ones (with a `url`)
    when MIN_REAL_EACH of them had the right first hit and as many the wrong one, else all."""
    real = np.array([bool(q.query.url) for q in questions], dtype=bool)
    if min(int((right & real).sum()), int((~right & real).sum())) >= MIN_REAL_EACH:
        return real
    return np.ones(len(questions), dtype=bool)


def _fit(questions: list[_Question], base: Weights, fitted: Sequence[str] = RANK_FEATURES) -> Weights:
    """The ranking and the confidence, each fitted when `questions` can tell it anything: without
    answerable questions the ranking is `base`'s, and without first hits both right and wrong the
    confidence is. The threshold is the caller's: it comes from held-out folds (`calibrate`)."""
    w = _best_ranking(questions, base, fitted)
    right = _right_first(questions, w)
    chosen = _confidence_set(questions, right)
    y = right[chosen].astype(float)
    if len(set(y)) == 2:
        x = _answer_rows([q for q, c in zip(questions, chosen) if c], w)
        coef, bias = _signed_logistic(x, y, w.answer_features)
        w = replace(w, answer_coef=tuple(round(float(c), 6) for c in coef), answer_bias=round(bias, 6))
    return w


FoldOf = Callable[[EvalQuery, int], int]


def _fold(query: EvalQuery, folds: int) -> int:
    return int(hashlib.sha1(query.id.encode()).hexdigest(), 16) % folds


def repository(query: EvalQuery) -> str:
    """The repository a real question was asked in (`owner/name` of its GitHub URL, else the URL's
    host and path); a written question (no URL) is its own."""
    if not query.url:
        return "written:" + query.id
    match = re.match(r"https?://(?:www\.)?github\.com/([^/]+/[^/#?]+)", query.url)
    return match.group(1).lower() if match else query.url.split("#")[0].rsplit("/", 2)[0]


def _grouped_fold(query: EvalQuery, folds: int) -> int:
    """A fold by the question's repository: no repository's questions on both sides of a fold."""
    return int(hashlib.sha1(repository(query).encode()).hexdigest(), 16) % folds


def _figures(questions: list[_Question], ranks: list[int | None], answered: list[bool]) -> dict[str, Any]:
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
    questions = _collect(searcher, queries, folds)
    trials = []
    for alternate_floor in FLOORS:
        for not_covered_floor in FLOORS:
            base = replace(start, alternate_floor=alternate_floor, not_covered_floor=not_covered_floor)
            report = _cross_validate(questions, base, folds, fitted)
            merit = report["cross_validated"]["overall"]["recall_at_1"] + (report["confidence"]["auroc"] or 0.0)
            trials.append((merit, alternate_floor, not_covered_floor, base, report))
    _, alternate_floor, not_covered_floor, base, report = max(trials, key=lambda t: t[0])
    report["floors"] = {"alternate": alternate_floor, "not_covered": not_covered_floor, "tried": list(FLOORS)}
    grouped_questions = _collect(searcher, queries, folds, _grouped_fold)
    grouped = _cross_validate(grouped_questions, base, folds, fitted, _grouped_fold)
    report["grouped"] = {
        "folds": folds,
        "repositories": len({repository(q.query) for q in grouped_questions if q.query.url}),
        "cross_validated": grouped["cross_validated"],
        "confidence": grouped["confidence"],
    }
    # The query adapter the evidence was taken through (each fold's refitted without it), if any.
    report["query_adapter"] = searcher.adapter.summary() if searcher.adapter is not None else None
    curve = grouped.pop("curve")
    weights = _fit(questions, base, fitted)
    weights = replace(weights, curve=curve, answer_threshold=curve.threshold(DEFAULT_PRECISION))
    # The floor of "may answer": the held-out curve's threshold for precision 0.5, and how many
    # out-of-scope questions (held out by repository) lie below it.
    held = grouped.pop("confidences")
    outside = np.array([not q.query.answerable for q in grouped_questions], dtype=bool)
    floor = min(floor_of(curve), weights.answer_threshold)
    weights = replace(weights, floor=floor)
    report["likely_floor"] = {
        "floor": floor,
        "precision": LIKELY_PRECISION,
        "out_of_scope": int(outside.sum()),
        "below": int((held[outside] < floor).sum()),
        "answerable_above": int((held[~outside] >= floor).sum()),
        "answerable": int((~outside).sum()),
    }
    report["operating_points"] = operating_points(curve)
    report.pop("curve", None)
    if judge is not None:
        report["judge"] = _judge_report(searcher, questions, weights, report.pop("outcomes"), folds, fitted, judge, top)
    report.pop("outcomes", None)
    report.pop("confidences", None)
    return weights, report


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


def _judge_report(
    searcher: Searcher,
    questions: list[_Question],
    weights: Weights,
    plain: tuple[list[int | None], list[bool]],
    folds: int,
    fitted: Sequence[str],
    judge: Judge,
    top: int,
) -> dict[str, Any]:
    """The judged weights, fitted and cross-validated over each question's first-stage candidates
    with the judge's scores; the gap from which it is skipped, and the figures with it."""
    judged: list[_Question | None] = []
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
            _Question(q.query, replace(q.features.take(rows), judge=column), q.correct[rows], q.zh, q.text, q.lang)
        )
    kept = [i for i, q in enumerate(judged) if q is not None]
    kept_questions = [q for q in judged if q is not None]  # judged[i] for i in kept
    if questions and not kept_questions:
        raise _no_verdict(judge, failures)
    base = weights.with_judge()
    names = (*fitted, JUDGE)
    report = _cross_validate(kept_questions, base, folds, names)
    curve = report.pop("curve")
    ranks, answered = list(plain[0]), list(plain[1])
    changed = []
    for i, rank, said in zip(kept, *report.pop("outcomes")):
        if (rank, said) != (ranks[i], answered[i]):
            changed.append(i)
        ranks[i], answered[i] = rank, said
    # Above the widest lead at which the judge changed an outcome, it changed none: skip it there.
    skip_gap = max((gaps[i] for i in changed), default=0.0) + 1e-6
    skipped = sum(gaps[i] >= skip_gap for i in kept)
    final = _fit(kept_questions, base, names)
    final = replace(final, curve=curve, answer_threshold=curve.threshold(DEFAULT_PRECISION))
    return {
        "kind": judge.kind,
        "model": judge.model,
        "top": top,
        "questions": len(questions),
        "failed": len(questions) - len(kept),
        "skip_gap": round(skip_gap, 6),
        "skipped": int(skipped),
        "changed": len(changed),
        "cross_validated": _figures(questions, ranks, answered),
        "fold_weights": report["fold_weights"],
        "weights": final.to_dict(),
    }


def _cross_validate(
    questions: list[_Question], base: Weights, folds: int, fitted: Sequence[str], fold_of: FoldOf | None = None
) -> dict[str, Any]:
    """Each question ranked and its confidence taken by weights fitted without its fold; the figures of
    the held-out folds, the confidence's curve (over the questions it is fitted to, `_confidence_set`),
    and whether each was answered at the curve's threshold for DEFAULT_PRECISION."""
    fold_of = fold_of or _fold
    ranks: list[int | None] = [None] * len(questions)
    confidence = np.zeros(len(questions))
    chosen = []
    for fold in range(folds):
        train = [q for q in questions if fold_of(q.query, folds) != fold]
        test = [i for i, q in enumerate(questions) if fold_of(q.query, folds) == fold]
        w = _fit(train, base, fitted)
        chosen.append(dict(zip(w.rank_features, w.rank_coef)))
        held = [questions[i] for i in test]
        for i, rank, p in zip(test, _ranks(held, w), w.answer_probability(_answer_rows(held, w))):
            ranks[i], confidence[i] = rank, float(p)
    right = np.array([r == 1 for r in ranks], dtype=bool)
    measured = _confidence_set(questions, right)
    curve = OperatingCurve.of(confidence[measured], right[measured])
    threshold = curve.threshold(DEFAULT_PRECISION)
    answered = [bool(p >= threshold) for p in confidence]
    return {
        "folds": folds,
        "cross_validated": _figures(questions, ranks, answered),
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
