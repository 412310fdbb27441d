"""The answer state (kb/verdict.py): decided from the confidence, the channel's point and the floor, and given in JSON
as the words every channel's reply has always carried."""

from __future__ import annotations

import json

import pytest

from kb.verdict import AnswerState, decide

POINT, FLOOR = 0.6, 0.2


@pytest.mark.parametrize(
    "confidence, state",
    [
        (0.6, AnswerState.ANSWERED),  # reaching the point answers
        (0.59, AnswerState.LIKELY),  # under it, at or above the floor: may answer
        (0.2, AnswerState.LIKELY),
        (0.19, AnswerState.NOT_COVERED),  # under the floor
    ],
)
def test_the_state_is_where_the_confidence_stands_between_floor_and_point(confidence: float, state: str) -> None:
    verdict = decide(confidence, POINT, FLOOR)
    assert verdict.state is state
    assert (verdict.confidence, verdict.point, verdict.floor) == (confidence, POINT, FLOOR)
    assert verdict.answered == (state is AnswerState.ANSWERED)


def test_nothing_found_is_not_covered_and_a_certain_answer_answers_at_any_point() -> None:
    assert decide(0.9, POINT, FLOOR, found=False).state is AnswerState.NOT_COVERED
    assert decide(1.0, 1.2, FLOOR).state is AnswerState.ANSWERED  # a point beyond what a confidence can reach


def test_a_state_is_its_word_in_json() -> None:
    body = json.dumps({"state": decide(0.3, POINT, FLOOR).state})
    assert body == '{"state": "likely"}'
    assert [s.value for s in AnswerState] == ["answered", "likely", "not_covered"]
