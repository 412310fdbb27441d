"""The ranking model: a conditional logit over each entry's evidence, fitted by `kb calibrate`."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import numpy as np
import pytest

from kb.evaluate import EvalQuery
from kb.fitting import Labelled, best_ranking
from kb.scoring import RANK_FEATURES, Features, Weights


def features(dense: np.ndarray, coverage: np.ndarray, length: np.ndarray) -> Features:
    n = len(dense)
    return Features(
        cosine=dense,
        background=0.0,
        coverage=coverage,
        question=np.zeros(n),
        named=np.zeros(n, bool),
        framework=None,
        length=length,
    )


def question(i: int, f: Features, correct: int) -> Labelled:
    mask = np.zeros(len(f.cosine), bool)
    mask[correct] = True
    return Labelled(EvalQuery(f"q{i}", "q", ("x",), "en"), f, mask, False)


def synthetic(count: int, seed: int) -> list[Labelled]:
    """Twenty entries a question; the answer has the best cosine, but a long entry gets a
    slightly better cosine than its share of meaning, so it wins unless length is weighed."""
    rng = np.random.default_rng(seed)
    questions = []
    for i in range(count):
        dense = rng.normal(0.80, 0.02, 20)
        length = rng.normal(0.0, 1.0, 20)
        correct = int(rng.integers(20))
        dense[correct] += 0.03
        dense += 0.02 * length  # the hub effect
        coverage = rng.uniform(0, 0.3, 20)
        questions.append(question(i, features(dense, coverage, length), correct))
    return questions


def recall_at_1(questions: list[Labelled], w: Weights) -> float:
    return float(np.mean([q.correct[np.argmax(q.features.score(w))] for q in questions]))


def test_the_fit_learns_to_weigh_long_entries_down_and_ranks_better_than_cosine_alone():
    train, test = synthetic(300, seed=1), synthetic(300, seed=2)
    fitted = best_ranking(train, Weights())
    coef = dict(zip(RANK_FEATURES, fitted.rank_coef))
    assert coef["dense"] > 0 and coef["length"] < 0
    cosine_alone = Weights(rank_coef=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    assert recall_at_1(test, fitted) > recall_at_1(test, cosine_alone) + 0.05


def test_features_left_out_of_the_fit_weigh_nothing():
    fitted = best_ranking(synthetic(100, seed=3), Weights(), fitted=["dense", "coverage"])
    coef = dict(zip(RANK_FEATURES, fitted.rank_coef))
    assert coef["length"] == 0.0 and coef["question"] == 0.0 and coef["dense"] > 0


def test_the_shipped_calibration_names_its_features_and_weighs_length_down():
    from kb.scoring import CALIBRATION_PATH

    weights = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))["weights"]
    assert weights["rank_features"] == list(RANK_FEATURES)
    assert dict(zip(RANK_FEATURES, weights["rank_coef"]))["length"] < 0


@pytest.mark.parametrize(
    "weights",
    [
        {"question": 0.2, "coverage": 0.3, "answer_coef": [1.0]},  # the grid-fitted weights of an older kb
        {"rank_coef": [1.0, 2.0], "rank_features": ["dense", "hubness"], "answer_coef": [1.0]},  # other evidence
    ],
)
def test_a_calibration_file_of_another_ranking_falls_back_to_defaults_and_says_so(tmp_path, caplog, weights):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"weights": weights}), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="kb.scoring"):
        assert Weights.load(path) == Weights()
    assert str(path) in caplog.text and "kb calibrate" in caplog.text


def test_a_signal_past_its_fitted_range_moves_the_confidence_no_further() -> None:
    """A 180-word issue read by a confidence fitted on titles of 1 to 29 words: `words` held at the range's top."""
    weights = replace(Weights(), signals=("gap", "words"), answer_coef=(0.3, 0.6), answer_bias=-1.0)
    bounded = replace(weights, ranges=((0.0, 5.0), (0.0, float(np.log1p(29)))))
    title, issue = np.array([[1.0, np.log1p(29)]]), np.array([[1.0, np.log1p(180)]])
    assert weights.answer_probability(issue)[0] > weights.answer_probability(title)[0]
    assert bounded.answer_probability(issue)[0] == bounded.answer_probability(title)[0]
    assert Weights.of_dict(bounded.to_dict() | {"floor": 0.2}).ranges == bounded.ranges
