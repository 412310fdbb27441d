"""Requests anyone can send, hostile ones included, against a real server (uvicorn on a loopback port):
each gets a 4xx that says what was wrong and at most one log line, never a 500 or a traceback, and
a flood of refused Slack requests cannot flood the log."""

from __future__ import annotations

import html
import json
import logging
import time
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

import httpx
import pytest

from kb.settings import Settings
from server import create_app
from tests.support.forms import form_token
from tests.support.slack import SECRET, command_body, slack_headers

TOKEN = "correct-horse-battery-staple"


@pytest.fixture(scope="module")
def url(settings: Settings, serve: Callable[[Any], Any]) -> str:
    return serve(create_app(settings.with_(slack_signing_secret=SECRET, admin_token=TOKEN))).url


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The log while the test runs (warnings and above)."""
    with caplog.at_level(logging.WARNING):
        yield caplog


def server_lines(logged: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in logged.records if r.name.startswith(("kb", "uvicorn"))]


def test_a_slack_timestamp_of_400_digits_is_refused_before_the_signature(
    url: str, logged: pytest.LogCaptureFixture
) -> None:
    body = command_body("how do I resume training")
    headers = {**slack_headers(body), "X-Slack-Request-Timestamp": "9" * 400}
    response = httpx.post(f"{url}/slack/command", content=body, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == (
        "not a valid Slack request: X-Slack-Request-Timestamp has 400 digits; a Unix time in seconds has at most 12"
    )
    [line] = server_lines(logged)
    assert line.levelno == logging.WARNING and line.exc_info is None and "has 400 digits" in line.getMessage()


@pytest.mark.slow
def test_a_flood_of_refused_slack_requests_logs_a_bounded_number_of_lines(
    settings: Settings, serve: Callable[[Any], Any], logged: pytest.LogCaptureFixture
) -> None:
    # A server of its own: the module's server has spent part of its burst on other tests' requests.
    url = serve(create_app(settings.with_(slack_signing_secret=SECRET, admin_token=TOKEN))).url
    logged.clear()
    body = command_body("how do I resume training")
    started = time.monotonic()
    sent = 0
    with httpx.Client(base_url=url) as http:
        # A thousand at least, and for long enough (1.5 s) that the budget lets one more line through.
        while sent < 1000 or time.monotonic() - started < 1.5:
            headers = {**slack_headers(body), "X-Slack-Request-Timestamp": str(sent)}
            assert http.post("/slack/interactive", content=body, headers=headers).status_code == 401
            sent += 1
    seconds = time.monotonic() - started
    lines = server_lines(logged)
    assert 60 <= len(lines) <= 60 + seconds + 1, (len(lines), seconds)  # a burst of 60, then one a second
    assert "more like this not logged" in lines[-1].getMessage()
    assert sum(len(r.getMessage()) for r in lines) < 20_000
    assert all(r.exc_info is None for r in lines)


@pytest.mark.parametrize("path", ["/insights", "/insights/gaps.csv", "/insights/daily.csv?since=7d", "/admin/reload"])
def test_an_admin_cookie_that_is_not_ascii_is_not_signed_in(
    url: str, path: str, logged: pytest.LogCaptureFixture
) -> None:
    method = "POST" if path.startswith("/admin") else "GET"
    response = httpx.request(method, url + path, headers={"Cookie": "kb_admin=é".encode("utf-8")})
    assert response.status_code == 401
    assert server_lines(logged) == []


def _signed_payload(payload: Any) -> tuple[bytes, dict[str, str]]:
    body = urlencode({"payload": json.dumps(payload)}).encode()
    return body, slack_headers(body)


BUTTON = {"action_id": "kb_helpful", "block_id": "kb_actions:en", "value": "slime-b0ab398d"}
SHAPES = [
    ({"user": "U0001", "actions": [BUTTON]}, "payload.user: Input should be a valid dictionary or instance of User"),
    ({"user": {"id": "U1"}, "actions": {"0": BUTTON}}, "payload.actions: Input should be a valid list"),
    (
        {"user": {"id": "U1"}, "actions": ["kb_helpful"]},
        "payload.actions.0: Input should be a valid dictionary or instance of Action",
    ),
    ({"user": {"id": "U1"}, "actions": 7}, "payload.actions: Input should be a valid list"),
    (
        {"user": {"id": "U1"}, "actions": [{**BUTTON, "value": {"id": 1}}]},
        "payload.actions.0.value: Input should be a valid string",
    ),
    (
        {"user": {"id": "U1"}, "team": ["T1"], "actions": [BUTTON]},
        "payload.team: Input should be a valid dictionary or instance of Team",
    ),
    (
        {"user": {"id": "U1"}, "response_url": 5, "actions": [BUTTON]},
        "payload.response_url: Input should be a valid string",
    ),
]


@pytest.mark.parametrize(("shape", "error"), SHAPES)
def test_a_signed_interaction_of_another_shape_is_a_400_naming_the_field(
    url: str, logged: pytest.LogCaptureFixture, shape: dict[str, Any], error: str
) -> None:
    body, headers = _signed_payload({"type": "block_actions", **shape})
    response = httpx.post(f"{url}/slack/interactive", content=body, headers=headers)
    assert (response.status_code, response.json()["error"]) == (400, error)
    [line] = server_lines(logged)  # one line, as for every request a platform could not have sent
    assert line.exc_info is None and line.getMessage().endswith(f"refused: {error}")


def test_a_signed_interaction_of_another_type_is_acknowledged(url: str) -> None:
    for payload in ({"type": "view_submission", "user": "x"}, ["block_actions"], "block_actions"):
        body, headers = _signed_payload(payload)
        assert httpx.post(f"{url}/slack/interactive", content=body, headers=headers).status_code == 200


DEEP = "[" * 1000 + "]" * 1000  # nested past the JSON parser's own limit


def test_a_chat_form_with_a_history_nested_1000_deep_is_answered_and_the_connection_kept(
    url: str, logged: pytest.LogCaptureFixture
) -> None:
    with httpx.Client(base_url=url, headers={"Accept-Language": "en"}) as browser:
        token = form_token(browser)
        fields = {"message": "how do I resume training in slime?", "history": DEEP, "form_token": token}
        response = browser.post("/chat", data=fields, headers={"Origin": url})
        assert response.status_code == 200 and "resume" in response.text.lower()
        assert browser.get("/healthz").status_code == 200  # the same connection serves the next request
    assert server_lines(logged) == []


@pytest.mark.parametrize("payload", [DEEP, '{"type": "block_actions", "actions": ' + DEEP + "}"])
def test_a_signed_interaction_nested_1000_deep_is_a_400(
    url: str, logged: pytest.LogCaptureFixture, payload: str
) -> None:
    body = urlencode({"payload": payload}).encode()
    response = httpx.post(f"{url}/slack/interactive", content=body, headers=slack_headers(body))
    assert response.status_code == 400
    assert response.json()["error"] == "payload: nested deeper than 32 levels, so not an interaction Slack sent"
    [line] = server_lines(logged)  # one line, no traceback
    assert line.exc_info is None and line.getMessage().endswith("refused: " + response.json()["error"])


def test_an_api_body_nested_1000_deep_is_a_400(url: str, logged: pytest.LogCaptureFixture) -> None:
    for path in ("/api/chat", "/api/feedback"):
        response = httpx.post(url + path, content=DEEP, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, (path, response.text)
    assert server_lines(logged) == []


LONG = "x" * 60_000  # where an id, a tag or a source belongs (as long as httpx lets a URL be)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "params", "error"),
    [
        ("/api/search", {"q": "oom", "tag": LONG}, "tag: unknown tag 'xxx"),
        ("/api/search", {"q": "oom", "source": LONG}, "source: unknown source 'xxx"),
        ("/search", {"q": "oom", "source": LONG}, "unknown source 'xxx"),
        (f"/api/entries/{LONG}", {}, "no entry with id 'xxx"),
        (f"/entries/{LONG}", {}, "no entry with id 'xxx"),
        ("/entries/slime-b0ab398d", {"hl": LONG}, "unknown language 'xxx"),
        (f"/lang/{LONG}", {}, "unknown language 'xxx"),
        ("/insights/daily.csv", {"since": LONG}, "is not a time window"),
        (f"/insights/{LONG}.csv", {}, "no insights table 'xxx"),
    ],
)
def test_an_invalid_value_of_60_kb_is_echoed_as_a_short_prefix(
    url: str, path: str, params: dict[str, str], error: str
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept-Language": "en"}
    response = httpx.get(url + path, params=params, headers=headers)
    assert 400 <= response.status_code < 500
    text = html.unescape(response.text)  # the pages escape the quotes
    assert error in text and "'" + "x" * 60 + "'… (60000 characters)" in text
    assert "x" * 61 not in text and len(response.content) < 20_000


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/healthz", "/widget.js", "/docs", "/redoc", "/insights", "/", "/chat"])
def test_head_answers_as_get_without_a_body(url: str, path: str) -> None:
    get, head = httpx.get(url + path), httpx.head(url + path)
    assert head.status_code == get.status_code and head.status_code in (200, 401)  # /insights: its sign-in form
    assert head.headers["content-type"] == get.headers["content-type"] and head.content == b""


def test_an_admin_action_takes_the_bearer_token_or_the_cookie_with_a_form_token_from_this_site(url: str) -> None:
    with httpx.Client(base_url=url, headers={"Accept": "application/json"}) as browser:
        signed = browser.post(
            "/insights/sign-in", data={"token": TOKEN, "form_token": form_token(browser, "/insights")}
        )
        assert signed.status_code == 303 and browser.cookies.get("kb_admin")
        cookie = {"Cookie": f"kb_admin={browser.cookies['kb_admin']}"}
        token = form_token(browser, "/insights")
        dismiss = {"label": "nothing like this", "since": "7d"}
        no_token = browser.post("/insights/gaps/dismiss", data=dismiss, headers={"Origin": url})
        elsewhere = browser.post(
            "/insights/gaps/dismiss", data={**dismiss, "form_token": token}, headers={"Origin": "https://evil.example"}
        )
        taken = browser.post("/insights/gaps/dismiss", data={**dismiss, "form_token": token}, headers={"Origin": url})
    assert (no_token.status_code, elsewhere.status_code) == (403, 403)
    assert (taken.status_code, taken.json()["error"]) == (404, "no gaps named 'nothing like this' in the last 7d")
    # The JSON admin routes have no form: the cookie, sent by hand, is not enough there.
    assert httpx.post(f"{url}/admin/reload", headers={**cookie, "Origin": url}).status_code == 401
    assert httpx.post(f"{url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    bearer = httpx.post(f"{url}/insights/gaps/dismiss", data=dismiss, headers={"Authorization": f"Bearer {TOKEN}"})
    assert bearer.status_code == 404  # the bearer token needs no form token


def test_links_are_built_from_kb_base_url_or_the_address_reached_never_the_host_header(
    url: str, settings: Settings, serve: Callable[[Any], Any]
) -> None:
    evil = {"Host": "evil.example"}
    page = httpx.get(f"{url}/entries/slime-b0ab398d", headers=evil).text
    api = httpx.get(f"{url}/api/entries/slime-b0ab398d", headers=evil).json()
    search = httpx.get(f"{url}/api/search", params={"q": "如何续训"}, headers=evil).json()
    assert "evil.example" not in page + json.dumps(api) + json.dumps(search)
    assert api["permalink"] == f"{url}/entries/slime-b0ab398d"
    public = serve(create_app(settings.with_(base_url="https://faq.example.com/kb"))).url
    api = httpx.get(f"{public}/api/entries/slime-b0ab398d", headers=evil).json()
    assert api["permalink"] == "https://faq.example.com/kb/entries/slime-b0ab398d"


@pytest.mark.parametrize("value", ["faq.example.com", "javascript:alert(1)", "https://x.example/?a=1"])
def test_a_base_url_that_is_not_an_http_url_stops_start_up(settings: Settings, value: str) -> None:
    from kb.errors import SettingsError

    with pytest.raises(SettingsError, match="KB_BASE_URL"):
        settings.with_(base_url=value)
