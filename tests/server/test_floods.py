"""Floods of bad requests on every platform route: each refused, none a traceback, and a bounded number of log lines.

One real server (uvicorn on a loopback port) with Slack, Feishu, DingTalk, MCP and the
OpenAI-compatible API on. Each case sends 1,000 requests of one kind (unsigned, badly signed,
or signed but nested 1,000 deep) and counts what the server logged while they came: the
refusals' budget (`LogBudget`: 60 lines a minute per route and cause) bounds it, whatever the
rate. Also one body nested 1,000 deep per platform, refused with 400 (401 for Feishu, which
refuses whatever it cannot verify) and one log line.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import math
import time
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

import httpx
import pytest

from server import create_app
from server.request_checks import MAX_JSON_DEPTH, too_deep
from server.settings import ServerSettings
from tests.support.slack import SECRET, command_body, slack_headers

FLOOD = 1_000
BUDGET = 60  # LogBudget's lines a minute, per route and cause
DEEP = "[" * 1000 + "]" * 1000
DING_KEY, DING_SECRET = "dingfloodrobot", "dingtalk-flood-secret"
MCP_TOKEN, API_KEY = "flood-mcp-token", "flood-api-key"


def dingtalk_signed(body: bytes) -> tuple[bytes, dict[str, str]]:
    ts = str(int(time.time() * 1000))
    digest = hmac.new(DING_SECRET.encode(), f"{ts}\n{DING_SECRET}".encode(), hashlib.sha256).digest()
    return body, {"Content-Type": "application/json", "timestamp": ts, "sign": base64.b64encode(digest).decode()}


def slack_signed(payload: str) -> tuple[bytes, dict[str, str]]:
    body = urlencode({"payload": payload}).encode()
    return body, slack_headers(body)


JSON = {"Content-Type": "application/json"}
# (route, cause): a function making one request's body and headers, and the status it gets.
CASES: dict[str, tuple[str, Callable[[], tuple[bytes, dict[str, str]]], int]] = {
    "slack command unsigned": ("/slack/command", lambda: (command_body("oom"), {}), 401),
    "slack command stale": (
        "/slack/command",
        lambda: (command_body("oom"), slack_headers(command_body("oom"), int(time.time()) - 3600)),
        401,
    ),
    "slack interaction nested 1,000 deep": ("/slack/interactive", lambda: slack_signed(DEEP), 400),
    "slack interaction not JSON": ("/slack/interactive", lambda: slack_signed("{not json"), 400),
    "feishu unsigned": ("/feishu/events", lambda: (json.dumps({"encrypt": "x"}).encode(), JSON), 401),
    "feishu nested 1,000 deep": ("/feishu/events", lambda: (DEEP.encode(), JSON), 401),
    "dingtalk unsigned": ("/dingtalk/robot", lambda: (b"{}", JSON), 401),
    "dingtalk nested 1,000 deep": ("/dingtalk/robot", lambda: dingtalk_signed(DEEP.encode()), 400),
    "dingtalk not JSON": ("/dingtalk/robot", lambda: dingtalk_signed(b"{not json"), 400),
    "mcp without its token": ("/mcp", lambda: (b"{}", {**JSON, "Authorization": "Bearer wrong"}), 401),
    "mcp nested 1,000 deep": (
        "/mcp",
        lambda: (DEEP.encode(), {**JSON, "Authorization": f"Bearer {MCP_TOKEN}", "Accept": "application/json"}),
        400,
    ),
    "v1 without a key": ("/v1/chat/completions", lambda: (b"{}", {**JSON, "Authorization": "Bearer wrong"}), 401),
    "v1 nested 1,000 deep": (
        "/v1/chat/completions",
        lambda: (DEEP.encode(), {**JSON, "Authorization": f"Bearer {API_KEY}"}),
        400,
    ),
}


@pytest.fixture(scope="module")
def url(settings: ServerSettings, serve: Callable[[Any], Any]) -> str:
    configured = settings.with_(
        slack_signing_secret=SECRET,
        feishu_app_id="cli_flood",
        feishu_app_secret="flood-secret",
        feishu_verification_token="flood-token",
        feishu_encrypt_key="flood-key",
        dingtalk_app_key=DING_KEY,
        dingtalk_app_secret=DING_SECRET,
        mcp_token=MCP_TOKEN,
        api_keys=API_KEY,
    )
    return str(serve(create_app(configured)).url)


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.INFO):
        yield caplog


def lines(logged: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What `kb serve` writes of the log (`kbcli.serve.log_config`): the server's own lines and uvicorn's
    from INFO up, the libraries' (the MCP SDK's, ...) from WARNING up; not this test's HTTP client's."""
    return [
        r
        for r in logged.records
        if not r.name.startswith(("httpx", "httpcore"))
        and (r.levelno >= logging.WARNING or r.name.split(".")[0] in ("kb", "uvicorn"))
    ]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_flood_of_bad_requests_writes_a_bounded_number_of_log_lines(
    url: str, logged: pytest.LogCaptureFixture, case: str
) -> None:
    path, make, status = CASES[case]
    started = time.monotonic()
    statuses = set()
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(FLOOD):
            body, headers = make()
            statuses.add(client.post(path, content=body, headers=headers).status_code)
    seconds = time.monotonic() - started
    assert statuses == {status}
    written = lines(logged)
    assert all(r.exc_info is None for r in written), "a traceback in the log"
    assert len(written) <= BUDGET + math.ceil(seconds), f"{len(written)} lines in {seconds:.1f} s"


@pytest.mark.slow
def test_a_flood_of_one_cause_does_not_hide_another(
    settings: ServerSettings, serve: Callable[[Any], Any], logged: pytest.LogCaptureFixture
) -> None:
    """A server of its own, whose budgets no other test has spent."""
    url = serve(create_app(settings.with_(dingtalk_app_key=DING_KEY, dingtalk_app_secret=DING_SECRET))).url
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(BUDGET + 20):
            client.post("/dingtalk/robot", content=b"{}", headers=JSON)  # unsigned: over its budget
        logged.clear()
        body, headers = dingtalk_signed(b"{not json")
        assert client.post("/dingtalk/robot", content=body, headers=headers).status_code == 400
    [line] = lines(logged)
    assert line.getMessage() == (
        "DingTalk request to /dingtalk/robot from 127.0.0.1 refused: body: not JSON (DingTalk sends a robot's "
        "messages as JSON)"
    )


@pytest.mark.parametrize(
    ("case", "error"),
    [
        (
            "slack interaction nested 1,000 deep",
            "payload: nested deeper than 32 levels, so not an interaction Slack sent",
        ),
        ("dingtalk nested 1,000 deep", "body: nested deeper than 32 levels, so not a message DingTalk sent"),
        ("feishu nested 1,000 deep", "not a valid Feishu request: the body nests deeper than 32 levels"),
    ],
)
def test_a_platform_body_nested_1000_deep_is_refused_with_one_line(
    url: str, logged: pytest.LogCaptureFixture, case: str, error: str
) -> None:
    path, make, status = CASES[case]
    body, headers = make()
    response = httpx.post(url + path, content=body, headers=headers, timeout=30)
    assert (response.status_code, response.json()["error"]) == (status, error)
    [line] = lines(logged)
    assert line.levelno == logging.WARNING and line.exc_info is None and "refused" in line.getMessage()


def test_a_message_with_brackets_in_its_text_is_answered(url: str) -> None:
    """Only structure counts towards the depth: a pasted nested list in a message's text is text."""
    text = "why does tensor(" + "[" * 40 + "1" + "]" * 40 + ") not fit?"
    body = json.dumps({"msgtype": "text", "text": {"content": text}, "msgId": "m-brackets", "conversationId": "c1"})
    response = httpx.post(url + "/dingtalk/robot", content=body, headers=dingtalk_signed(body.encode())[1], timeout=30)
    assert response.status_code == 200 and response.json()["msgtype"] == "markdown"


@pytest.mark.parametrize(
    ("text", "deep"),
    [
        ("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, False),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), True),
        ('{"a": "' + "[" * 100 + '"}', False),  # in a string
        ('{"a": "\\"' + "[" * 100 + '"}', False),  # after an escaped quote, still in the string
        ('{"a": "\\\\"' + ", " + "[" * 40 + "]" * 40 + "}", True),  # an escaped backslash ends the string
        ("{" * 33, True),  # not JSON, deep all the same
    ],
)
def test_the_depth_counts_structure_only(text: str, deep: bool) -> None:
    assert too_deep(text) is deep
    assert too_deep(text.encode()) is deep
