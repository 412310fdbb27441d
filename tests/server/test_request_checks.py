"""What the request checks refuse (server/request_checks.py): bodies, parameters and JSON beyond their limits, each refused with a 4xx naming the field, never a 500.

Bodies over KB_MAX_BODY_BYTES (announced or chunked), chat histories over their limits,
queries of control characters, percent-encoded bytes that are not UTF-8, JSON bodies that
are not UTF-8, and lone surrogates. What is accepted is stored and echoed without the
control characters.
"""

from __future__ import annotations

import json
import socket
from typing import Any, Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.settings import Settings
from kb.text import clean_query
from server import create_app
from server.schemas import MAX_HISTORY_CHARS, MAX_TURN_CHARS, MAX_TURNS, ChatIn
from server.settings import ServerSettings

JSON = {"Content-Type": "application/json"}


def error(response) -> str:
    body = response.json()
    assert body["ok"] is False and body["status"] == response.status_code
    return body["error"]


@pytest.fixture(scope="module")
def small(settings: Settings) -> Iterator[TestClient]:
    """The app with a 4 KiB body limit, so the limit is reached without megabytes of test data."""
    with TestClient(create_app(settings.with_(max_body_bytes=4096)), raise_server_exceptions=False) as client:
        yield client


# --- the body limit ------------------------------------------------------------------------


def test_a_body_announced_over_the_limit_gets_413_naming_the_setting(small: TestClient) -> None:
    response = small.post("/api/chat", content=json.dumps({"message": "x" * 5000}), headers=JSON)
    assert response.status_code == 413
    assert error(response) == "body: the request body is over 4096 bytes (KB_MAX_BODY_BYTES)"


def test_a_chunked_body_is_counted_as_it_arrives(small: TestClient) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the server learns the size only by reading
        yield b'{"message": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    response = small.post("/api/chat", content=chunks(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert "KB_MAX_BODY_BYTES" in error(response)


def test_a_real_server_refuses_a_chunked_body_before_it_ends(settings: Settings, serve: Callable[[Any], Any]) -> None:
    """Over a socket: 413 comes back while the client is still sending, so the body is never all held."""
    server = serve(create_app(settings.with_(max_body_bytes=4096)))
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"x" * 1024
        for _ in range(8):  # 8 KiB sent; the body never ends
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        reply = b""
        while b"KB_MAX_BODY_BYTES" not in reply and (data := sock.recv(65536)):
            reply += data
    reply = reply.decode("latin-1")
    assert reply.startswith("HTTP/1.1 413 ")
    assert '"error":"body: the request body is over 4096 bytes (KB_MAX_BODY_BYTES)"' in reply


def test_a_body_within_the_limit_is_answered(small: TestClient) -> None:
    response = small.post("/api/chat", json={"message": "how do I resume training in slime?"})
    assert response.status_code == 200 and response.json()["sources"]


def test_the_chat_form_over_the_limit_gets_the_error_page(small: TestClient) -> None:
    response = small.post(
        "/chat",
        content=b"message=" + b"x" * 5000,
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html", "Accept-Language": "en"},
    )
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("text/html")
    assert "KB_MAX_BODY_BYTES" in response.text and "<form" in response.text  # the error page, with its search box


def test_slack_bodies_are_limited_too(settings: Settings) -> None:
    with TestClient(create_app(settings.with_(max_body_bytes=4096, slack_signing_secret="s" * 32))) as client:
        response = client.post(
            "/slack/command",
            content=b"text=" + b"x" * 5000,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    assert response.status_code == 413


# --- the chat history --------------------------------------------------------------------


def test_too_many_turns_name_history(client: TestClient) -> None:
    turns = [{"role": "user", "content": "hi"}] * (MAX_TURNS + 1)
    response = client.post("/api/chat", json={"message": "resume training", "history": turns})
    assert response.status_code == 422
    assert error(response).startswith(f"history: List should have at most {MAX_TURNS} items")


def test_a_history_too_long_in_all_names_history(client: TestClient) -> None:
    turns = [{"role": "assistant", "content": "x" * MAX_TURN_CHARS}] * 3
    response = client.post("/api/chat", json={"message": "resume training", "history": turns})
    assert response.status_code == 422
    assert error(response) == (
        f"history: the earlier turns hold {3 * MAX_TURN_CHARS} characters; the limit is {MAX_HISTORY_CHARS} in all"
    )


def test_one_turn_too_long_names_its_place(client: TestClient) -> None:
    turns = [{"role": "user", "content": "x" * (MAX_TURN_CHARS + 1)}]
    response = client.post("/api/chat", json={"message": "resume training", "history": turns})
    assert response.status_code == 422
    assert error(response).startswith("history.0.content: String should have at most")


def test_the_largest_valid_chat_request_fits_the_default_body_limit(settings: Settings) -> None:
    """At the limits, with every character a six-byte escape, the body is still under KB_MAX_BODY_BYTES."""
    per_turn, rest = divmod(MAX_HISTORY_CHARS, MAX_TURNS)
    history = [{"role": "assistant", "content": "续" * (per_turn + (i < rest))} for i in range(MAX_TURNS)]
    request = {"message": "续" * settings.max_query_chars, "history": history, "lang": "zh"}
    ChatIn.model_validate(request)  # valid as it stands
    assert len(json.dumps(request, ensure_ascii=True).encode()) <= ServerSettings().max_body_bytes


# --- control characters and bytes that are not text ------------------------------------------


def test_clean_query_removes_controls_and_keeps_line_breaks_and_tabs() -> None:
    assert clean_query("a\x00b\x1b[0mc\td\r\ne\x85f\ud800g\x7f") == "ab[0mc\td\nefg"
    assert clean_query("slime 如何续训？") == "slime 如何续训？"


def test_control_characters_are_not_searched_nor_echoed(client: TestClient) -> None:
    plain = client.get("/api/search", params={"q": "resume training"}).json()
    dirty = client.get("/api/search", params={"q": "resume\x00 \x1b\x07training\x9b"})
    assert dirty.status_code == 200
    assert dirty.json()["query"] == "resume training"
    assert [h["id"] for h in dirty.json()["hits"]] == [h["id"] for h in plain["hits"]]


def test_a_query_of_nothing_but_control_characters_is_empty(client: TestClient) -> None:
    response = client.get("/api/search", params={"q": "\x00\x01\x02 \x7f"})
    assert response.status_code == 422 and error(response) == "q: the query is empty"


@pytest.mark.parametrize("query", ["%FF%FEresume", "resume%ED%A0%80", "%C3"])
def test_percent_encoded_bytes_that_are_not_utf8_name_the_parameter(client: TestClient, query: str) -> None:
    response = client.get(f"/api/search?k=3&q={query}")
    assert response.status_code == 422
    assert error(response) == "q: not valid UTF-8 (percent-encoded bytes in the URL)"


def test_the_search_page_names_the_parameter_too(client: TestClient) -> None:
    response = client.get("/search?q=%FF", headers={"Accept-Language": "en"})
    assert response.status_code == 422 and "q: not valid UTF-8" in response.text


@pytest.mark.parametrize("path", ["/api/chat", "/api/feedback"])
def test_a_json_body_that_is_not_utf8_names_the_body(client: TestClient, path: str) -> None:
    body = b'{"message": "resume \xff\xfe training", "entry_id": "x", "helpful": true}'
    response = client.post(path, content=body, headers=JSON)
    assert response.status_code == 422
    assert error(response) == "body: not valid UTF-8 (byte 20)"


def test_a_lone_surrogate_in_a_chat_message_is_dropped_not_a_500(client: TestClient) -> None:
    body = b'{"message": "\\ud800how do I resume training in slime?"}'  # half a UTF-16 pair, as JSON allows
    response = client.post("/api/chat", content=body, headers=JSON)
    assert response.status_code == 200
    assert response.json()["answered"] is True


def test_a_turn_that_is_only_a_lone_surrogate_names_its_place(client: TestClient) -> None:
    body = b'{"message": "resume training", "history": [{"role": "user", "content": "\\udfff"}]}'
    response = client.post("/api/chat", content=body, headers=JSON)
    assert response.status_code == 422 and error(response).startswith("history.0.content: ")


def test_nul_bytes_never_reach_the_insights_database(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        recorder = client.app.state.recorder
        chat = client.post("/api/chat", json={"message": "nul\x00 question\x01 about resume"})
        assert chat.status_code == 200
        entry = client.get("/api/search", params={"q": "resume"}).json()["hits"][0]["id"]
        vote = {
            "entry_id": entry,
            "helpful": False,
            "message": "vote\x00 question",
            "comment": "bad\x00 answer",
            "session": chat.json()["session"],
        }
        assert client.post("/api/feedback", json=vote).status_code == 202
        assert recorder.flush()
        db = recorder.store.db
        questions = [text for (text,) in db.rows("SELECT text FROM questions WHERE text LIKE 'nul%'")]
        votes = db.rows("SELECT question, comment FROM votes WHERE question LIKE 'vote%'")
    assert questions == ["nul question about resume"]
    assert votes == [("vote question", "bad answer")]


BIDI = "\u202e\u2066\u200f\u061c\u202a"  # right-to-left override, an isolate, a mark, an embedding


def test_bidirectional_controls_never_reach_the_insights_page(settings: Settings) -> None:
    assert clean_query(f"{BIDI[0]}how do I resume training{BIDI[1:]}?") == "how do I resume training?"
    admin = settings.with_(admin_token="t0ken-for-this-test")
    with TestClient(create_app(admin)) as client:
        recorder = client.app.state.recorder
        assert client.get("/api/search", params={"q": "\u202egniniart emuser od woh"}).status_code == 200
        assert recorder.flush()
        [(text,)] = recorder.store.db.rows("SELECT text FROM questions WHERE text LIKE '%gniniart%'")
        page = client.get("/insights", headers={"Authorization": "Bearer t0ken-for-this-test"}).text
    assert text == "gniniart emuser od woh" and "gniniart emuser od woh" in page
    assert not any(char in page for char in BIDI)
