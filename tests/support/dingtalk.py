"""Messages as DingTalk's robot (HTTP mode) sends them, signed, and a stand-in for its session webhooks.

The `sign` header is the Base64 HMAC-SHA256, keyed with the AppSecret, of the `timestamp` header
(milliseconds), a line break and the AppSecret, as DingTalk's guide to receiving messages
documents; computed here, not by the code under test. DingTalk's servers cannot be reached from
the tests, so `DingTalkStandIn`, a small HTTP server on a 127.0.0.1 port, takes what is posted to
the conversations' session webhooks, as oapi.dingtalk.com would.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
import time
import uuid
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse

__all__ = ["APP_KEY", "APP_SECRET", "dingtalk_headers", "robot_body", "session_of", "DingTalkStandIn"]

APP_KEY = "dingkbtestrobot"
APP_SECRET = "dingtalk-app-secret-0123456789"


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
