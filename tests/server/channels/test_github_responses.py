"""Malformed responses from GitHub's API, from a stand-in (a real HTTP server on a loopback port: GitHub itself cannot
run here) that answers each call with what a broken proxy or a hostile server might: each becomes one
`GitHubUnavailable` naming the call and what was wrong, and a 300 MB answer is not read whole."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Iterator

import pytest
from fastapi import FastAPI
from fastapi.responses import Response, StreamingResponse
from fastapi.testclient import TestClient

from server.app import create_app
from server.channels.github.client import GitHubAPI, GitHubUnavailable
from tests.support.github import SECRET, delivery, issue_event
from tests.support.servers import own_data
from trackers.github.responses import MAX_RESPONSE_BYTES

HTML = b"<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>"
ANSWERS: dict[str, tuple[bytes, str]] = {  # what the stand-in answers, by name
    "html": (HTML, "text/html"),
    "object": (b'{"message": "not a list"}', "application/json"),
    "list": (b'[{"html_url": "x"}]', "application/json"),
    "long number": (b'[{"id": ' + b"9" * 5_000 + b', "body": "<!-- kb-faq-bot -->"}]', "application/json"),
    "wrong types": (b'[{"id": "one", "body": "<!-- kb-faq-bot -->", "user": {"login": "kb-bot"}}]', "application/json"),
    "reactions of wrong types": (b'[{"user": "me", "content": 5}, 7, {"user": {"login": ["x"]}}]', "application/json"),
    "nested": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
}
HUGE = 300 * 1024 * 1024


class Malformed:
    """A stand-in for GitHub's API answering every call with `self.answer` (a name of ANSWERS, or "huge")."""

    def __init__(self, serve: Callable[..., Any]) -> None:
        self.answer = "html"
        self.sent = 0
        app = FastAPI()

        @app.api_route("/{path:path}", methods=["GET", "POST", "PATCH"])
        async def anything(path: str) -> Response:
            if self.answer == "huge":
                return StreamingResponse(self._huge(), media_type="application/json")
            body, media = ANSWERS[self.answer]
            return Response(body, media_type=media, status_code=201 if path.endswith("comments") else 200)

        self.url = serve(app).url

    def _huge(self) -> Iterator[bytes]:
        chunk = b" " * (1024 * 1024)
        for _ in range(HUGE // len(chunk)):
            self.sent += len(chunk)
            yield chunk


@pytest.fixture(scope="module")
def stand_in(serve: Callable[..., Any]) -> Malformed:
    return Malformed(serve)


@pytest.fixture
def api(stand_in: Malformed) -> str:
    """The stand-in's address: each call makes its own client there, as an async client belongs to one loop."""
    return stand_in.url


def _run(call: Callable[[GitHubAPI], Any]) -> Callable[[str], Any]:
    """`call` on a client of its own, in an event loop of its own, its connections closed after."""

    async def once(url: str) -> Any:
        own = GitHubAPI(url, "ghp-test-token", login="kb-bot")
        try:
            return await call(own)
        finally:
            await own.aclose()

    return lambda url: asyncio.run(once(url))


CALLS: dict[str, Callable[[str], Any]] = {
    "find_issue_comment": _run(lambda api: api.find_issue_comment("owner/repo", 1, "<!-- kb-faq-bot -->")),
    "reactions": _run(lambda api: api.reactions("owner/repo", 100)),
    "comment_on_issue": _run(lambda api: api.comment_on_issue("owner/repo", 1, "hello")),
    "upsert_issue_comment": _run(lambda api: api.upsert_issue_comment("owner/repo", 1, "hello", "<!-- kb-faq-bot -->")),
    "comment_on_discussion": _run(lambda api: api.comment_on_discussion("D_1", "hello")),
}


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("call", list(CALLS))
def test_a_malformed_answer_is_a_clear_error_or_read_safely(
    stand_in: Malformed, api: str, call: str, answer: str
) -> None:
    stand_in.answer = answer
    try:
        got = CALLS[call](api)
    except GitHubUnavailable as exc:
        said = str(exc)
        assert said.startswith(("GET /", "POST /", "PATCH /", "commenting on")) and len(said) < 400, said
        return
    # What was read safely is of the types the bot uses.
    assert got is None or isinstance(got, (str, list, dict)), got
    if call == "reactions":
        assert all(isinstance(who, str) and isinstance(what, str) for who, what in got)


def test_the_errors_say_what_was_wrong(stand_in: Malformed, api: str) -> None:
    said = {}
    for answer, call in [("html", "reactions"), ("object", "reactions"), ("list", "comment_on_issue")]:
        stand_in.answer = answer
        with pytest.raises(GitHubUnavailable) as raised:
            CALLS[call](api)
        said[answer] = str(raised.value)
    assert said == {
        "html": f"GET /repos/owner/repo/issues/comments/100/reactions: the answer is not JSON (text/html, {len(HTML)} bytes)",
        "object": "GET /repos/owner/repo/issues/comments/100/reactions: the answer is a JSON object, not a list",
        "list": "POST /repos/owner/repo/issues/1/comments: the answer is a JSON list, not an object",
    }
    stand_in.answer = "long number"
    with pytest.raises(GitHubUnavailable, match="a number too long to read"):
        CALLS["find_issue_comment"](api)
    stand_in.answer = "wrong types"
    with pytest.raises(GitHubUnavailable, match="the answer's id is not an id"):
        CALLS["find_issue_comment"](api)


def test_a_300_mb_answer_is_refused_once_past_the_cap(stand_in: Malformed, api: str) -> None:
    stand_in.answer, stand_in.sent = "huge", 0
    started = time.perf_counter()
    with pytest.raises(GitHubUnavailable, match="the answer is over 16 MiB; not read"):
        CALLS["reactions"](api)
    assert stand_in.sent < HUGE / 4 and MAX_RESPONSE_BYTES == 16 * 1024 * 1024
    assert time.perf_counter() - started < 30


def test_a_malformed_answer_is_one_log_line_of_the_webhook(
    stand_in: Malformed, settings: Any, caplog: pytest.LogCaptureFixture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stand_in.answer = "long number"
    own = own_data(settings, tmp_path_factory, "github-malformed").with_(  # its deliveries its own
        github_webhook_secret=SECRET,
        github_api_url=stand_in.url,
        github_mode="comment",
        github_token="ghp-test-token",
        channel_precision="github=0.25",
    )
    body, headers = delivery("issues", issue_event("How do I resume training in slime after it stopped?"))
    with TestClient(create_app(own)) as client, caplog.at_level(logging.INFO):
        assert client.post("/github/webhook", content=body, headers=headers).status_code == 202
    said = [r for r in caplog.records if "owner/repo#1" in r.getMessage()]
    assert [r.getMessage() for r in said] == [
        "GitHub: the answer to owner/repo#1 was not posted: GET /user: the answer holds a number too long to read"
    ]
    assert not any(r.exc_info for r in caplog.records)
