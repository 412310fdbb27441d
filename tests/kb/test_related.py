"""Related entries beside an answer are cut as the search page cuts its results: by the
calibrated score gap (`SearchResult.worth_showing`), in the chat, the widget's API and Slack."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.answer import compose_answer
from kb.settings import Settings
from server import create_app
from tests.support.slack import SECRET, post_command

RESUME = "how do I resume training"
WEATHER = "what's the weather in Paris"
ECC = "chatlearn-v1-77a5152c"  # "ECC Error"
NON_CONTIGUOUS = (
    "chatlearn-v1-500db2f2"  # "Alignment training with pipeline parallelism may encounter non-contiguous tensors"
)


@pytest.fixture(scope="module")
def slack(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings.with_(slack_signing_secret=SECRET))) as client:
        yield client


def _entry_ids(blocks: list[dict[str, Any]], heading: str) -> list[str]:
    """The entry ids a Slack list of `heading` links to."""
    for block in blocks:
        text = block.get("text", {}).get("text", "")
        if text.startswith(f"*{heading}*"):
            return [line.split("/entries/")[1].split("|")[0] for line in text.splitlines()[1:]]
    return []


def test_chat_related_entries_are_those_the_search_page_shows(client: TestClient) -> None:
    chat = client.post("/api/chat", json={"message": RESUME}).json()
    search = client.get("/api/search", params={"q": RESUME, "k": 10}).json()
    shown = [hit["id"] for hit in search["hits"][: search["shown"]]]
    assert chat["answered"] is True
    assert [source["id"] for source in chat["sources"]] == shown[:4]
    assert {ECC, NON_CONTIGUOUS}.isdisjoint(source["id"] for source in chat["sources"])
    assert "Related" not in chat["answer"]  # nothing close enough to its score


def test_an_unanswered_question_has_no_related_entries(client: TestClient) -> None:
    chat = client.post("/api/chat", json={"message": WEATHER}).json()
    assert chat["answered"] is False
    assert "Related" not in chat["answer"]
    assert 1 <= len(chat["sources"]) <= 3  # the nearest, offered as such, as on the search page


def test_related_entries_within_the_margin_are_kept(settings: Settings) -> None:
    from kb.hits import SHOW_MARGIN
    from kb.knowledge import KnowledgeBase

    kb = KnowledgeBase.open(settings)
    result = kb.search_blocking("OOM with FSDP", 4, precision=0.5)  # confidence 0.30: answered at precision 0.5
    answer = compose_answer(result.in_language("en"), "en")
    assert answer.answered and len(answer.sources) > 1
    assert all(result.hits[0].score - hit.score <= SHOW_MARGIN for hit in answer.sources)
    assert answer.text.count("\n- [") == len(answer.sources) - 1


def test_slack_related_entries_for_resume_training(slack: TestClient) -> None:
    blocks = post_command(slack, RESUME).json()["blocks"]
    related = _entry_ids(blocks, "Related entries")
    assert {ECC, NON_CONTIGUOUS}.isdisjoint(related)
    assert related == []


def test_slack_has_no_related_list_without_an_answer(slack: TestClient) -> None:
    blocks = post_command(slack, WEATHER).json()["blocks"]
    assert _entry_ids(blocks, "Related entries") == []
