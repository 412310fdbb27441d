"""Votes (`POST /api/feedback`) and the recording of questions from every channel, on a real SQLite
file per test: one vote per answer per session the server issued, whatever the client makes up,
errors that say what was wrong, no lost rows under concurrent requests, and a database that
cannot be written never costing an answer."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.insights import InsightsStore, Question, Recorder, related_typing, store_path
from kb.settings import Settings
from kbcli.serve import uvicorn_options
from server import create_app
from tests.support.forms import form_token
from tests.support.paths import ROOT
from tests.support.slack import SECRET, command_body, interaction_body, slack_headers

RESUME = "slime-b0ab398d"  # 如何续训？
NO_SESSION = (
    "session: a vote needs a session this server issued: the kb_session cookie its pages set, "
    "or the `session` of an /api/chat reply"
)


@pytest.fixture
def own(settings: Settings, tmp_path: Path) -> Settings:
    """The session's index, with a data directory (and so an insights database) of this test's own."""
    (tmp_path / "index").symlink_to(settings.index_dir)
    return settings.with_(data_dir=tmp_path)


@pytest.fixture
def client(own: Settings) -> Iterator[TestClient]:
    """A browser that has loaded the search page, and so holds the session cookie it set."""
    with TestClient(create_app(own)) as client:
        client.get("/")
        yield client


def rows(client: TestClient, sql: str) -> list[tuple[Any, ...]]:
    assert client.app.state.recorder.flush()  # type: ignore[attr-defined]
    with sqlite3.connect(store_path(client.app.state.settings.data_dir)) as db:  # type: ignore[attr-defined]
        return db.execute(sql).fetchall()


def vote(client: TestClient, **body: Any) -> httpx.Response:
    return client.post(
        "/api/feedback?channel=web", json={"entry_id": RESUME, "message": "如何续训", "helpful": True, **body}
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/", "/search?q=OOM", "/chat"])
def test_pages_with_vote_buttons_set_a_signed_session_cookie_for_the_browser_session(own: Settings, path: str) -> None:
    with TestClient(create_app(own)) as browser:
        cookie = browser.get(path).headers["set-cookie"]
        assert cookie.startswith("kb_session=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert "Max-Age" not in cookie and "expires" not in cookie.lower()  # a browser-session cookie
        assert re.fullmatch(r"[\w-]{24}\.[0-9a-f]{32}", browser.cookies["kb_session"])
        assert "set-cookie" not in browser.get(path).headers  # kept while it is valid


def test_a_vote_is_recorded_with_its_answer_reason_comment_and_a_hash_of_the_session(client: TestClient) -> None:
    response = vote(client, helpful=False, reason="outdated", comment="  --load changed in v0.2  ")
    assert response.status_code == 202 and response.json() == {"ok": True}
    session = client.cookies["kb_session"]
    [(entry, question, helpful, channel, reason, comment, voter)] = rows(
        client, "SELECT entry_id, question, helpful, channel, reason, comment, voter FROM votes"
    )
    assert (entry, question, helpful, channel, reason, comment) == (
        RESUME,
        "如何续训",
        0,
        "web",
        "outdated",
        "--load changed in v0.2",
    )
    assert len(voter) == 32 and voter not in session and session.partition(".")[0] not in voter


def test_one_vote_per_answer_per_session(client: TestClient, own: Settings) -> None:
    for helpful in (True, False, True, False, False):
        assert vote(client, helpful=helpful).status_code == 202
    assert vote(client, message="how do I resume training").status_code == 202  # the same entry for another question
    assert rows(client, "SELECT question, helpful FROM votes") == [("how do I resume training", 1)]  # the last

    with TestClient(create_app(own)) as other_browser:
        other_browser.get("/chat")
        assert vote(other_browser).status_code == 202
    widget = TestClient(client.app)  # sends no cookies; takes its session from a chat reply
    session = widget.post("/api/chat", json={"message": "如何续训"}).json()["session"]
    for _ in range(3):
        assert vote(widget, session=session).status_code == 202
    assert rows(client, "SELECT count(*), sum(helpful) FROM votes") == [(3, 3)]


@pytest.mark.slow
def test_251_votes_by_one_client_with_made_up_sessions_and_varied_questions_count_once(
    own: Settings, serve: Callable[..., Any]
) -> None:
    """A real server: one client votes 251 times, with its cookie, without, or naming a session of its own."""
    app = create_app(own)
    url = serve(app).url
    statuses: list[int] = []
    with httpx.Client(base_url=url) as browser:
        browser.get("/")
        for n in range(251):
            body = {"entry_id": RESUME, "message": f"如何续训 {n}", "helpful": True}
            if n % 3 == 0:
                response = browser.post("/api/feedback", json=body)  # with the session cookie
            elif n % 3 == 1:
                response = browser.post("/api/feedback", json={**body, "session": f"made-up-session-{n}"})
            else:
                response = httpx.post(f"{url}/api/feedback", json=body)  # no cookie at all
            statuses.append(response.status_code)
    assert statuses[:3] == [202, 403, 403]
    assert set(statuses) == {202, 403, 429}
    assert statuses.count(202) == 10 and statuses.index(429) == 30  # past 10 votes on one answer a day, 429
    made_up = [n for n in range(1, 251, 3) if statuses[n] == 429]  # past 60 votes a minute from one client, 429
    assert 60 <= made_up[0] <= 75  # a burst of 60, and one more a second
    assert app.state.recorder.store.count("votes") == 1


def entry_ids(client: TestClient, n: int) -> list[str]:
    ids = [entry.id for entry in client.app.state.reloader.served.kb.entries][:n]  # type: ignore[attr-defined]
    assert len(ids) == n
    return ids


def test_votes_past_the_limit_get_429_with_retry_after(client: TestClient) -> None:
    answers = entry_ids(client, 11)  # 6 votes on each of 10 answers, within the limit on one answer
    assert all(vote(client, entry_id=answers[n % 10]).status_code == 202 for n in range(60))
    response = vote(client, entry_id=answers[10])
    assert response.status_code == 429 and 1 <= int(response.headers["retry-after"]) <= 2
    assert response.json()["error"].startswith(
        "too many votes from this client: the limit is 60 a minute; try again in "
    )


def test_votes_on_one_answer_past_its_limit_get_429_and_other_answers_still_count(client: TestClient) -> None:
    assert all(vote(client, helpful=n % 2 == 0).status_code == 202 for n in range(10))
    response = vote(client)
    assert response.status_code == 429 and 8000 <= int(response.headers["retry-after"]) <= 8640
    assert response.json()["error"].startswith(
        "too many votes on one answer from this client: the limit is 10 a day; try again in "
    )
    other = next(answer for answer in entry_ids(client, 2) if answer != RESUME)
    assert vote(client, entry_id=other).status_code == 202
    assert sorted(rows(client, "SELECT entry_id, helpful FROM votes")) == sorted([(RESUME, 0), (other, 1)])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "query", "status", "error"),
    [
        ({"entry_id": "nope"}, "", 404, "no entry with id 'nope'"),
        ({"message": "  "}, "", 422, "message: the question the answer was for is empty"),
        ({"message": "x" * 2001}, "", 422, "message: the question is 2001 characters; the limit is 2000"),
        ({"reason": "wrong"}, "", 422, "reason: 'wrong' is a reason for `helpful: false`; this vote is helpful"),
        (
            {"helpful": False, "reason": "boring"},
            "",
            422,
            "reason: 'boring' is not allowed; use one of 'wrong', 'outdated', 'incomplete', 'unclear' or 'off_topic'",
        ),
        ({"comment": "x" * 1001}, "", 422, "comment: String should have at most 1000 characters"),
        ({"session": "made-up-session-id"}, "", 403, NO_SESSION),
        ({"session": "A" * 24 + "." + "0" * 32}, "", 403, NO_SESSION),
        ({}, "?channel=slack", 422, "channel: 'slack' is not allowed; use one of 'web', 'widget' or 'api'"),
    ],
)
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
    assert (
        client.get("/api/search", params={"q": "what's the weather in Paris"}, headers=widget_page).status_code == 200
    )
    assert (
        client.get(
            "/api/search", params={"q": "how do I resume training"}, headers={"Origin": "http://testserver"}
        ).status_code
        == 200
    )
    assert client.post("/api/chat", json={"message": "how do I resume training in slime?"}).status_code == 200
    history = [{"role": "user", "content": "slime 训练时 OOM 怎么办？"}, {"role": "assistant", "content": "..."}]
    stream = client.post(
        "/api/chat?channel=widget",
        json={"message": "那 ROLL 呢？", "history": history},
        headers={"Accept": "text/event-stream", **widget_page},
    )
    assert stream.status_code == 200 and "event: done" in stream.text
    assert client.get("/search", params={"q": "怎么烤面包"}).status_code == 200
    form = {"message": "what is the weather in Paris?", "history": "[]", "form_token": form_token(client)}
    assert client.post("/chat", data=form).status_code == 200
    recorded = rows(
        client,
        "SELECT text, lang, channel, kind, answered, top_entry IS NOT NULL, top_score IS NOT NULL, "
        "latency_ms > 0 FROM questions ORDER BY id",
    )
    assert recorded == [
        ("如何续训", "zh", "api", "search", 1, 1, 1, 1),
        ("OOM", "en", "web", "search", 0, 1, 1, 1),  # one word: too little to be sure of (confidence 0.1)
        ("what's the weather in Paris", "en", "widget", "search", 0, 1, 1, 1),
        ("how do I resume training", "en", "api", "search", 1, 1, 1, 1),
        ("how do I resume training in slime?", "en", "api", "chat", 1, 1, 1, 1),
        (
            "训练时 OOM 怎么办？ 那 ROLL 呢？",
            "zh",
            "widget",
            "chat",
            0,
            1,
            1,
            1,
        ),  # the follow-up, as searched; not sure of it
        ("怎么烤面包", "zh", "web", "search", 0, 1, 1, 1),
        ("what is the weather in Paris?", "en", "web", "chat", 0, 1, 1, 1),
    ]
    top = client.get("/api/search", params={"q": "如何续训"}).json()["hits"][0]
    assert rows(client, "SELECT top_entry, top_score FROM questions WHERE id = 1") == [(top["id"], top["score"])]


def test_a_run_of_typed_searches_is_recorded_once(client: TestClient) -> None:
    # The pause that ends a run of typing is longer than this test takes on any machine, however loaded:
    # a run ends here by a new question in the box, or by the flush that reads the rows.
    client.app.state.recorder.quiet = 60.0  # type: ignore[attr-defined]
    typed = ["how", "how do I", "how do I resu", "how do I resume", "how do I resume training"]
    for text in typed:
        client.get("/api/search", params={"q": text, "channel": "web", "live": "box-1"})
    client.get("/api/search", params={"q": "如何", "channel": "web", "live": "box-2"})  # another reader's box
    client.get("/api/search", params={"q": "OOM", "channel": "web", "live": "box-1"})  # a new question in the box
    client.get("/api/search", params={"q": "如何续训", "channel": "web", "live": "box-2"})
    recorded = rows(client, "SELECT text FROM questions ORDER BY text")
    assert recorded == [("OOM",), ("how do I resume training",), ("如何续训",)]


@pytest.mark.slow
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
        assert [q.text for q in store.questions.unanswered(0)] == ["OOM"]
    finally:
        recorder.close()


@pytest.mark.parametrize(
    ("before", "after", "related"),
    [
        ("how do", "how do I resume", True),
        ("how do I resume", "how do", True),  # deleting back
        ("how do I resuem", "how do I resume training", True),  # a typo fixed as the reader goes
        ("如何", "如何续训", True),
        ("OOM", "how do I resume training", False),
        ("slime OOM", "slime resume", False),
        ("", "OOM", False),
    ],
)
def test_which_searches_continue_the_one_before(before: str, after: str, related: bool) -> None:
    assert related_typing(before, after) is related


def test_a_database_that_cannot_be_opened_costs_no_answer(own: Settings, caplog: pytest.LogCaptureFixture) -> None:
    store_path(own.data_dir).mkdir()  # a directory where the database file should be
    with caplog.at_level(logging.WARNING, logger="kb.insights"), TestClient(create_app(own)) as client:
        assert client.get("/api/search", params={"q": "如何续训"}).status_code == 200
        assert client.post("/api/chat", json={"message": "如何续训"}).status_code == 200
        page = client.get("/search", params={"q": "如何续训"})
        assert page.status_code == 200 and "vote-template" not in page.text and "feedback.js" not in page.text
        assert client.get("/api/widget-config").json()["feedback"] is False
        response = vote(client)
        assert response.status_code == 503
        assert response.json()["error"] == "feedback is off: votes cannot be recorded on this server (its log says why)"
        assert client.post("/api/chat", json={"message": "如何续训"}).json()["session"] is None
    assert any(
        r.levelno == logging.WARNING
        and r.getMessage().startswith(
            f"questions and votes are not recorded, and feedback is off: insights database {store_path(own.data_dir)}: "
            "cannot be opened (OperationalError: "
        )
        for r in caplog.records
    )


@pytest.mark.slow
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
            refused = vote(client)  # a vote is written before it is acknowledged: refused, and said so
            assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
            assert refused.json()["error"].startswith(
                f"insights database {recorder.store.path}: the vote was not recorded"
            )
            assert recorder.flush()
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert vote(client).status_code == 202  # tried again once the lock is gone
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("database is locked" in w and "answers are served as usual" in w for w in warnings), warnings
    assert recorder.dropped == 0
    client.get("/api/search", params={"q": "ray hangs"})  # the lock is gone: what waited is recorded too
    deadline = time.monotonic() + 10
    while recorder.waiting and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(rows(client, "SELECT text FROM questions")) == [
        ("OOM",),
        ("how do I bake bread",),
        ("ray hangs",),
        ("如何续训",),
    ]
    assert rows(client, "SELECT count(*) FROM votes") == [(1,)]


@pytest.mark.slow
def test_concurrent_requests_over_http_lose_no_rows(own: Settings, serve: Callable[..., Any]) -> None:
    trusted = own.with_(trusted_proxies="127.0.0.1")  # each client an address of its own, through this proxy
    app = create_app(trusted)
    url = serve(app, **uvicorn_options(trusted)).url
    threads, per_thread = 16, 15
    failures: list[str] = []
    start = threading.Barrier(threads)

    def ask(n: int) -> None:
        with httpx.Client(base_url=url, timeout=60, headers={"X-Forwarded-For": f"198.51.100.{n}"}) as http:
            http.get("/")  # the session cookie
            start.wait()
            for i in range(per_thread):
                response = http.get("/api/search", params={"q": f"OOM {n} {i}"})
                if response.status_code != 200:
                    failures.append(response.text)
                if i % 5 == 0:
                    response = http.post(
                        "/api/feedback", json={"entry_id": RESUME, "message": f"q {n} {i}", "helpful": True}
                    )
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
    assert store.count("votes") == threads  # each session voted three times on one entry


@pytest.mark.slow
@pytest.mark.parametrize(("trusted", "counted"), [("127.0.0.1", 5 * 10), ("", 10)])
def test_200_votes_from_5_addresses_each_with_a_fresh_session_move_an_answer_a_bounded_amount(
    own: Settings, serve: Callable[..., Any], trusted: str, counted: int
) -> None:
    """A real server: 5 addresses (`X-Forwarded-For`, believed from a trusted proxy only) each take 40 sessions from
    chat replies and vote "not helpful" on one answer with each: the answer gets at most 10 votes per address."""
    configured = own.with_(trusted_proxies=trusted)
    app = create_app(configured)
    url = serve(app, **uvicorn_options(configured)).url  # as `kb serve` runs uvicorn
    statuses: dict[str, list[int]] = {}
    sessions: dict[str, set[str]] = {}
    for n in range(5):
        address = f"203.0.113.{n + 1}"
        with httpx.Client(base_url=url, timeout=30, headers={"X-Forwarded-For": address}) as attacker:
            for i in range(40):
                session = attacker.post("/api/chat", json={"message": f"how do I resume training {i}"}).json()[
                    "session"
                ]
                sessions.setdefault(address, set()).add(session)
                body = {
                    "entry_id": RESUME,
                    "message": "如何续训",
                    "helpful": False,
                    "reason": "wrong",
                    "session": session,
                }
                statuses.setdefault(address, []).append(attacker.post("/api/feedback", json=body).status_code)
    taken = [status for address in statuses for status in statuses[address]]
    assert set(taken) <= {202, 429} and taken.count(202) == counted
    if trusted:
        for address in statuses:  # each address: 20 sessions an hour of its own, then one it shares
            assert len(sessions[address]) == 21
            assert statuses[address][:10] == [202] * 10 and set(statuses[address][10:]) == {429}
    assert app.state.recorder.store.count("votes") == counted
    with httpx.Client(base_url=url, headers={"X-Forwarded-For": "192.0.2.7"}) as reader:  # someone else
        reader.get("/")
        vote = {"entry_id": RESUME, "message": "如何续训", "helpful": True}
        assert reader.post("/api/feedback", json=vote).status_code == (202 if trusted else 429)


@pytest.fixture
def slack_settings(own: Settings) -> Settings:
    return own.with_(slack_signing_secret=SECRET)


@pytest.mark.parametrize("with_ids", [False, True])
def test_slack_questions_and_votes_are_recorded_without_user_names(slack_settings: Settings, with_ids: bool) -> None:
    with TestClient(create_app(slack_settings.with_(insights_slack_ids=with_ids))) as client:
        body = command_body("slime 如何续训？", channel_id="C0001")
        assert client.post("/slack/command", content=body, headers=slack_headers(body)).status_code == 200
        for action in ("kb_unhelpful", "kb_helpful"):  # the same person changes their mind: one vote
            body = interaction_body(action, RESUME, "")
            assert client.post("/slack/interactive", content=body, headers=slack_headers(body)).status_code == 200
        questions = rows(client, "SELECT text, channel, answered, chat_workspace, chat_conversation FROM questions")
        votes = rows(client, "SELECT entry_id, helpful, channel, question, voter FROM votes")
    ids = ("T0001", "C0001") if with_ids else (None, None)
    assert questions == [("slime 如何续训？", "slack", 1, *ids)]
    [(entry, helpful, channel, question, voter)] = votes
    assert (entry, helpful, channel, question) == (RESUME, 1, "slack", "")
    raw = b"".join(p.read_bytes() for p in slack_settings.data_dir.glob("insights.sqlite*"))
    assert b"ada.lovelace" not in raw and b"U0001" not in raw  # the user's name and id are never written


def test_votes_from_the_widget_on_another_site_count_as_widget(own: Settings) -> None:
    widget_page = {"Origin": "https://docs.example.com"}
    with TestClient(create_app(own)) as widget:
        session = widget.post("/api/chat", json={"message": "如何续训"}, headers=widget_page).json()["session"]
        response = widget.post(
            "/api/feedback",
            json={"entry_id": RESUME, "message": "如何续训", "helpful": True, "session": session},
            headers=widget_page,
        )
        assert response.status_code == 202 and "set-cookie" not in response.headers
        assert rows(widget, "SELECT channel FROM votes") == [("widget",)]


def test_the_feedback_endpoint_is_documented(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/feedback"]["post"]
    assert operation["summary"] == "Vote an answer helpful or not (one vote per answer per session)."
    assert set(operation["responses"]) == {"202", "403", "404", "413", "422", "429", "503"}
    schema = client.get("/openapi.json").json()["components"]["schemas"]["FeedbackIn"]
    assert set(schema["properties"]) == {"entry_id", "helpful", "message", "reason", "comment", "session"}
    params = {p["name"] for p in client.get("/openapi.json").json()["paths"]["/api/search"]["get"]["parameters"]}
    assert {"channel", "live"} <= params
    assert json.dumps(operation)  # serialisable as served


def test_docs_insights_lists_every_field_and_reason_the_feedback_api_takes() -> None:
    from kb.insights import REASONS
    from server.routes.feedback import FeedbackIn

    page = (ROOT / "docs" / "insights.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| `")}
    assert {f"`{name}`" for name in FeedbackIn.model_fields} <= rows
    reason_row = next(line for line in page.splitlines() if line.startswith("| `reason` |"))
    assert [r for r in REASONS if f"`{r}`" not in reason_row] == []


def test_questions_keep_the_best_entrys_lead_and_the_question_asked_just_before(client: TestClient) -> None:
    """What the insights page needs to find answers that may be wrong."""
    first = "how do I resume training in slime?"
    again = "how can I continue slime training from my last checkpoint"
    reply = client.post("/api/chat", json={"message": first}).json()
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": reply["answer"]}]
    client.post("/api/chat", json={"message": again, "history": history})
    client.post(
        "/api/chat", json={"message": "what about for ROLL?", "history": history}
    )  # a follow-up, not asked again
    for typed in ("colocate mode", "NCCL timeout"):  # one search box, two questions
        client.get("/api/search", params={"q": typed, "live": "box-1", "channel": "web"})
    recorded = {
        text: (previous, margin)
        for text, previous, margin in rows(client, "SELECT text, previous, margin FROM questions")
    }
    assert recorded[first][0] is None and recorded[again][0] == first
    assert next(p for t, (p, _) in recorded.items() if t.endswith("what about for ROLL?")) is None
    assert recorded["colocate mode"][0] is None and recorded["NCCL timeout"][0] == "colocate mode"
    assert [h["id"] for h in reply["sources"]] == ["slime-b0ab398d"] and recorded[first][1] is None  # no second shown
    close = "OOM when training with vLLM"  # an answer shown with related entries: its lead over the first of them
    sources = client.post("/api/chat", json={"message": close}).json()["sources"]
    best, second = (h["score"] for h in sources[:2])
    lead = next(
        margin for text, _, margin in rows(client, "SELECT text, previous, margin FROM questions") if text == close
    )
    assert lead == pytest.approx(best - second, abs=1e-6)
