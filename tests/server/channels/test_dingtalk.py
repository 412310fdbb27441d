"""The DingTalk robot (HTTP mode) as only DingTalk has it: its signature's refusals, Markdown, the session webhook.

What every chat bot does (answers in the asker's language, help, a non-text message, overruns,
the LLM's answer, forged and replayed requests, limits, insights, settings) is tested once for
all in test_bots.py. Messages are signed here as DingTalk signs them, and a small HTTP server on
a 127.0.0.1 port stands in for the conversations' session webhooks (tests/support/dingtalk.py);
the knowledge base runs in a real uvicorn on another loopback port, the LLM is the stand-in of
tests/support/llm.py.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import time
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.errors import SettingsError
from server.settings import ServerSettings
from tests.support.bots import BotServer
from tests.support.dingtalk import APP_KEY, APP_SECRET, DingTalkStandIn, dingtalk_headers, robot_body, session_of
from tests.support.llm import fake_llm_app
from tests.support.servers import own_data, top_hits

RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"


class Robot(BotServer):
    """A real server (uvicorn) with the DingTalk robot on; `message` sends it one as DingTalk does (signed)."""

    def deliver(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return self.post("/dingtalk/robot", body, headers)

    def message(self, message: dict[str, Any]) -> httpx.Response:
        return self.deliver(json.dumps(message).encode(), dingtalk_headers())


@pytest.fixture(scope="module")
def stand_in(serve: Callable[[Any], Any]) -> DingTalkStandIn:
    return DingTalkStandIn(serve)


@pytest.fixture
def webhook_mode(stand_in: DingTalkStandIn) -> Iterator[Callable[[str], None]]:
    def switch(mode: str) -> None:
        stand_in.mode = mode

    yield switch
    stand_in.mode = "ok"


def robot_settings(
    settings: ServerSettings, stand_in: DingTalkStandIn, tmp_path_factory: Any, name: str
) -> ServerSettings:
    return own_data(settings, tmp_path_factory, name).with_(
        dingtalk_app_key=APP_KEY, dingtalk_app_secret=APP_SECRET, dingtalk_webhook_base=stand_in.url
    )


@pytest.fixture(scope="module")
def robot(
    settings: ServerSettings, serve: Callable[[Any], Any], stand_in: DingTalkStandIn, tmp_path_factory: Any
) -> Robot:
    """The robot on."""
    return Robot(serve, robot_settings(settings, stand_in, tmp_path_factory, "dingtalk"))


@pytest.fixture(scope="module")
def llm_robot(
    settings: ServerSettings, serve: Callable[[Any], Any], stand_in: DingTalkStandIn, tmp_path_factory: Any
) -> Robot:
    """The robot with the stand-in LLM (so that an answer is followed up through the webhook)."""
    llm_url = serve(fake_llm_app([])).url + "/v1"
    configured = robot_settings(settings, stand_in, tmp_path_factory, "dingtalk-llm").with_(
        llm_base_url=llm_url, llm_model="good", llm_timeout=10
    )
    return Robot(serve, configured)


def expected_message(hits: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """The Markdown message DingTalk should get for these hits (written out by hand from the API's fields)."""
    best = hits[0]
    words = {
        "zh": ("来源：", "相关条目"),
        "en": ("Source: ", "Related entries"),
    }[lang]
    parts = [
        f"**[{best['question']}]({best['permalink']})**",
        best["answer"],
        f"{words[0]}[{best['source']['title']} · {best['source']['version']}]({best['url']})",
    ]
    if len(hits) > 1:
        lines = [f"- [{h['question']}]({h['permalink']}) · {h['source']['framework']}" for h in hits[1:4]]
        parts.append("\n".join([f"**{words[1]}**", *lines]))
    return {"msgtype": "markdown", "markdown": {"title": best["question"], "text": "\n\n".join(parts)}}


@pytest.mark.parametrize(
    "module",
    [
        "server.channels.dingtalk",
        "server.channels.dingtalk.markdown",
        "server.channels.dingtalk.payload",
        "server.channels.dingtalk.signature",
        "server.channels.dingtalk.webhook",
        "server.channels.dingtalk.bot",
        "server.channels.dingtalk.routes",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


# --- questions ----------------------------------------------------------------------------


def test_a_question_is_answered_in_the_response_in_markdown(
    robot: Robot, client: TestClient, stand_in: DingTalkStandIn
) -> None:
    hits = top_hits(client, RESUME_ZH, robot.url)
    response = robot.message(robot_body(RESUME_ZH, stand_in))  # within ACK_SECONDS, else it would say "still looking"
    assert response.status_code == 200 and response.json() == expected_message(hits, "zh")


@pytest.fixture
def overrun(robot: Robot, monkeypatch: pytest.MonkeyPatch) -> Callable[[float, float], None]:
    """`overrun(delay, ack)`: the robot's searches take `delay` s longer, and it waits `ack` s for one."""
    import server.channels.dingtalk.routes as routes

    kb = robot.app.state.reloader.served.kb
    search = kb.search

    def slow_down(delay: float, ack: float) -> None:
        async def slow_search(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(delay)
            return await search(*args, **kwargs)

        monkeypatch.setattr(routes, "ACK_SECONDS", ack)
        monkeypatch.setattr(kb, "search", slow_search)

    return slow_down


# --- refused requests (that nothing is sent for one is tested in test_bots.py) -------


def _changed(headers: dict[str, str]) -> dict[str, str]:
    sign = headers["sign"]
    return {**headers, "sign": ("B" if sign[0] != "B" else "C") + sign[1:]}


REFUSALS: list[tuple[str, Callable[[], dict[str, str]], str]] = [
    ("no headers", lambda: {"Content-Type": "application/json"}, "the timestamp header is missing"),
    ("no sign", lambda: {k: v for k, v in dingtalk_headers().items() if k != "sign"}, "the sign header is missing"),
    ("sign changed", lambda: _changed(dingtalk_headers()), "sign does not match the timestamp"),
    ("another secret", lambda: dingtalk_headers(secret="not-the-secret"), "sign does not match the timestamp"),
    (
        "an hour and a minute old",
        lambda: dingtalk_headers(int((time.time() - 3660) * 1000)),
        "s old; DingTalk messages more than an hour away are refused",
    ),
    (
        "from the future",
        lambda: dingtalk_headers(int((time.time() + 3660) * 1000)),
        "s in the future; DingTalk messages more than an hour away are refused",
    ),
    (
        "timestamp in seconds",
        lambda: {**dingtalk_headers(), "timestamp": "yesterday"},
        "is not a Unix time in milliseconds",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "headers", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_an_unsigned_forged_or_stale_message_is_refused_and_logged(
    robot: Robot,
    stand_in: DingTalkStandIn,
    caplog: pytest.LogCaptureFixture,
    case: str,
    headers: Callable[[], dict[str, str]],
    message: str,
) -> None:
    body = robot_body(RESUME_EN, stand_in)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = robot.deliver(json.dumps(body).encode(), headers())
    assert response.status_code == 401
    error = response.json()
    assert error["ok"] is False and error["error"].startswith("not a valid DingTalk request: ")
    assert message in error["error"]
    logged = [r for r in caplog.records if r.getMessage().startswith("DingTalk request to /dingtalk/robot from ")]
    assert len(logged) == 1 and message in logged[0].getMessage()


def test_a_message_for_another_robot_or_of_another_shape_is_refused(robot: Robot) -> None:
    other = robot.message(robot_body(RESUME_EN, robotCode="another-robot"))
    assert other.status_code == 401
    assert other.json()["error"] == "robotCode 'another-robot' is not this robot's (KB_DINGTALK_APP_KEY)"
    not_json = robot.deliver(b"{not json", dingtalk_headers())
    assert (not_json.status_code, not_json.json()["error"]) == (
        400,
        "body: not JSON (DingTalk sends a robot's messages as JSON)",
    )
    no_id = robot_body(RESUME_EN)
    del no_id["msgId"]
    missing = robot.message(no_id)
    assert (missing.status_code, missing.json()["error"]) == (400, "body.msgId: Field required")
    shaped = robot.message({**robot_body(RESUME_EN), "text": "a question"})
    assert shaped.status_code == 400 and shaped.json()["error"].startswith("body.text: ")


# --- the session webhook --------------------------------------------------------------


def test_the_robot_posts_only_to_dingtalks_own_webhooks_and_not_after_they_expire(
    llm_robot: Robot, stand_in: DingTalkStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = robot_body(RESUME_EN, sessionWebhook="https://attacker.example/hook?session=x")
    expired = robot_body(RESUME_EN, stand_in, sessionWebhookExpiredTime=int(time.time() * 1000) - 1000)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        for body in (elsewhere, expired):
            response = llm_robot.message(body)
            # No webhook to follow up through: the answer waits for nothing and has no "on its way" line.
            assert response.status_code == 200
            assert "on its way" not in response.json()["markdown"]["text"]
    lines = [r.getMessage() for r in caplog.records if r.name == "kb.server"]
    assert (
        "DingTalk: sessionWebhook 'https://attacker.example/hook?session=x' is not under KB_DINGTALK_WEBHOOK_BASE"
        in lines[0]
    )
    assert lines[1] == "DingTalk: the sessionWebhook expired; nothing posted"
    llm_robot.idle()
    assert stand_in.posted(session_of(expired)) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "said"),
    [("error", "answered HTTP 500: internal error"), ("refused", "answered HTTP 200: session invalid")],
)
def test_a_webhook_that_fails_is_logged_once(
    robot: Robot,
    stand_in: DingTalkStandIn,
    webhook_mode: Callable[[str], None],
    overrun: Callable[[float, float], None],
    caplog: pytest.LogCaptureFixture,
    mode: str,
    said: str,
) -> None:
    overrun(0.3, 0.05)  # so that the answer goes to the webhook
    webhook_mode(mode)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = robot.message(robot_body(RESUME_EN, stand_in))
        assert response.status_code == 200
        robot.idle()
    logged = [r for r in caplog.records if r.getMessage().startswith("DingTalk: the sessionWebhook")]
    assert [r.getMessage() for r in logged] == [f"DingTalk: the sessionWebhook {said}"]
    assert logged[0].exc_info is None


# --- settings --------------------------------------------------------------------------------


def test_its_webhook_base_is_checked() -> None:
    with pytest.raises(SettingsError, match="KB_DINGTALK_WEBHOOK_BASE='https://oapi.dingtalk.com/robot'"):
        ServerSettings(dingtalk_webhook_base="https://oapi.dingtalk.com/robot")
