"""Operating points: the shipped calibration's default (precision 0.8) and a channel's own, as a reader meets them."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from kb import asking
from kb.errors import SettingsError
from kb.events import Events
from kb.knowledge import KnowledgeBase
from kb.scoring import DEFAULT_PRECISION, Weights
from kb.settings import Settings

RESUME = "how do I resume training in slime?"  # slime's FAQ answers it; the confidence is about 0.53


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings.with_(answer_precision=DEFAULT_PRECISION, channel_precision="mcp=0.6"))


def test_the_shipped_points_ask_more_confidence_for_more_precision() -> None:
    weights = Weights.load()
    thresholds = [weights.threshold(p) for p in (0.5, 0.6, 0.7, 0.8, 0.9)]
    assert thresholds == sorted(thresholds) and len(set(thresholds)) == 5
    assert weights.threshold(None) == weights.answer_threshold == weights.threshold(DEFAULT_PRECISION)
    # What the calibration promises at each point held on its own held-out folds.
    for precision in (0.6, 0.8, 0.9):
        got, coverage = weights.curve.at(weights.threshold(precision))
        assert got >= precision and coverage > 0


def test_below_the_default_point_the_nearest_entries_are_offered_with_the_right_one_first(kb: KnowledgeBase) -> None:
    result = kb.search_blocking(RESUME)
    assert 0.3 < result.confidence < kb.searcher.weights.threshold(DEFAULT_PRECISION)
    assert not result.answered and result.hits[0].entry.id == "slime-b0ab398d"
    assert kb.search_blocking(RESUME, precision=0.6).answered  # the same result, at a lower point


def test_a_channel_answers_at_its_own_point(kb: KnowledgeBase) -> None:
    events = Events()
    by_mcp = asyncio.run(asking.search(kb, events, RESUME, channel="mcp"))
    on_the_web = asyncio.run(asking.search(kb, events, RESUME, channel="web"))
    assert by_mcp.result.answered and not on_the_web.result.answered
    assert by_mcp.result.confidence == on_the_web.result.confidence


def test_a_channel_answers_at_its_declared_point_unless_the_setting_names_it(kb: KnowledgeBase) -> None:
    declared = replace(kb, points={"slack": 0.95, "mcp": 0.9})  # the points the channels declare, as the app hands them
    assert declared.precision_for("slack") == 0.95
    assert declared.precision_for("mcp") == 0.6  # KB_CHANNEL_PRECISION's, over the declared one
    assert declared.precision_for("web") == DEFAULT_PRECISION  # none declared: KB_ANSWER_PRECISION


@pytest.mark.parametrize(
    "value, part",
    [("slack=2", "slack=2"), ("Slack=0.9", "Slack=0.9"), ("mcp", "mcp"), ("web=0.8,openai=x", "openai=x")],
)
def test_a_malformed_channel_precision_names_the_part_at_fault(value: str, part: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"KB_CHANNEL_PRECISION": value})
    assert "KB_CHANNEL_PRECISION" in str(raised.value) and repr(part) in str(raised.value)


def test_the_answer_precision_is_a_share() -> None:
    with pytest.raises(SettingsError, match="KB_ANSWER_PRECISION"):
        Settings.from_env({"KB_ANSWER_PRECISION": "1.5"})
    assert Settings.from_env({"KB_CHANNEL_PRECISION": "slack=0.9, github=0.95"}).channel_precisions["github"] == 0.95
