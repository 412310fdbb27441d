"""kb/confidence.py: the held-out curve, the threshold of an operating point, and the figures of a curve,
checked against their definitions on random confidences (hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.confidence import (
    MIN_ANSWERED,
    NEVER,
    OperatingCurve,
    auroc,
    coverage_at,
    curve_points,
    lower_bound,
    reliability,
    summary,
)

FAST = settings(max_examples=80, deadline=None)
# Confidences from a few values, so that ties are common, each with whether the first hit was right.
labelled = st.lists(st.tuples(st.sampled_from([0.1, 0.3, 0.5, 0.55, 0.7, 0.9, 0.97]), st.booleans()), max_size=60)


def precision_at(pairs: list[tuple[float, bool]], threshold: float) -> tuple[float, int]:
    answered = [right for c, right in pairs if c >= threshold]
    return (sum(answered) / len(answered) if answered else 1.0), len(answered)


@FAST
@given(labelled)
def test_each_point_is_the_precision_and_coverage_of_answering_at_its_threshold(
    pairs: list[tuple[float, bool]],
) -> None:
    points = curve_points([c for c, _ in pairs], [r for _, r in pairs])
    assert [t for t, _, _ in points] == sorted({c for c, _ in pairs}, reverse=True)
    for threshold, precision, coverage in points:
        expected, answered = precision_at(pairs, threshold)
        assert precision == round(expected, 4)
        assert coverage == round(answered / len(pairs), 4)
    if points:
        assert points[-1][2] == 1.0


@FAST
@given(labelled, st.sampled_from([0.5, 0.7, 0.8, 0.9]))
def test_an_operating_point_is_the_lowest_threshold_whose_lower_bound_keeps_the_precision(
    pairs: list[tuple[float, bool]], target: float
) -> None:
    curve = OperatingCurve.of([c for c, _ in pairs], [r for _, r in pairs])
    threshold = curve.threshold(target)

    def keeps(t: float) -> bool:
        precision, answered = precision_at(pairs, t)
        return answered >= min(MIN_ANSWERED, len(pairs)) and lower_bound(round(precision, 4), answered) >= target

    keeping = [t for t, _, _ in curve.points if keeps(t)]
    assert threshold == (min(keeping) if keeping else NEVER)
    if threshold == NEVER:
        assert curve.at(threshold) == (1.0, 0.0)  # nothing is answered
    assert curve.threshold(0.0) == 0.0


def test_the_curve_survives_a_round_trip_through_the_calibration_file() -> None:
    curve = OperatingCurve.of([0.9, 0.8, 0.8, 0.2], [True, True, False, False])
    assert OperatingCurve.of_dict(curve.to_dict()) == curve


def test_the_lower_bound_grows_toward_the_measured_precision_with_more_answers() -> None:
    bounds = [lower_bound(0.9, n) for n in (10, 40, 160, 640)]
    assert bounds == sorted(bounds) and all(b < 0.9 for b in bounds)
    assert abs(lower_bound(0.9, 100_000) - 0.9) < 0.002
    assert lower_bound(0.9, 0) == 0.0


@FAST
@given(labelled)
def test_auroc_is_the_share_of_right_wrong_pairs_ordered_right_first(pairs: list[tuple[float, bool]]) -> None:
    right = [c for c, r in pairs if r]
    wrong = [c for c, r in pairs if not r]
    value = auroc([c for c, _ in pairs], [r for _, r in pairs])
    if not right or not wrong:
        assert np.isnan(value)
        return
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(right, wrong))
    assert abs(value - wins / (len(right) * len(wrong))) < 1e-9


@FAST
@given(labelled, st.sampled_from([0.8, 0.9]))
def test_coverage_at_a_precision_is_the_largest_share_answered_that_precisely(
    pairs: list[tuple[float, bool]], target: float
) -> None:
    confidence = [c for c, _ in pairs]
    shares = [
        answered / len(pairs)
        for t in set(confidence)
        for precision, answered in [precision_at(pairs, t)]
        if round(precision, 4) >= target and answered >= MIN_ANSWERED
    ]
    assert coverage_at(confidence, [r for _, r in pairs], target) == round(max(shares, default=0.0), 4)


@FAST
@given(labelled)
def test_reliability_puts_every_question_in_one_bin(pairs: list[tuple[float, bool]]) -> None:
    rows = reliability([c for c, _ in pairs], [r for _, r in pairs])
    assert len(rows) == 10 and sum(row["questions"] for row in rows) == len(pairs)
    for row in rows:
        low, high = (float(x) for x in row["bin"].split("-"))
        if row["questions"]:
            assert low <= row["confidence"] <= high and 0 <= row["right"] <= 1


def test_a_calibrated_confidence_has_a_small_calibration_error() -> None:
    rng = np.random.default_rng(0)
    confidence = rng.random(4000)
    right = rng.random(4000) < confidence  # right as often as it says
    s = summary(confidence, right)
    assert s["calibration_error"] < 0.03 and 0.8 < s["auroc"] < 0.86
    overconfident = summary(np.minimum(confidence + 0.3, 1.0), right)
    assert overconfident["calibration_error"] > 0.2
