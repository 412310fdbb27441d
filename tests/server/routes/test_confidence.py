"""The confidence in every JSON answer, and a channel's own operating point, through the JSON API."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kb.settings import Settings
from server.app import create_app

RESUME = "how do I resume training in slime?"  # the confidence is about 0.53: answered at precision 0.6, not 0.8


def test_every_json_channel_gives_the_confidence(settings: Settings) -> None:
    app = create_app(settings.with_(answer_precision=0.8, channel_precision="api=0.6"))
    with TestClient(app) as client:
        search = client.get("/api/search", params={"q": RESUME}).json()
        chat = client.post("/api/chat", json={"message": RESUME}).json()
    assert search["answered"] is True and 0.3 < search["confidence"] < 1
    assert chat["confidence"] == search["confidence"]
    with TestClient(create_app(settings.with_(answer_precision=0.8))) as client:
        assert client.get("/api/search", params={"q": RESUME}).json()["answered"] is False


def test_every_json_channel_names_the_state_beside_answered_and_confidence(settings: Settings) -> None:
    app = create_app(settings.with_(answer_precision=0.8, channel_precision=""))
    with TestClient(app) as client:
        likely = client.get("/api/search", params={"q": RESUME}).json()
        chat = client.post("/api/chat", json={"message": RESUME}).json()
        own = client.get("/api/search", params={"q": "How do I resume training?"}).json()
        far = client.get("/api/search", params={"q": "What is a good recipe for banana bread?"}).json()
    # Under the point but above the floor: not answered, and the first hit may answer.
    assert (likely["answered"], likely["state"]) == (False, "likely")
    assert likely["hits"][0]["question"] == "How do I resume training?"
    assert (chat["answered"], chat["state"]) == (False, "likely") and "may answer" in chat["answer"]
    assert "No confident answer" not in chat["answer"]
    # An entry's own question, asked as it stands: certain.
    assert (own["answered"], own["state"], own["confidence"]) == (True, "answered", 1.0)
    assert (far["answered"], far["state"]) == (False, "not_covered")
    assert list(likely)[:4] == ["query", "answered", "confidence", "state"]


def test_the_search_page_says_may_answer_with_the_first_results_confidence_in_both_languages(
    settings: Settings,
) -> None:
    with TestClient(create_app(settings.with_(answer_precision=0.8, channel_precision=""))) as client:
        confidence = client.get("/api/search", params={"q": RESUME}).json()["confidence"]
        en = client.get("/search", params={"q": RESUME}, headers={"Accept-Language": "en"}).text
        zh = client.get("/search", params={"q": RESUME}, headers={"Accept-Language": "zh"}).text
        own = client.get("/search", params={"q": "How do I resume training?"}, headers={"Accept-Language": "en"}).text
    title = en.split("data-no-answer-title>")[1].split("<")[0]
    assert title == "The first result may answer this, but it is not certain."
    assert f"confidence {confidence:.2f}" in en and 'data-state="likely"' in en
    assert "第一个结果可能回答了你的问题，但没有把握。" in zh and f"置信度 {confidence:.2f}" in zh
    assert "confidence 1.00" in own and 'data-state="answered"' in own


def test_the_chat_without_javascript_shows_the_answer_that_may_answer_apart_then_the_others(
    settings: Settings,
) -> None:
    from tests.support.forms import form_token

    with TestClient(create_app(settings.with_(answer_precision=0.8, channel_precision=""))) as client:
        api = client.post("/api/chat", json={"message": RESUME}).json()
        page = client.post(
            "/chat", data={"message": RESUME, "form_token": form_token(client)}, headers={"Accept-Language": "en"}
        ).text
    assert api["state"] == "likely"
    bubble = page.split('<li class="turn bot">', 1)[1].split("</li>\n", 1)[0]
    notice, rest = bubble.split('<div class="likely-answer" data-likely>', 1)
    assert "The first entry may answer this (confidence" in notice and "no confident answer" not in bubble
    box = rest.split("Other entries", 1)[0]
    assert "May answer, not certain" in box and "--load" in box and "Quoted from the FAQ" in box
    assert bubble.count("Quoted from the FAQ") == 1
    assert 'href="/entries/' + api["sources"][1]["id"] + '"' in bubble.split("Other entries", 1)[1]
    # The API's answer text: the line, the entry's answer quoted apart, its source, then the other entries.
    opening, quoted = api["answer"].split("\n\n", 1)
    assert opening.startswith("The first entry may answer this") and "> Simply set the `--load`" in quoted
    assert "Other entries:" in quoted and "Quoted" not in api["answer"]
