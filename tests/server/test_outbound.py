"""The outbound policy: every channel posts only under its base, follows no redirect, and sends no credential away.

Two stand-ins (real uvicorn servers on loopback ports) play the parts: `platform`, the
channel's configured base (Slack's hooks.slack.com, Feishu's open platform, DingTalk's
webhooks), which answers 307 to `elsewhere` when told to; and `elsewhere`, another host
(another port on this machine), which records whatever reaches it: nothing should.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from fastapi.testclient import TestClient

from server import create_app
from server.channels.dingtalk.webhook import SessionWebhook
from server.channels.feishu.client import FeishuClient
from server.outbound import Outbound, OutboundRefused, on_base
from server.settings import ServerSettings
from tests.support.slack import SECRET, interaction_body, slack_headers

APP_SECRET = "feishu-app-secret-never-forwarded"
CARD = {"schema": "2.0", "body": {"elements": []}}


class Elsewhere:
    """Another host: records every request that reaches it (method, path, headers, body)."""

    def __init__(self, serve: Callable[[Any], Any]):
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        app = FastAPI()

        @app.api_route("/{path:path}", methods=["GET", "POST"])
        async def anything(path: str, request: Request) -> dict[str, Any]:
            with self.lock:
                self.seen.append((request.method, path, dict(request.headers), await request.body()))
            return {"code": 0, "msg": "ok", "tenant_access_token": "t-stolen", "expire": 7200, "errcode": 0}

        self.url = serve(app).url


class Platform:
    """The channel's base: Feishu's token and reply calls, DingTalk's webhooks, Slack's response_urls.

    `redirect_to` set: every call is answered 307 (which keeps the method and the body) to that
    address, on the same path.
    """

    def __init__(self, serve: Callable[[Any], Any]):
        self.redirect_to = ""
        self.seen: list[str] = []
        app = FastAPI()

        @app.post("/{path:path}", response_model=None)
        async def anything(path: str, request: Request) -> Any:
            self.seen.append(path)
            if self.redirect_to:
                return RedirectResponse(f"{self.redirect_to}/{path}", status_code=307)
            if path.endswith("tenant_access_token/internal"):
                return {"code": 0, "msg": "ok", "tenant_access_token": "t-1", "expire": 7200}
            return {"code": 0, "msg": "success", "errcode": 0, "ok": True}

        self.url = serve(app).url


@pytest.fixture(scope="module")
def elsewhere(serve: Callable[[Any], Any]) -> Elsewhere:
    return Elsewhere(serve)


@pytest.fixture
def platform(serve: Callable[[Any], Any]) -> Platform:
    return Platform(serve)


def kb_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kb.server"]


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://hooks.slack.com/commands/T1/2/x", True),
        ("https://HOOKS.slack.com/actions/T1/2/x", True),
        ("https://hooks.slack.com", False),  # the base itself, no path below it
        ("http://hooks.slack.com/commands/T1/2/x", False),
        ("https://hooks.slack.com:8443/commands/T1/2/x", False),
        ("https://hooks.slack.com.attacker.example/commands/x", False),
        ("https://user@hooks.slack.com/commands/x", False),
        ("https://attacker.example/https://hooks.slack.com/commands/x", False),
        ("http://127.0.0.1:9/commands/x", False),
    ],
)
def test_a_url_is_allowed_only_under_its_base(url: str, allowed: bool) -> None:
    assert on_base(url, "https://hooks.slack.com") is allowed
    assert Outbound("Slack", "KB_SLACK_RESPONSE_BASE", "https://hooks.slack.com").allows(url) is allowed


def test_a_post_outside_the_base_is_not_made(elsewhere: Elsewhere, platform: Platform) -> None:
    outbound = Outbound("Slack", "KB_SLACK_RESPONSE_BASE", platform.url)
    before = len(elsewhere.seen)
    with pytest.raises(OutboundRefused, match=r"is not under KB_SLACK_RESPONSE_BASE"):
        outbound.post(f"{elsewhere.url}/commands/x", {"text": "hi"})
    assert len(elsewhere.seen) == before


@pytest.mark.parametrize("call", ["token", "reply"])
def test_feishu_follows_no_redirect_and_the_app_secret_and_token_stay_on_its_base(
    platform: Platform, elsewhere: Elsewhere, caplog: pytest.LogCaptureFixture, call: str
) -> None:
    """A 307 on the token call would carry the App Secret in its body; on the reply call, the token in a header."""
    client = FeishuClient("cli_outbound", APP_SECRET, platform.url)
    if call == "reply":
        assert client.reply("om_first", CARD) is True  # a token fetched and kept
    platform.redirect_to = elsewhere.url
    before = len(elsewhere.seen)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        assert client.reply("om_redirected", CARD) is False
    assert elsewhere.seen[before:] == []
    assert platform.seen[-1].endswith("tenant_access_token/internal" if call == "token" else "om_redirected/reply")
    (line,) = kb_lines(caplog)
    assert line.startswith("Feishu: the answer to message om_redirected was not sent")
    assert "OutboundRefused: answered HTTP 307" in line and "redirects are not followed" in line
    assert APP_SECRET not in line


def test_dingtalk_follows_no_redirect(
    platform: Platform, elsewhere: Elsewhere, caplog: pytest.LogCaptureFixture
) -> None:
    webhook = SessionWebhook(platform.url)
    platform.redirect_to = elsewhere.url
    before = len(elsewhere.seen)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        assert webhook.post(f"{platform.url}/robot/sendBySession?session=s1", {"msgtype": "text"}) is False
    assert elsewhere.seen[before:] == []
    (line,) = kb_lines(caplog)
    assert "OutboundRefused: answered HTTP 307" in line


def test_a_slack_response_url_outside_the_base_gets_nothing_and_one_log_line(
    settings: ServerSettings, platform: Platform, elsewhere: Elsewhere, caplog: pytest.LogCaptureFixture
) -> None:
    """A signed button press naming another port on this machine: no thank-you posted there, one line said."""
    configured = settings.with_(slack_signing_secret=SECRET, slack_response_base=platform.url)
    before = len(elsewhere.seen)
    with caplog.at_level(logging.INFO, logger="kb.server"), TestClient(create_app(configured)) as slack:
        caplog.clear()
        outside = f"{elsewhere.url}/commands/T1/2/x"
        body = interaction_body("kb_helpful", "slime-b0ab398d", outside)
        response = slack.post("/slack/interactive", content=body, headers=slack_headers(body))
        assert response.status_code == 200  # background tasks run before TestClient returns
    assert elsewhere.seen[before:] == [] and platform.seen == []
    refused = [line for line in kb_lines(caplog) if "response_url" in line]
    assert refused == [
        f"Slack: response_url '{outside}' is not under KB_SLACK_RESPONSE_BASE ({platform.url}); nothing posted"
    ]


def test_a_slack_command_with_a_foreign_response_url_is_answered_and_nothing_posted(
    settings: ServerSettings, platform: Platform, elsewhere: Elsewhere, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.support.slack import command_body

    configured = settings.with_(slack_signing_secret=SECRET, slack_response_base=platform.url)
    before = len(elsewhere.seen)
    with caplog.at_level(logging.WARNING, logger="kb.server"), TestClient(create_app(configured)) as slack:
        body = command_body("how do I resume training from a checkpoint?", f"{elsewhere.url}/commands/T1/2/x")
        response = slack.post("/slack/command", content=body, headers=slack_headers(body))
    assert response.status_code == 200 and response.json()["blocks"]
    assert elsewhere.seen[before:] == []
    assert len([line for line in kb_lines(caplog) if "is not under KB_SLACK_RESPONSE_BASE" in line]) == 1


def test_the_slack_base_setting_is_checked() -> None:
    from kb.errors import SettingsError

    with pytest.raises(SettingsError, match="KB_SLACK_RESPONSE_BASE"):
        ServerSettings(slack_response_base="http://hooks.slack.com")
    assert ServerSettings().slack_response_base == "https://hooks.slack.com"
