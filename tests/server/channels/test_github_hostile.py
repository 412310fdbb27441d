"""Hostile deliveries to the GitHub webhook of a real uvicorn, with GitHub's API as a stand-in (a real HTTP server on
a loopback port: GitHub itself cannot run here): bodies of the largest size GitHub allows that made a pattern
backtrack, numbers too long for Python to read, fields of the wrong type, long issues and long `/faq` questions."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from typing import Any, Callable

import httpx
import pytest

from server.app import create_app
from tests.support.github import SECRET, GitHubStandIn, comment_event, delivery, issue_event, push_event
from tests.support.servers import own_data

RESUME = "How do I resume training in slime after it stopped?"
BODY = 65_536  # GitHub's limit on an issue's body

HOSTILE = {
    "line breaks": "\n" * (BODY - 14),
    "unclosed comments": "<!--" * (BODY // 4),
    "comments and line breaks": "<!--\n" * (BODY // 5),
    "spaces and line breaks": " \n" * (BODY // 2),
    "unchecked boxes": "- [ ]\n" * (BODY // 6),
    "no responses": "  _No response_ \n" * (BODY // 17),
    "open brackets": "[" * BODY,
    "backticks": "`" * BODY,
}


@pytest.fixture(scope="module")
def github(serve: Callable[..., Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture(scope="module")
def url(
    serve: Callable[..., Any], settings: Any, github: GitHubStandIn, tmp_path_factory: pytest.TempPathFactory
) -> str:
    own = own_data(settings, tmp_path_factory, "github-hostile").with_(  # its deliveries its own
        github_webhook_secret=SECRET,
        github_api_url=github.url,
        github_mode="comment",
        github_token="ghp-test-token",
        channel_precision="github=0.25",
        rate_limit="off",
    )
    return str(serve(create_app(own)).url)


def post(url: str, event: str, payload: dict[str, Any] | bytes, header: str = "") -> httpx.Response:
    body, headers = delivery(event, payload) if isinstance(payload, dict) else _signed(event, payload)
    if header:
        headers["X-GitHub-Event"] = header
    return httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60)


def _signed(event: str, body: bytes) -> tuple[bytes, dict[str, str]]:
    """A body as given (not made from a dict), signed as GitHub signs its deliveries."""
    _, headers = delivery(event, {})
    headers["X-Hub-Signature-256"] = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, headers


def wait_for(found: Callable[[], Any], seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := found()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


@pytest.mark.slow
def test_hostile_issue_bodies_do_not_stall_the_server(url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Each hostile body of GitHub's largest size is acknowledged at once, and /healthz keeps answering in well
    under a second while the bot reads it (a body of line breaks had stalled the whole server for 31 s)."""
    with caplog.at_level(logging.INFO, logger="kb.server"):  # the first search loads what searches share
        assert post(url, "issues", issue_event(RESUME, "It stopped.", number=99)).status_code == 202
        assert wait_for(lambda: _logged(caplog, "GitHub owner/repo#99: ", 1))
    slowest = {"healthz": 0.0, "delivery": 0.0}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            started = time.perf_counter()
            assert httpx.get(f"{url}/healthz", timeout=60).status_code == 200
            slowest["healthz"] = max(slowest["healthz"], time.perf_counter() - started)
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    numbers = range(100, 100 + len(HOSTILE))
    try:
        with caplog.at_level(logging.INFO, logger="kb.server"):
            for number, body in zip(numbers, HOSTILE.values()):
                for action in ("opened", "edited"):
                    started = time.perf_counter()
                    response = post(url, "issues", issue_event(RESUME, body, action=action, number=number))
                    slowest["delivery"] = max(slowest["delivery"], time.perf_counter() - started)
                    assert response.status_code == 202, response.text
            answered = wait_for(lambda: all(_logged(caplog, f"GitHub owner/repo#{n}: ", 2) for n in numbers))
    finally:
        done.set()
        watcher.join()
    assert answered  # each delivery was read and answered (or judged not sure enough), as its log line says
    assert slowest["healthz"] < 1.0 and slowest["delivery"] < 1.0, slowest


def _logged(caplog: pytest.LogCaptureFixture, start: str, times: int) -> bool:
    return sum(r.getMessage().startswith(start) for r in list(caplog.records)) >= times


NUMBER = "9" * 5_000  # Python reads integers of at most 4,300 digits from text


@pytest.mark.parametrize(
    ("event", "body"),
    [
        ("issues", json.dumps(issue_event(RESUME)).replace('"number": 1', f'"number": {NUMBER}')),
        ("push", json.dumps(push_event("https://example.com/x.git")).replace('"private": false', f'"size": {NUMBER}')),
        ("issue_comment", json.dumps(comment_event("/faq resume?")).replace('"locked": false', f'"locked": {NUMBER}')),
    ],
    ids=["issues", "push", "issue_comment"],
)
def test_a_signed_body_with_a_number_too_long_to_read_gets_a_clear_400(url: str, event: str, body: str) -> None:
    response = post(url, event, body.encode())
    assert response.status_code == 400
    assert "a number too long to be GitHub's" in response.text


def test_labels_that_are_not_a_list_get_a_clear_400(url: str) -> None:
    payload = issue_event(RESUME)
    payload["issue"]["labels"] = 5
    response = post(url, "issues", payload)
    assert response.status_code == 400 and "issue.labels: not a list" in response.text


def test_the_reply_says_back_only_the_start_of_an_unsigned_event_name(url: str) -> None:
    response = post(url, "ping", {"zen": "Keep it simple."}, header="x" * 10_000)
    assert response.status_code == 202 and response.json() == {"ok": True, "done": f"nothing to answer ({'x' * 64})"}


def test_a_long_issue_is_answered_from_its_question(url: str, github: GitHubStandIn, caplog: Any) -> None:
    """An issue of 2,001 to 6,000 characters is read as its question, cut to the search's limit, and answered."""
    body = "Training stopped halfway through the second epoch and I want to go on from the checkpoint. " * 50
    assert 4_000 < len(body) < 6_000
    with caplog.at_level(logging.INFO, logger="kb.server"):
        assert post(url, "issues", issue_event(RESUME, body, number=7)).status_code == 202
        comments = wait_for(lambda: github.on("owner/repo#7"))
    assert comments and "--load" in comments[0]


def test_a_long_faq_question_gets_a_reply(url: str, github: GitHubStandIn) -> None:
    asked = "/faq " + "how do I resume training in slime after it stopped? " * 100
    assert len(asked) > 5_000
    assert post(url, "issue_comment", comment_event(asked, number=8)).status_code == 202
    replies = wait_for(lambda: github.on("owner/repo#8"))
    assert replies and "--load" in replies[0]
