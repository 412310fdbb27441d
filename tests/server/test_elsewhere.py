"""A question that names a framework whose FAQ has no answer: every channel says so, and
offers what another framework's FAQ has as such."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.answer import compose_answer, elsewhere_note
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server.app import create_app
from tests.support.forms import form_token
from tests.support.slack import SECRET, post_command

ROLL_RESUME = "how do I resume training in ROLL"  # ROLL's FAQ has no entry on resuming; slime's has
ROLL_RESUME_ZH = "ROLL 怎么续训"
ROLL_PIZZA = "what is the best pizza in Naples, ROLL?"  # nothing anywhere
SLIME_RESUME = "slime 如何续训"  # slime's FAQ answers it
NOT_COVERED = "ROLL's FAQ does not cover this; this answer is from slime's FAQ."


# Slime's answer to a question about resuming in ROLL is wrong, and the confidence says so (0.1):
# at the default operating point every channel abstains and says ROLL's FAQ does not cover it
# (`test_at_the_default_point_the_other_faqs_answer_is_not_given`). The rest of this module asks
# at precision 0.25, where every first hit is given, to show how an answer from another FAQ is said.
ANSWER_ALL = 0.25


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


@pytest.fixture(scope="module")
def kb_all(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings.with_(answer_precision=ANSWER_ALL))


@pytest.fixture(scope="module")
def app_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings.with_(slack_signing_secret=SECRET))) as client:
        yield client


@pytest.fixture(scope="module")
def all_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings.with_(slack_signing_secret=SECRET, answer_precision=ANSWER_ALL))) as client:
        yield client


def test_at_the_default_point_the_other_faqs_answer_is_not_given(settings: Settings) -> None:
    kb = KnowledgeBase.open(settings.with_(answer_precision=0.8))
    for question in (ROLL_RESUME, ROLL_RESUME_ZH):
        result = kb.search_blocking(question)
        assert (result.named, result.answered, result.elsewhere) == ("ROLL", False, True)
        assert result.confidence < 0.3
    assert elsewhere_note(kb.search_blocking(ROLL_RESUME), "en") == "ROLL's FAQ does not cover this."


def test_the_search_knows_the_framework_a_question_names(kb: KnowledgeBase, kb_all: KnowledgeBase) -> None:
    named = kb_all.search_blocking(ROLL_RESUME)
    assert (named.named, named.answered, named.hits[0].entry.framework, named.elsewhere) == (
        "ROLL",
        True,
        "slime",
        True,
    )
    covered = kb.search_blocking(SLIME_RESUME)
    assert (covered.named, covered.elsewhere) == ("slime", False)
    unnamed = kb.search_blocking("how do I resume training")
    assert (unnamed.named, unnamed.elsewhere) == (None, False)
    nothing = kb.search_blocking(ROLL_PIZZA)
    # The nearest entry is ROLL's own ("How to debug code?"): not sure, but not said to be missing from ROLL's FAQ.
    assert (nothing.named, nothing.answered, nothing.elsewhere) == ("ROLL", False, False)


def test_the_chat_answer_says_which_faq_it_comes_from(kb: KnowledgeBase, kb_all: KnowledgeBase) -> None:
    result = kb_all.search_blocking(ROLL_RESUME)
    answer = compose_answer(result.in_language("en"), "en")
    assert answer.answered and answer.text.startswith(f"*{NOT_COVERED}*\n\n")
    zh = kb_all.search_blocking(ROLL_RESUME_ZH)
    assert compose_answer(zh.in_language("zh"), "zh").text.startswith(
        "*ROLL 的 FAQ 没有涉及这个问题；这个答案来自 slime 的 FAQ。*"
    )
    nothing = compose_answer(kb.search_blocking(ROLL_PIZZA).in_language("en"), "en")
    assert not nothing.answered and nothing.text.startswith("No confident answer in the FAQ. The nearest entries:\n")
    assert elsewhere_note(kb.search_blocking(SLIME_RESUME), "zh") == ""
    assert "FAQ does not cover" not in compose_answer(kb.search_blocking(SLIME_RESUME).in_language("en"), "en").text


def test_the_api_carries_the_note_in_the_readers_language(app_client: TestClient, all_client: TestClient) -> None:
    body = all_client.get("/api/search", params={"q": ROLL_RESUME}).json()
    assert body["note"] == NOT_COVERED and body["hits"][0]["source"]["framework"] == "slime"
    assert all_client.get("/api/search", params={"q": ROLL_RESUME, "hl": "zh"}).json()["note"].startswith("ROLL 的 FAQ")
    assert app_client.get("/api/search", params={"q": SLIME_RESUME}).json()["note"] is None
    chat = all_client.post("/api/chat", json={"message": ROLL_RESUME}).json()
    assert chat["answer"].startswith(f"*{NOT_COVERED}*") and chat["sources"][0]["source"]["framework"] == "slime"
    assert chat["note"] == NOT_COVERED
    assert (
        all_client.post("/api/chat", json={"message": ROLL_RESUME, "hl": "zh"}).json()["note"].startswith("ROLL 的 FAQ")
    )
    assert app_client.post("/api/chat", json={"message": SLIME_RESUME}).json()["note"] is None


def test_the_search_page_and_the_chat_form_say_so(app_client: TestClient, all_client: TestClient) -> None:
    en = {"Accept-Language": "en"}
    page = all_client.get("/search", params={"q": ROLL_RESUME}, headers=en).text
    assert f'<p class="elsewhere" data-elsewhere >{NOT_COVERED.replace(chr(39), "&#39;")}</p>' in page
    nothing = app_client.get("/search", params={"q": ROLL_PIZZA}, headers=en).text
    assert "does not cover" not in nothing and "data-no-answer-title" in nothing
    plain = app_client.get("/search", params={"q": SLIME_RESUME}, headers=en).text
    assert "data-elsewhere hidden></p>" in plain
    reply = all_client.post(
        "/chat", data={"message": ROLL_RESUME, "form_token": form_token(all_client)}, headers=en
    ).text
    assert '<p class="elsewhere">ROLL&#39;s FAQ does not cover this; this answer is from slime&#39;s FAQ.</p>' in reply
    nothing_reply = app_client.post(
        "/chat", data={"message": ROLL_PIZZA, "form_token": form_token(app_client)}, headers=en
    ).text
    assert "does not cover" not in nothing_reply.split('class="turn bot"')[1]


def test_slack_says_so_above_the_answer(app_client: TestClient, all_client: TestClient) -> None:
    message: dict[str, Any] = post_command(all_client, ROLL_RESUME).json()
    first = message["blocks"][0]
    assert first == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "ROLL's FAQ does not cover this; this answer is from slime's FAQ."}],
    }
    nothing = post_command(app_client, ROLL_PIZZA).json()
    assert nothing["text"] == "The FAQ has no confident answer to this."
    plain = post_command(app_client, SLIME_RESUME).json()
    assert "does not cover" not in json.dumps(plain, ensure_ascii=False) and plain["blocks"][0]["type"] != "context"


@pytest.mark.slow
def test_kb_search_prints_the_note_first(settings: Settings) -> None:
    from tests.support.cli import kb as run_kb

    lines = run_kb("search", ROLL_RESUME, data_dir=settings.data_dir, KB_ANSWER_PRECISION=str(ANSWER_ALL))
    assert lines.stdout.splitlines()[0] == NOT_COVERED
    nothing = run_kb("search", ROLL_PIZZA, data_dir=settings.data_dir).stdout.splitlines()
    assert nothing[0] == "The FAQ has no confident answer to this. Nearest entries, which may not answer it:"
