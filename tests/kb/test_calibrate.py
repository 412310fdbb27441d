"""The fitting functions of kb/calibrate.py on random small labelled sets (hypothesis): any set a
team may start with, from none at all to a dozen questions, all answerable, all out of scope,
folds where one class is missing, a judge that fails on some or every question. Each fit gives
finite weights of the allowed signs; what a set cannot fit is kept from the weights in use; a
set that can fit nothing is one clear error; cross-validation gives every question a held-out
confidence, and the operating points a threshold whose held-out answers keep their precision.

The evidence here is drawn at random, not searched: these tests are of the arithmetic. The
command on real question sets is tested in tests/cli/test_calibrate.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kb.calibrate import check_questions
from kb.confidence import lower_bound
from kb.cross_validation import cross_validate
from kb.errors import JudgeFailed, TooFewQuestions
from kb.evaluate import DEPTH, EvalQuery
from kb.fitting import ANSWER_SIGNS, Labelled, confidence_set, fit, right_first, signed_logistic
from kb.judge_weights import judge_report
from kb.scoring import ANSWER_FEATURES, RANK_FEATURES, Features, Weights

BASE = Weights.load()  # the shipped calibration: what a set that cannot fit a model keeps
FAST = settings(max_examples=60, deadline=None)


def unit(n: int, low: float = 0.0, high: float = 1.0) -> st.SearchStrategy[np.ndarray]:
    return arrays(np.float64, n, elements=st.floats(low, high, allow_nan=False))


@st.composite
def question(draw: st.DrawFn, index: int, entries: int, answerable: bool | None = None) -> Labelled:
    """One labelled question's evidence against `entries` entries, in the ranges the search gives."""
    answerable = draw(st.booleans()) if answerable is None else answerable
    lang = draw(st.sampled_from(["en", "zh"]))
    features = Features(
        cosine=draw(unit(entries, 0.6, 0.95)),
        background=draw(st.floats(0.7, 0.85)),
        coverage=draw(unit(entries)),
        question=draw(unit(entries)),
        named=draw(arrays(np.bool_, entries)),
        framework=draw(st.sampled_from([None, "slime"])),
        length=draw(unit(entries, -2.0, 2.0)),
        alternate=draw(unit(entries, -1.0, 1.0)),
        not_covered=draw(st.floats(-1.0, 1.0)),
    )
    correct = np.zeros(entries, bool)
    if answerable:
        correct[draw(st.integers(0, entries - 1))] = True
    url = draw(st.sampled_from(["", "https://github.com/example/issues/1"]))
    query = EvalQuery(f"q{index}", f"question {index}", ("an entry",) if answerable else (), lang, url)
    return Labelled(query, features, correct, lang == "zh", query.q, lang)


@st.composite
def question_sets(draw: st.DrawFn, max_size: int = 12, answerable: bool | None = None) -> list[Labelled]:
    """0 to `max_size` questions against 2 to 12 entries; `answerable` True or False: of that class only."""
    entries = draw(st.integers(2, 12))
    size = draw(st.integers(0, max_size))
    return [draw(question(i, entries, answerable)) for i in range(size)]


def finite(w: Weights) -> bool:
    values = [*w.rank_coef, *w.answer_coef, w.answer_bias, w.answer_threshold]
    return all(math.isfinite(v) for v in values)


def signs_kept(w: Weights) -> bool:
    return all(c * ANSWER_SIGNS.get(name, 0) >= 0 for name, c in zip(w.answer_features, w.answer_coef))


def answer_rows(questions: list[Labelled], w: Weights) -> np.ndarray:
    rows = []
    for q in questions:
        score = q.features.score(w)
        rows.append(q.features.of_best(score, np.argsort(-score, kind="stable"), q.zh, w))
    return np.array(rows).reshape(len(rows), len(w.answer_features))


@pytest.mark.slow
@FAST
@given(question_sets())
def test_any_small_set_fits_finite_weights_of_the_allowed_signs(questions: list[Labelled]) -> None:
    w = fit(questions, BASE)
    assert finite(w) and signs_kept(w)
    assert w.rank_coef[RANK_FEATURES.index("alternate")] >= 0
    answerable = [q for q in questions if q.query.answerable]
    right = right_first(questions, w)
    judged = right[confidence_set(questions, right)]
    if judged.all() or not judged.any():  # nothing to tell a right first hit from a wrong one: the model is kept
        assert (w.answer_coef, w.answer_bias) == (BASE.answer_coef, BASE.answer_bias)
    if not answerable:  # nothing to rank
        assert w.rank_coef == BASE.rank_coef


@FAST
@given(
    st.integers(2, 40).flatmap(
        lambda n: st.tuples(
            arrays(np.float64, (n, len(ANSWER_FEATURES)), elements=st.floats(-3, 3, allow_nan=False)),
            arrays(np.float64, n, elements=st.sampled_from([0.0, 1.0])),
        )
    )
)
def test_the_answer_model_takes_no_weight_of_the_wrong_sign(xy: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = xy
    coef, bias = signed_logistic(x, y, ANSWER_FEATURES)
    assert np.isfinite(coef).all() and math.isfinite(bias)
    assert all(c * ANSWER_SIGNS.get(name, 0) >= 0 for name, c in zip(ANSWER_FEATURES, coef))


@pytest.mark.slow
@FAST
@given(question_sets(), st.integers(2, 6))
def test_cross_validation_reports_every_question_whatever_its_folds_lack(questions: list[Labelled], folds: int) -> None:
    report = cross_validate(questions, BASE, folds, RANK_FEATURES)
    figures = report["cross_validated"]
    answerable = sum(q.query.answerable for q in questions)
    assert figures["overall"]["queries"] == answerable
    assert figures["out_of_scope"]["queries"] == len(questions) - answerable
    assert 0 <= figures["out_of_scope"]["abstained"] <= len(questions) - answerable
    ranks, answered = report["outcomes"]
    assert len(ranks) == len(answered) == len(questions)
    assert all(r is None or 1 <= r <= DEPTH for r in ranks)
    assert len(report["fold_weights"]) == folds
    curve = report["curve"]
    assert curve.questions == report["confidence"]["questions"] <= len(questions)
    # Every operating point's held-out answers keep the precision asked for, at its lower bound.
    for precision in (0.5, 0.8, 0.9):
        got, coverage = curve.at(curve.threshold(precision))
        if coverage:
            assert lower_bound(got, round(coverage * curve.questions)) >= precision


@pytest.mark.slow
@FAST
@given(question_sets(max_size=8, answerable=False))
def test_a_set_with_no_answerable_question_is_refused_in_one_line(questions: list[Labelled]) -> None:
    with pytest.raises(TooFewQuestions) as raised:
        check_questions([q.query for q in questions])
    message = str(raised.value)
    assert message.startswith(f"{len(questions)} question") and "none with an answer" in message
    assert "add questions the FAQ answers" in message and "\n" not in message


@pytest.mark.slow
@FAST
@given(question_sets(max_size=8), st.integers(0, 8))
def test_a_set_with_an_answerable_question_passes(questions: list[Labelled], at: int) -> None:
    queries = [q.query for q in questions]
    queries.insert(min(at, len(queries)), EvalQuery("answerable", "how do I resume training", ("resume",), "en"))
    check_questions(queries)


@dataclass
class Candidate:
    """An entry as the judge reads it: the fitting functions need only `localized`."""

    index: int

    def localized(self, lang: str) -> "Candidate":
        return self


class Index:
    """The searcher as `_judge_report` uses it: its entries."""

    def __init__(self, entries: int):
        self.entries = [Candidate(i) for i in range(entries)]


class RandomJudge:
    """A judge that names a random candidate, or fails, as each question's draw says (nothing here can run a real
    one in a property test: the real ones are tested against a stand-in server in tests/cli/test_calibrate.py)."""

    kind = "llm"
    model = "random"

    def __init__(self, verdicts: Sequence[int | None]):
        self.verdicts = list(verdicts)

    def scores(self, question: str, candidates: Sequence[Any]) -> np.ndarray:
        verdict = self.verdicts.pop(0)
        if verdict is None:
            raise JudgeFailed("invalid", "a reply that names no candidate: 'I think it is the second one.'")
        scores = np.zeros(len(candidates))
        scores[verdict % len(candidates)] = 1.0
        return scores

    def close(self) -> None:
        pass


@pytest.mark.slow
@FAST
@given(
    question_sets(max_size=10).flatmap(
        lambda qs: st.tuples(st.just(qs), st.lists(st.none() | st.integers(0, 9), min_size=len(qs), max_size=len(qs)))
    ),
    st.integers(2, 5),
)
def test_a_judge_that_fails_on_some_questions_is_fitted_on_the_others(
    drawn: tuple[list[Labelled], list[int | None]], folds: int
) -> None:
    questions, verdicts = drawn
    entries = len(questions[0].correct) if questions else 2
    report = cross_validate(questions, BASE, folds, RANK_FEATURES)
    plain = report["outcomes"]
    judge = RandomJudge(verdicts)
    if questions and all(v is None for v in verdicts):
        with pytest.raises(JudgeFailed) as raised:
            judge_report(Index(entries), questions, BASE, plain, folds, RANK_FEATURES, judge, 10)  # type: ignore[arg-type]
        assert f"no usable verdict on any of the {len(questions)} questions (invalid: {len(questions)};" in str(
            raised.value
        )
        return
    judged = judge_report(Index(entries), questions, BASE, plain, folds, RANK_FEATURES, judge, 10)  # type: ignore[arg-type]
    assert judged["failed"] == sum(v is None for v in verdicts)
    w = Weights.of_dict(judged["weights"])
    assert w.judged and finite(w) and signs_kept(w)
    assert w.curve.questions <= len(questions)
    assert judged["cross_validated"]["overall"]["queries"] == sum(q.query.answerable for q in questions)
