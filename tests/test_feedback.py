"""Votes (`POST /api/feedback`) and the recording of questions from every channel, on a real SQLite
file per test: one vote per answer per browser session, errors that say what was wrong, no lost
rows under concurrent requests, and a database that cannot be written never costing an answer."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from test_slack import SECRET, command_body, interaction_body, slack_headers

from kb.insights import InsightsStore, Question, store_path
from kb.settings import Settings
from server import create_app
from server.recording import Recorder, related_typing

RESUME = "slime-b0ab398d"  # 如何续训？


@pytest.fixture
def own(settings: Settings, tmp_path: Path) -> Settings:
    """The session's index, with a data directory (and so an insights database) of this test's own."""
    (tmp_path / "index").symlink_to(settings.index_dir)
    return settings.with_(data_dir=tmp_path)


@pytest.fixture
def client(own: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(own)) as client:
        yield client


def rows(client: TestClient, sql: str) -> list[tuple[Any, ...]]:
    assert client.app.state.recorder.flush()  # type: ignore[attr-defined]
    with sqlite3.connect(store_path(client.app.state.settings.data_dir)) as db:  # type: ignore[attr-defined]
        return db.execute(sql).fetchall()


def vote(client: TestClient, **body: Any) -> httpx.Response:
    return client.post("/api/feedback?channel=web", json={"entry_id": RESUME, "message": "如何续训", "helpful": True, **body})


def test_a_vote_is_recorded_with_its_answer_reason_comment_and_a_session_cookie(client: TestClient) -> None:
    response = vote(client, helpful=False, reason="outdated", comment="  --load changed in v0.2  ")
    assert response.status_code == 202 and response.json() == {"ok": True}
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("kb_session=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Max-Age" not in cookie and "expires" not in cookie.lower()  # a browser-session cookie
    session = client.cookies["kb_session"]
    [(entry, question, helpful, channel, reason, comment, voter)] = rows(
        client, "SELECT entry_id, question, helpful, channel, reason, comment, voter FROM votes"
    )
    assert (entry, question, helpful, channel, reason, comment) == (RESUME, "如何续训", 0, "web", "outdated", "--load changed in v0.2")
    assert len(voter) == 32 and session not in voter


def test_one_vote_per_answer_per_browser_session(client: TestClient, own: Settings) -> None:
    for helpful in (True, False, True, False, False):
        assert vote(client, helpful=helpful).status_code == 202
    assert rows(client, "SELECT helpful FROM votes") == [(0,)]  # five clicks, one vote: the last
    assert vote(client, message="how do I resume training").status_code == 202  # another question: another answer

    with TestClient(create_app(own)) as other_browser:
        assert vote(other_browser).status_code == 202
    cookieless = TestClient(client.app)  # a client that sends no cookies (the widget on another site) names its session
    for _ in range(3):
        assert vote(cookieless, session="widget-session-1").status_code == 202
    assert rows(client, "SELECT count(*), sum(helpful) FROM votes") == [(4, 3)]


@pytest.mark.parametrize(("body", "query", "status", "error"), [
    ({"entry_id": "nope"}, "", 404, "no entry with id 'nope'"),
    ({"message": "  "}, "", 422, "message: the question the answer was for is empty"),
    ({"message": "x" * 2001}, "", 422, "message: the question is 2001 characters; the limit is 2000"),
    ({"reason": "wrong"}, "", 422, "reason: 'wrong' is a reason for `helpful: false`; this vote is helpful"),
    ({"helpful": False, "reason": "boring"}, "", 422,
     "reason: Input should be 'wrong', 'outdated', 'incomplete', 'unclear' or 'off_topic'"),
    ({"comment": "x" * 1001}, "", 422, "comment: String should have at most 1000 characters"),
    ({"session": "short"}, "", 422, "session: String should have at least 8 characters"),
    ({}, "?channel=slack", 422, "channel: Input should be 'web', 'widget' or 'api'"),
])
def test_a_vote_that_cannot_be_taken_says_why(
    client: TestClient, body: dict[str, Any], query: str, status: int, error: str
) -> None:
    payload = {"entry_id": RESUME, "message": "如何续训", "helpful": True, **body}
    response = client.post(f"/api/feedback{query}", json=payload)
    assert (response.status_code, response.json()) == (status, {"ok": False, "error": error, "status": status})
    assert rows(client, "SELECT count(*) FROM votes") == [(0,)]


def test_questions_are_recorded_with_their_channel_language_and_outcome(client: TestClient) -> None:
    widget_page = {"Origin": "https://docs.example.com"}
    assert client.get("/api/search", params={"q": "如何续训"}).status_code == 200
    assert client.get("/api/search", params={"q": "OOM", "channel": "web"}).status_code == 200
    assert client.get("/api/search", params={"q": "how do I bake bread"}, headers=widget_page).status_code == 200
    assert client.get("/api/search", params={"q": "ray hangs"}, headers={"Origin": "http://testserver"}).status_code == 200
    assert client.post("/api/chat", json={"message": "how do I resume training in slime?"}).status_code == 200
    history = [{"role": "user", "content": "slime 训练时 OOM 怎么办？"}, {"role": "assistant", "content": "..."}]
    stream = client.post("/api/chat?channel=widget", json={"message": "那 ROLL 呢？", "history": history},
                         headers={"Accept": "text/event-stream", **widget_page})
    assert stream.status_code == 200 and "event: done" in stream.text
    assert client.get("/search", params={"q": "怎么烤面包"}).status_code == 200
    assert client.post("/chat", data={"message": "what is the weather in Paris?", "history": "[]"}).status_code == 200
    recorded = rows(client, "SELECT text, lang, channel, kind, answered, top_entry IS NOT NULL, top_score IS NOT NULL, "
                            "latency_ms > 0 FROM questions ORDER BY id")
    assert recorded == [
        ("如何续训", "zh", "api", "search", 1, 1, 1, 1),
        ("OOM", "en", "web", "search", 1, 1, 1, 1),
        ("how do I bake bread", "en", "widget", "search", 0, 1, 1, 1),
        ("ray hangs", "en", "api", "search", 1, 1, 1, 1),
        ("how do I resume training in slime?", "en", "api", "chat", 1, 1, 1, 1),
        ("训练时 OOM 怎么办？ 那 ROLL 呢？", "zh", "widget", "chat", 1, 1, 1, 1),  # the follow-up, as searched
        ("怎么烤面包", "zh", "web", "search", 0, 1, 1, 1),
        ("what is the weather in Paris?", "en", "web", "chat", 0, 1, 1, 1),
    ]
    top = client.get("/api/search", params={"q": "如何续训"}).json()["hits"][0]
    assert rows(client, "SELECT top_entry, top_score FROM questions WHERE id = 1") == [(top["id"], top["score"])]


def test_a_run_of_typed_searches_is_recorded_once(client: TestClient) -> None:
    typed = ["how", "how do I", "how do I resu", "how do I resume", "how do I resume training"]
    for text in typed:
        client.get("/api/search", params={"q": text, "channel": "web", "live": "box-1"})
    client.get("/api/search", params={"q": "如何", "channel": "web", "live": "box-2"})  # another reader's box
    client.get("/api/search", params={"q": "OOM", "channel": "web", "live": "box-1"})  # a new question in the box
    client.get("/api/search", params={"q": "如何续训", "channel": "web", "live": "box-2"})
    recorded = rows(client, "SELECT text FROM questions ORDER BY text")
    assert recorded == [("OOM",), ("how do I resume training",), ("如何续训",)]


def test_a_typed_search_is_written_once_the_reader_pauses(own: Settings) -> None:
    store = InsightsStore(store_path(own.data_dir))
    recorder = Recorder(store, own, quiet=0.2)
    try:
        for text in ("OO", "OOM"):
            recorder._put(("box", Question(text, "en", "web", False, "e", 0.01, 5.0)))
        time.sleep(0.05)
        assert store.count("questions") == 0  # still typing, as far as the writer knows
        deadline = time.monotonic() + 5
        while store.count("questions") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [q.text for q in store.unanswered(0)] == ["OOM"]
    finally:
        recorder.close()


@pytest.mark.parametrize(("before", "after", "related"), [
    ("how do", "how do I resume", True),
    ("how do I resume", "how do", True),  # deleting back
    ("how do I resuem", "how do I resume training", True),  # a typo fixed as the reader goes
    ("如何", "如何续训", True),
    ("OOM", "how do I resume training", False),
    ("slime OOM", "slime resume", False),
    ("", "OOM", False),
])
def test_which_searches_continue_the_one_before(before: str, after: str, related: bool) -> None:
    assert related_typing(before, after) is related


def test_a_database_that_cannot_be_opened_costs_no_answer(
    own: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    store_path(own.data_dir).mkdir()  # a directory where the database file should be
    with caplog.at_level(logging.WARNING, logger="kb.insights"), TestClient(create_app(own)) as client:
        assert client.get("/api/search", params={"q": "如何续训"}).status_code == 200
        assert client.post("/api/chat", json={"message": "如何续训"}).status_code == 200
        page = client.get("/search", params={"q": "如何续训"})
        assert page.status_code == 200 and "vote-template" not in page.text and "feedback.js" not in page.text
        assert client.get("/api/widget-config").json()["feedback"] is False
        response = vote(client)
        assert response.status_code == 503
        assert response.json()["error"].startswith(
            f"feedback is off: insights database {store_path(own.data_dir)}: cannot be opened (OperationalError: "
        )
    assert any(
        r.levelno == logging.WARNING and r.getMessage().startswith("questions and votes are not recorded, and feedback is off: ")
        for r in caplog.records
    )


def test_a_locked_database_logs_a_warning_and_every_answer_is_served(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    recorder: Recorder = client.app.state.recorder  # type: ignore[attr-defined]
    assert recorder.store is not None
    recorder.store.busy_timeout = 0.05  # the writer's connection, made on its first write, waits this long
    lock = sqlite3.connect(recorder.store.path, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
    try:
        with caplog.at_level(logging.WARNING, logger="kb.insights"):
            for question in ("如何续训", "OOM", "how do I bake bread"):
                started = time.perf_counter()
                response = client.get("/api/search", params={"q": question})
                assert response.status_code == 200 and response.json()["hits"]
                assert time.perf_counter() - started < 1.0  # the request never waits for the database
            assert vote(client).status_code == 202
            assert recorder.flush()
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("database is locked" in w and "answers are served as usual" in w for w in warnings), warnings
    assert recorder.dropped == 0
    client.get("/api/search", params={"q": "ray hangs"})  # the lock is gone: what waited is recorded too
    deadline = time.monotonic() + 10
    while recorder.waiting and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(rows(client, "SELECT text FROM questions")) == [("OOM",), ("how do I bake bread",), ("ray hangs",), ("如何续训",)]
    assert rows(client, "SELECT count(*) FROM votes") == [(1,)]


def test_concurrent_requests_over_http_lose_no_rows(own: Settings, serve: Callable[[Any], Any]) -> None:
    app = create_app(own)
    url = serve(app).url
    threads, per_thread = 16, 15
    failures: list[str] = []
    start = threading.Barrier(threads)

    def ask(n: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            start.wait()
            for i in range(per_thread):
                response = http.get("/api/search", params={"q": f"OOM {n} {i}"})
                if response.status_code != 200:
                    failures.append(response.text)
                if i % 5 == 0:
                    response = http.post("/api/feedback", json={"entry_id": RESUME, "message": f"q {n} {i}", "helpful": True})
                    if response.status_code != 202:
                        failures.append(response.text)

    workers = [threading.Thread(target=ask, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert failures == []
    assert app.state.recorder.flush()
    store = app.state.recorder.store
    assert store.count("questions") == threads * per_thread
    assert store.count("votes") == threads * 3


@pytest.fixture
def slack_settings(own: Settings) -> Settings:
    return own.with_(slack_signing_secret=SECRET)


@pytest.mark.parametrize("with_ids", [False, True])
def test_slack_questions_and_votes_are_recorded_without_user_names(slack_settings: Settings, with_ids: bool) -> None:
    with TestClient(create_app(slack_settings.with_(insights_slack_ids=with_ids))) as client:
        body = command_body("slime 如何续训？")
        assert client.post("/slack/command", content=body, headers=slack_headers(body)).status_code == 200
        for action in ("kb_unhelpful", "kb_helpful"):  # the same person changes their mind: one vote
            body = interaction_body(action, RESUME, "")
            assert client.post("/slack/interactive", content=body, headers=slack_headers(body)).status_code == 200
        questions = rows(client, "SELECT text, channel, answered, slack_team, slack_channel FROM questions")
        votes = rows(client, "SELECT entry_id, helpful, channel, question, voter FROM votes")
    ids = ("T0001", "C0001") if with_ids else (None, None)
    assert questions == [("slime 如何续训？", "slack", 1, *ids)]
    [(entry, helpful, channel, question, voter)] = votes
    assert (entry, helpful, channel, question) == (RESUME, 1, "slack", "")
    raw = b"".join(p.read_bytes() for p in slack_settings.data_dir.glob("insights.sqlite*"))
    assert b"ada.lovelace" not in raw and b"U0001" not in raw  # the user's name and id are never written


def test_votes_from_the_widget_on_another_site_count_as_widget(client: TestClient) -> None:
    response = client.post("/api/feedback", json={"entry_id": RESUME, "message": "如何续训", "helpful": True,
                                                  "session": "a-widget-session"}, headers={"Origin": "https://docs.example.com"})
    assert response.status_code == 202 and "set-cookie" not in response.headers
    assert rows(client, "SELECT channel FROM votes") == [("widget",)]


def test_the_feedback_endpoint_is_documented(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/feedback"]["post"]
    assert operation["summary"] == "Vote an answer helpful or not (one vote per answer per browser session)."
    assert set(operation["responses"]) == {"202", "404", "413", "422", "429", "503"}
    schema = client.get("/openapi.json").json()["components"]["schemas"]["FeedbackIn"]
    assert set(schema["properties"]) == {"entry_id", "helpful", "message", "reason", "comment", "session"}
    params = {p["name"] for p in client.get("/openapi.json").json()["paths"]["/api/search"]["get"]["parameters"]}
    assert {"channel", "live"} <= params
    assert json.dumps(operation)  # serialisable as served
