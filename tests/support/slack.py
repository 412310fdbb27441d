"""Requests as Slack sends them: signed with the signing secret (HMAC-SHA256 over `v0:{timestamp}:{body}`)."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from typing import Any, Callable
from urllib.parse import urlencode

from fastapi import FastAPI, Request

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
_numbers = itertools.count(1)


def slack_headers(body: bytes, timestamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    """The headers Slack sends with `body`: the timestamp and `v0=` + HMAC-SHA256 of `v0:{ts}:{body}`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def command_body(text: str, response_url: str = "", **fields: str) -> bytes:
    """A `/faq` command as Slack sends it; each with a trigger id of its own (Slack's are unique), and from a channel
    of its own unless `channel_id` is given (so that one channel's limit is not what a test meets)."""
    form = {
        "token": "unused",
        "team_id": "T0001",
        "team_domain": "example",
        "channel_id": f"C{next(_numbers):06d}",
        "channel_name": "training",
        "user_id": "U0001",
        "user_name": "ada.lovelace",
        "command": "/faq",
        "text": text,
        "response_url": response_url,
        "trigger_id": f"{next(_numbers)}.{time.time_ns()}",
        **fields,
    }
    return urlencode(form).encode()


def interaction_body(
    action_id: str, value: str, response_url: str, block_id: str = "kb_actions:en", user: str = "U0001"
) -> bytes:
    """A button pressed on a `/faq` reply, as Slack sends it (by `user`)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "ada.lovelace"},
        "container": {"type": "message", "is_ephemeral": True},
        "response_url": response_url,
        "actions": [
            {"type": "button", "action_id": action_id, "block_id": block_id, "value": value, "action_ts": "1.2"}
        ],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def post_command(client: Any, text: str, response_url: str = "") -> Any:
    body = command_body(text, response_url)
    return client.post("/slack/command", content=body, headers=slack_headers(body))


class SlackStandIn:
    """Stands in for Slack's servers: records what is posted to `{url}/response/{name}`."""

    def __init__(self, serve: Callable[[Any], Any]):
        self.posts: list[tuple[str, dict[str, Any]]] = []
        self.arrived = threading.Condition()
        app = FastAPI()

        @app.post("/response/{name}")
        async def response_url(name: str, request: Request) -> dict[str, bool]:
            body = await request.json()
            with self.arrived:
                self.posts.append((name, body))
                self.arrived.notify_all()
            return {"ok": True}

        self.url = serve(app).url

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    def wait_for(self, name: str, timeout: float = 15) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                found = [body for n, body in self.posts if n == name]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, f"nothing was posted to response_url {name!r} within {timeout} s"
                self.arrived.wait(left)
