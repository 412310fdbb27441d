"""Requests as Feishu (Lark) sends them, encrypted and signed, and a stand-in for its open platform.

The event JSON is encrypted with AES-256-CBC under the SHA-256 of the Encrypt Key (a random IV
before the ciphertext, PKCS#7 padding, Base64) and signed with the SHA-256 of timestamp + nonce +
Encrypt Key + body, as Feishu's developer guide documents; computed here, not by the code under
test. Feishu's open platform cannot be reached from the tests, so `FeishuStandIn`, a small HTTP
server on a 127.0.0.1 port, hands out tenant access tokens and takes the cards the bot sends.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import threading
import time
import uuid
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse

__all__ = [
    "APP_ID",
    "APP_SECRET",
    "VERIFICATION_TOKEN",
    "ENCRYPT_KEY",
    "encrypt",
    "signed",
    "message_event",
    "press_event",
    "message_id",
    "FeishuStandIn",
]

# The SDK keeps tenant access tokens in one cache per process, by app id: each app has its own id.
APP_ID = "cli_kb_feishu_test"
APP_SECRET = "feishu-app-secret"
VERIFICATION_TOKEN = "kb-verification-token"
ENCRYPT_KEY = "kb-encrypt-key"


def encrypt(plaintext: str, key: str = ENCRYPT_KEY) -> str:
    from Crypto.Cipher import AES

    data = plaintext.encode("utf-8")
    pad = 16 - len(data) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(key.encode("utf-8")).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(data + bytes([pad]) * pad)).decode("ascii")


def signed(
    payload: dict[str, Any], key: str = ENCRYPT_KEY, timestamp: int | None = None, sign_with: str | None = None
) -> tuple[bytes, dict[str, str]]:
    """The body and headers Feishu sends for `payload` when the app has the Encrypt Key `key`."""
    body = json.dumps({"encrypt": encrypt(json.dumps(payload), key)}).encode("utf-8")
    ts = str(int(time.time()) if timestamp is None else timestamp)
    nonce = uuid.uuid4().hex
    signature = hashlib.sha256((ts + nonce + (sign_with or key)).encode("utf-8") + body).hexdigest()
    return body, {
        "Content-Type": "application/json",
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature,
    }


def header(event_type: str, app_id: str = APP_ID, token: str = VERIFICATION_TOKEN) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "token": token,
        "create_time": str(int(time.time() * 1000)),
        "event_type": event_type,
        "tenant_key": "tenant-1",
        "app_id": app_id,
    }


def message_event(
    text: str, chat_type: str = "group", chat_id: str = "oc_training", mention: bool = True, **options: Any
) -> dict[str, Any]:
    """`im.message.receive_v1` for a text message (in a group, @-mentioning the bot first)."""
    kind = options.pop("kind", "text")
    content = options.pop("content", None) or json.dumps({"text": f"@_user_1 {text}" if mention else text})
    mentions = [{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "FAQ", "tenant_key": "tenant-1"}]
    return {
        "schema": "2.0",
        "header": header("im.message.receive_v1", **options),
        "event": {
            "sender": {"sender_id": {"open_id": "ou_asker", "user_id": "asker"}, "sender_type": "user"},
            "message": {
                "message_id": f"om_{uuid.uuid4().hex}",
                "create_time": str(int(time.time() * 1000)),
                "chat_id": chat_id,
                "chat_type": chat_type,
                "message_type": kind,
                "content": content,
                "mentions": mentions if mention else [],
            },
        },
    }


def press_event(value: dict[str, Any], user: str = "ou_asker", app_id: str = APP_ID) -> dict[str, Any]:
    """`card.action.trigger`: a button on one of the bot's cards pressed."""
    return {
        "schema": "2.0",
        "header": header("card.action.trigger", app_id=app_id),
        "event": {
            "operator": {"tenant_key": "tenant-1", "open_id": user},
            "token": "c-update-token",
            "action": {"tag": "button", "value": value},
            "host": "im_message",
            "context": {"open_message_id": "om_card", "open_chat_id": "oc_training"},
        },
    }


def message_id(event: dict[str, Any]) -> str:
    return str(event["event"]["message"]["message_id"])


class FeishuStandIn:
    """Stands in for Feishu's open platform: tenant access tokens, and replies to messages (recorded).

    `reply_mode` is "ok", "error" (HTTP 502 with a text body) or "slow" (3 s before answering).
    An app id `cli_refused` is refused its token, as a wrong App Secret is.
    """

    def __init__(self, serve: Callable[[Any], Any]):
        self.tokens: list[str] = []  # the app ids a token was asked for, in order
        self.replies: list[tuple[str, str, dict[str, Any]]] = []  # (message id, Authorization, card)
        self.reply_mode = "ok"
        self.arrived = threading.Condition()
        app = FastAPI()

        @app.post("/open-apis/auth/v3/tenant_access_token/internal")
        async def tenant_access_token(request: Request) -> dict[str, Any]:
            body = await request.json()
            self.tokens.append(body["app_id"])
            if body["app_id"] == "cli_refused" or body["app_secret"] != APP_SECRET:
                return {"code": 10014, "msg": "app secret invalid"}
            expire = 601 if body["app_id"].endswith("_short") else 7200
            return {"code": 0, "msg": "ok", "tenant_access_token": f"t-{len(self.tokens)}", "expire": expire}

        @app.post("/open-apis/im/v1/messages/{message_id}/reply", response_model=None)
        async def reply(message_id: str, request: Request) -> Any:
            body = await request.json()
            if self.reply_mode == "error":
                return PlainTextResponse("upstream connect error", 502)
            if self.reply_mode == "slow":
                await asyncio.sleep(3)
            assert body["msg_type"] == "interactive"
            with self.arrived:
                self.replies.append((message_id, request.headers["authorization"], json.loads(body["content"])))
                self.arrived.notify_all()
            return {"code": 0, "msg": "success", "data": {"message_id": f"om_reply_{message_id}"}}

        self.url = serve(app).url

    def cards(self, message_id: str) -> list[dict[str, Any]]:
        return [card for sent, _, card in self.replies if sent == message_id]

    def wait_for(self, message_id: str, count: int = 1, timeout: float = 15) -> list[dict[str, Any]]:
        """The first `count` cards sent in reply to `message_id`, once they have come."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.cards(message_id)) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{count} card(s) were not sent in reply to {message_id} within {timeout} s"
                self.arrived.wait(left)
            return self.cards(message_id)[:count]
