"""The DingTalk robot (HTTP mode): signed messages, Markdown answers in the asker's language, late answers by webhook.

Messages are signed here the way DingTalk signs them, as its guide to receiving messages
documents: the `sign` header is the Base64 HMAC-SHA256, keyed with the AppSecret, of the
`timestamp` header (milliseconds), a line break and the AppSecret; computed in the test, not
by the code under test. DingTalk's servers cannot be reached from here, so a small HTTP
server on a 127.0.0.1 port stands in for the conversations' session webhooks
(`DingTalkStandIn`), as oapi.dingtalk.com would take them. The knowledge base runs in a real
uvicorn on another loopback port; the LLM is the stand-in OpenAI-compatible server of
tests/support/llm.py.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import importlib
import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from fastapi.testclient import TestClient

from kb.errors import SettingsError
from server import create_app
from server.channels.dingtalk.markdown import help_message
from server.settings import ServerSettings
from tests.support.llm import fake_llm_app
from tests.support.servers import ServedApp, own_data, top_hits

APP_KEY = "dingkbtestrobot"
APP_SECRET = "dingtalk-app-secret-0123456789"
RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"
ROLL_PIZZA = "what is the best pizza in Naples, ROLL?"  # nothing anywhere, and ROLL's FAQ named


def dingtalk_headers(timestamp_ms: int | None = None, secret: str = APP_SECRET) -> dict[str, str]:
    """The headers DingTalk sends with a message: the time in ms, and its HMAC-SHA256 signature."""
    ts = str(int(time.time() * 1000) if timestamp_ms is None else timestamp_ms)
    digest = hmac.new(secret.encode(), f"{ts}\n{secret}".encode(), hashlib.sha256).digest()
    return {
        "Content-Type": "application/json; charset=utf-8",
        "timestamp": ts,
        "sign": base64.b64encode(digest).decode(),
    }


class DingTalkStandIn:
    """Stands in for DingTalk's session webhooks: records what is posted to `{url}/robot/sendBySession`.

    `mode` is "ok", "error" (HTTP 500 with a text body) or "refused" (HTTP 200, DingTalk's error code).
    """

    def __init__(self, serve: Callable[[Any], Any]):
        self.posts: list[tuple[str, dict[str, Any]]] = []  # (session, message)
        self.mode = "ok"
        self.arrived = threading.Condition()
        app = FastAPI()

        @app.post("/robot/sendBySession", response_model=None)
        async def send_by_session(session: str, request: Request) -> Any:
            body = await request.json()
            if self.mode == "error":
                return PlainTextResponse("internal error", 500)
            if self.mode == "refused":
                return {"errcode": 300001, "errmsg": "session invalid"}
            with self.arrived:
                self.posts.append((session, body))
                self.arrived.notify_all()
            return {"errcode": 0, "errmsg": "ok"}

        self.url = serve(app).url

    def webhook(self, session: str) -> str:
        return f"{self.url}/robot/sendBySession?session={session}"

    def posted(self, session: str) -> list[dict[str, Any]]:
        return [body for s, body in self.posts if s == session]

    def wait_for(self, session: str, timeout: float = 15) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while not self.posted(session):
                left = deadline - time.monotonic()
                assert left > 0, f"nothing was posted to the session webhook {session!r} within {timeout} s"
                self.arrived.wait(left)
            return self.posted(session)[0]


def robot_body(
    text: str, stand_in: DingTalkStandIn | None = None, conversation: str = "cid_training", **fields: Any
) -> dict[str, Any]:
    """What DingTalk posts when someone @-mentions the robot in a group (the mention itself taken out)."""
    now = int(time.time() * 1000)
    session = uuid.uuid4().hex
    return {
        "msgtype": "text",
        "text": {"content": f" {text}"},
        "msgId": f"msg{uuid.uuid4().hex}",
        "createAt": now,
        "conversationType": "2",
        "conversationId": conversation,
        "conversationTitle": "训练群",
        "senderId": "$:LWCP_v1:$sender-ada",
        "senderNick": "Ada",
        "senderCorpId": "ding-corp",
        "senderStaffId": "staff-ada",
        "chatbotUserId": "$:LWCP_v1:$robot",
        "chatbotCorpId": "ding-corp",
        "robotCode": APP_KEY,
        "isAdmin": False,
        "isInAtList": True,
        "atUsers": [{"dingtalkId": "$:LWCP_v1:$robot"}],
        "sessionWebhook": stand_in.webhook(session) if stand_in else "",
        "sessionWebhookExpiredTime": now + 90 * 60 * 1000,
        **fields,
    }


def session_of(body: dict[str, Any]) -> str:
    return str(body["sessionWebhook"]).rpartition("session=")[2]


class Robot(ServedApp):
    """A real server (uvicorn) with the DingTalk robot on; `ask` sends it a message as DingTalk does (signed)."""

    def post(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return httpx.post(f"{self.url}/dingtalk/robot", content=body, headers=headers, timeout=15)

    def ask(self, message: dict[str, Any]) -> httpx.Response:
        return self.post(json.dumps(message).encode(), dingtalk_headers())


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
    """The robot on, and a rate limit for browsers (which DingTalk is not counted against)."""
    return Robot(serve, robot_settings(settings, stand_in, tmp_path_factory, "dingtalk").with_(rate_limit="5/minute"))


@pytest.fixture(scope="module")
def llm_robot(
    settings: ServerSettings, serve: Callable[[Any], Any], stand_in: DingTalkStandIn, tmp_path_factory: Any
) -> Robot:
    """The robot with the stand-in LLM, which takes 3 s before its first word ("slow")."""
    llm_url = serve(fake_llm_app([])).url + "/v1"
    configured = robot_settings(settings, stand_in, tmp_path_factory, "dingtalk-llm").with_(
        llm_base_url=llm_url, llm_model="slow", llm_timeout=10
    )
    return Robot(serve, configured)


def expected_message(hits: list[dict[str, Any]], lang: str, pending: bool = False) -> dict[str, Any]:
    """The Markdown message DingTalk should get for these hits (written out by hand from the API's fields)."""
    best = hits[0]
    words = {
        "zh": ("来源：", "相关条目", "正在根据这些条目撰写回答，稍后发送……"),
        "en": ("Source: ", "Related entries", "A written answer from these entries is on its way…"),
    }[lang]
    parts = [
        f"**[{best['question']}]({best['permalink']})**",
        best["answer"],
        f"{words[0]}[{best['source']['title']} · {best['source']['version']}]({best['url']})",
    ]
    if len(hits) > 1:
        lines = [f"- [{h['question']}]({h['permalink']}) · {h['source']['framework']}" for h in hits[1:4]]
        parts.append("\n".join([f"**{words[1]}**", *lines]))
    if pending:
        parts.append(words[2])
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


@pytest.mark.parametrize(("question", "lang"), [(RESUME_ZH, "zh"), (RESUME_EN, "en")])
def test_a_question_is_answered_in_the_response_in_its_language(
    robot: Robot, client: TestClient, stand_in: DingTalkStandIn, question: str, lang: str
) -> None:
    hits = top_hits(client, question, robot.url)
    assert hits[0]["question"] == {"zh": "如何续训？", "en": "How do I resume training?"}[lang]
    response = robot.ask(robot_body(question, stand_in))  # within ACK_SECONDS, else it would say "still looking"
    assert response.status_code == 200 and response.json() == expected_message(hits, lang)


def test_an_unanswerable_question_gets_the_nearest_entries(robot: Robot, client: TestClient) -> None:
    hits = top_hits(client, ROLL_PIZZA, robot.url)
    message = robot.ask(robot_body(ROLL_PIZZA)).json()
    nearest = [f"- [{h['question']}]({h['permalink']}) · {h['source']['framework']}" for h in hits[:3]]
    assert message == {
        "msgtype": "markdown",
        "markdown": {
            # ROLL's own entries are the nearest, so the reply does not claim ROLL's FAQ lacks the answer
            "title": "The FAQ has no confident answer to this.",
            "text": "\n\n".join(
                ["The FAQ has no confident answer to this.", "\n".join(["**Nearest entries**", *nearest])]
            ),
        },
    }


@pytest.mark.parametrize("text", ["", "help", "帮助"])
def test_a_mention_alone_or_help_gets_how_to_ask(robot: Robot, text: str) -> None:
    message = robot.ask(robot_body(text)).json()
    assert message == help_message({"": None, "help": "en", "帮助": "zh"}[text])
    assert message["markdown"]["text"].count("how do I resume training?") == (2 if text == "" else 1)


def test_a_message_that_is_not_text_is_told_to_send_text(robot: Robot) -> None:
    body = robot_body("", msgtype="picture", content={"downloadCode": "abc"})
    del body["text"]
    text = robot.ask(body).json()["markdown"]["text"]
    assert text == (
        "I can only read questions sent as text: send the question or the error as text.\n\n"
        "我只能读文字提问：请把问题或报错以文字发给我。"
    )


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


@pytest.mark.slow
def test_a_search_that_overruns_is_acknowledged_and_answered_through_the_webhook(
    robot: Robot, client: TestClient, stand_in: DingTalkStandIn, overrun: Callable[[float, float], None]
) -> None:
    """A machine under load: the search takes longer than the time DingTalk is given an answer in."""
    hits = top_hits(client, RESUME_EN, robot.url)
    overrun(0.5, 0.1)
    body = robot_body(RESUME_EN, stand_in)
    message = robot.ask(body).json()
    assert message["markdown"]["text"] == "Still looking it up; the answer will follow here…"
    assert stand_in.wait_for(session_of(body)) == expected_message(hits, "en")


@pytest.mark.slow
def test_with_an_llm_the_entries_come_at_once_and_the_written_answer_follows(
    llm_robot: Robot, client: TestClient, stand_in: DingTalkStandIn
) -> None:
    hits = top_hits(client, RESUME_EN, llm_robot.url)
    body = robot_body(RESUME_EN, stand_in)
    started = time.monotonic()
    response = llm_robot.ask(body)
    assert time.monotonic() - started < 3.0, "the answer did not wait for the LLM (3 s before its first word)"
    assert response.json() == expected_message(hits, "en", pending=True)
    written = stand_in.wait_for(session_of(body))
    first = hits[0]["permalink"]
    assert written["msgtype"] == "markdown"
    assert written["markdown"]["text"].startswith(
        f"Set `--load` to the `--save` directory and training resumes [\\[1\\]]({first}). See also [2].\n\n"
        "Written by a language model from the cited entries\n\n**Source**\n"
    )


# --- refused requests ------------------------------------------------------------------


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
def test_an_unsigned_forged_or_stale_message_is_refused_without_an_answer(
    robot: Robot,
    stand_in: DingTalkStandIn,
    caplog: pytest.LogCaptureFixture,
    case: str,
    headers: Callable[[], dict[str, str]],
    message: str,
) -> None:
    body = robot_body(RESUME_EN, stand_in)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = robot.post(json.dumps(body).encode(), headers())
    assert response.status_code == 401
    error = response.json()
    assert error["ok"] is False and error["error"].startswith("not a valid DingTalk request: ")
    assert message in error["error"]
    logged = [r for r in caplog.records if r.getMessage().startswith("DingTalk request to /dingtalk/robot from ")]
    assert len(logged) == 1 and message in logged[0].getMessage()
    time.sleep(0.2)
    assert stand_in.posted(session_of(body)) == []


def test_a_replayed_message_is_answered_once(robot: Robot) -> None:
    body = json.dumps(robot_body(RESUME_EN)).encode()
    headers = dingtalk_headers()
    first = robot.post(body, headers)
    assert first.status_code == 200 and first.json()["msgtype"] == "markdown"
    again = robot.post(body, headers)
    assert again.status_code == 200 and again.content == b""


def test_a_message_for_another_robot_or_of_another_shape_is_refused(robot: Robot) -> None:
    other = robot.ask(robot_body(RESUME_EN, robotCode="another-robot"))
    assert other.status_code == 401
    assert other.json()["error"] == "robotCode 'another-robot' is not this robot's (KB_DINGTALK_APP_KEY)"
    not_json = robot.post(b"{not json", dingtalk_headers())
    assert (not_json.status_code, not_json.json()["error"]) == (
        400,
        "body: not JSON (DingTalk sends a robot's messages as JSON)",
    )
    no_id = robot_body(RESUME_EN)
    del no_id["msgId"]
    missing = robot.ask(no_id)
    assert (missing.status_code, missing.json()["error"]) == (400, "body.msgId: Field required")
    shaped = robot.ask({**robot_body(RESUME_EN), "text": "a question"})
    assert shaped.status_code == 400 and shaped.json()["error"].startswith("body.text: ")


# --- the session webhook --------------------------------------------------------------


def test_the_robot_posts_only_to_dingtalks_own_webhooks_and_not_after_they_expire(
    llm_robot: Robot, stand_in: DingTalkStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = robot_body(RESUME_EN, sessionWebhook="https://attacker.example/hook?session=x")
    expired = robot_body(RESUME_EN, stand_in, sessionWebhookExpiredTime=int(time.time() * 1000) - 1000)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        for body in (elsewhere, expired):
            response = llm_robot.ask(body)
            # No webhook to follow up through: the answer waits for nothing and has no "on its way" line.
            assert response.status_code == 200
            assert "on its way" not in response.json()["markdown"]["text"]
    lines = [r.getMessage() for r in caplog.records if r.name == "kb.server"]
    assert (
        "DingTalk: sessionWebhook 'https://attacker.example/hook?session=x' is not under KB_DINGTALK_WEBHOOK_BASE"
        in lines[0]
    )
    assert lines[1] == "DingTalk: the sessionWebhook expired; nothing posted"
    time.sleep(0.3)
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
        response = robot.ask(robot_body(RESUME_EN, stand_in))
        assert response.status_code == 200
        deadline = time.monotonic() + 10
        while not [r for r in caplog.records if "sessionWebhook answered" in r.getMessage()]:
            assert time.monotonic() < deadline, "the failure was not logged"
            time.sleep(0.05)
        time.sleep(0.3)
    logged = [r for r in caplog.records if r.getMessage().startswith("DingTalk: the sessionWebhook")]
    assert [r.getMessage() for r in logged] == [f"DingTalk: the sessionWebhook {said}"]
    assert logged[0].exc_info is None


# --- insights and limits --------------------------------------------------------------------


def test_questions_are_recorded_with_their_channel_and_no_ids(robot: Robot) -> None:
    question = "怎么把 Megatron 的 checkpoint 转成 HF 格式"
    assert robot.ask(robot_body(question, conversation="cid_recorded")).status_code == 200
    rows = robot.rows(
        f"SELECT text, channel, kind, chat_workspace, chat_conversation FROM questions WHERE text = '{question}'"
    )
    assert rows == [(question, "dingtalk", "chat", None, None)]  # a chat turn, counted with the chats
    raw = b"".join(p.read_bytes() for p in Path(robot.app.state.settings.data_dir).glob("insights.sqlite*"))
    assert b"staff-ada" not in raw and b"cid_recorded" not in raw and b"sender-ada" not in raw


@pytest.mark.slow
def test_each_conversation_is_limited_and_dingtalk_is_exempt_from_the_browser_limit(robot: Robot) -> None:
    bodies = [robot_body(f"{RESUME_EN} ({n})", conversation="cid_busy") for n in range(24)]
    with ThreadPoolExecutor(len(bodies)) as pool:  # at once: the limit refills one question every 3 s
        answers = list(pool.map(robot.ask, bodies))
    assert [a.status_code for a in answers] == [200] * 24  # KB_RATE_LIMIT is 5/minute on this server
    texts = [a.json()["markdown"]["text"] for a in answers]
    busy = [t for t in texts if t.startswith("This chat is asking too fast (the limit is 20 a minute); ask again in ")]
    answered = [t for t in texts if "How do I resume training?" in t]
    assert len(answered) >= 20 and len(busy) >= 1 and len(answered) + len(busy) == 24
    quiet = robot.ask(robot_body(RESUME_EN, conversation="cid_quiet")).json()
    assert quiet["markdown"]["title"] == "How do I resume training?"
    with httpx.Client(base_url=robot.url) as browser:
        statuses = [browser.get("/api/search", params={"q": "OOM"}).status_code for _ in range(6)]
    assert statuses[-1] == 429


# --- off, and settings ---------------------------------------------------------------------


def test_the_robot_is_off_without_its_settings(settings: ServerSettings, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="kb.server"):
        with TestClient(create_app(settings)) as client:
            response = client.post("/dingtalk/robot", content=json.dumps(robot_body("hi")), headers=dingtalk_headers())
    assert response.status_code == 404
    assert response.json()["error"] == "the DingTalk robot is off: set KB_DINGTALK_APP_KEY and KB_DINGTALK_APP_SECRET"
    assert "DingTalk robot off: KB_DINGTALK_APP_KEY is not set, so /dingtalk/robot answers 404" in caplog.messages


def test_its_settings_come_together_and_its_webhook_base_is_checked() -> None:
    with pytest.raises(SettingsError) as half:
        ServerSettings(dingtalk_app_secret="s")
    assert str(half.value) == (
        "setting KB_DINGTALK_APP_KEY='': expected a value, since KB_DINGTALK_APP_SECRET is set "
        "(or leave KB_DINGTALK_APP_KEY, KB_DINGTALK_APP_SECRET all empty)"
    )
    with pytest.raises(SettingsError, match="KB_DINGTALK_WEBHOOK_BASE='https://oapi.dingtalk.com/robot'"):
        ServerSettings(dingtalk_webhook_base="https://oapi.dingtalk.com/robot")
