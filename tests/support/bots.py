"""The chat bots side by side, for the scenarios every one of them must pass (tests/server/channels/test_bots.py).

Each bot has a `Harness`: the settings that turn it on, how its platform signs and sends a
message or a button press, where its replies arrive (Slack's and DingTalk's in the HTTP response,
or later at the `response_url` / `sessionWebhook` stand-in; Feishu's always at its open platform's
stand-in), and how to read a reply's text. `BotServer` serves the app in a real uvicorn and says
when every request it took is done, background tasks included (Starlette runs them before the
request's ASGI call returns): the signal to wait for before saying what was, or was not, sent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

import httpx

from server.channels.registry import CHANNELS
from server.settings import ServerSettings
from tests.support import dingtalk, feishu, slack
from tests.support.servers import own_data

__all__ = ["BOTS", "HARNESSES", "Sent", "Request", "Harness", "BotServer", "Bots"]

# The team chats: the channels a platform calls with one message at a time (`platform`, reading a question), each
# of which must have its harness here; a bot added to the registry is in every scenario at once.
BOTS = [c.name for c in CHANNELS if c.platform and c.reads == "question"]
Request = tuple[bytes, dict[str, str], str]  # a body, its headers, and the key its replies arrive under


@dataclass
class Sent:
    """One request sent to a bot: its HTTP response, and the key its replies arrive under at the stand-in."""

    response: httpx.Response
    key: str


class Harness:
    """How one chat platform talks to its bot; the scenarios see only this."""

    name = ""  # the channel, as insights record it
    label = ""  # as the bot's errors name the platform
    path = ""  # where the platform posts messages
    off_error = ""  # the 404's error when the bot's settings are not set
    off_log = ""  # the line logged at start-up then
    partial: tuple[dict[str, str], str] | None = None  # settings that are not all of them, and the refusal
    ack_window: str | None = None  # the module whose ACK_SECONDS bounds the wait for a search, if any
    late_notice = True  # whether a search that overruns is acknowledged with "still looking"

    def __init__(self, stand_in_url: str):
        self.stand_in_url = stand_in_url

    def settings(self, base: ServerSettings) -> ServerSettings:
        raise NotImplementedError

    def message(self, text: str, chat: str = "") -> Request:
        """A text message asking `text` in `chat` (one of its own if empty)."""
        raise NotImplementedError

    def non_text(self) -> Request:
        """A message with no text (a picture)."""
        raise NotImplementedError

    def forged(self, text: str) -> Request:
        """A message signed with another secret."""
        raise NotImplementedError

    def stale(self, text: str) -> Request:
        """A message signed too long ago."""
        raise NotImplementedError

    def response_text(self, response: httpx.Response) -> str | None:
        """The reply the HTTP response carries; None when it carries none."""
        raise NotImplementedError

    def posted(self, key: str) -> list[str]:
        """The replies that arrived at the stand-in under `key`, in order, as text."""
        raise NotImplementedError

    def vote(self, server: "BotServer", entry: str, helpful: bool, lang: str, voter: str) -> str:
        """A vote button pressed by `voter` on an answer in `lang`; what the voter is told."""
        raise NotImplementedError


class SlackHarness(Harness):
    name, label, path = "slack", "Slack", "/slack/command"
    off_error = "the Slack routes are off: set KB_SLACK_SIGNING_SECRET to the Slack app's signing secret"
    off_log = "Slack routes off: KB_SLACK_SIGNING_SECRET is not set, so /slack/* answers 404"
    ack_window = "server.channels.slack.routes"

    def __init__(self, serve: Callable[[Any], Any]):
        self.stand_in = slack.SlackStandIn(serve)
        super().__init__(self.stand_in.url)

    def settings(self, base: ServerSettings) -> ServerSettings:
        return base.with_(slack_signing_secret=slack.SECRET, slack_response_base=self.stand_in_url)

    def _command(self, text: str, chat: str = "", **signing: Any) -> Request:
        key = uuid.uuid4().hex
        fields = {"channel_id": chat} if chat else {}
        body = slack.command_body(text, self.stand_in.response_url(key), **fields)
        return body, slack.slack_headers(body, **signing), key

    def message(self, text: str, chat: str = "") -> Request:
        return self._command(text, chat)

    def forged(self, text: str) -> Request:
        return self._command(text, secret="not-the-secret")

    def stale(self, text: str) -> Request:
        return self._command(text, timestamp=int(time.time()) - 301)

    def response_text(self, response: httpx.Response) -> str | None:
        return self.text(response.json()) if response.content else None

    def posted(self, key: str) -> list[str]:
        with self.stand_in.arrived:
            return [self.text(body) for name, body in self.stand_in.posts if name == key]

    @staticmethod
    def text(message: dict[str, Any]) -> str:
        """A Block Kit message's text as Slack shows it: its sections and context lines (its `text` without blocks)."""
        lines = []
        for block in message.get("blocks", []):
            if block["type"] == "section":
                lines.append(block["text"]["text"])
            elif block["type"] == "context":
                lines.append(" ".join(element["text"] for element in block["elements"]))
        return "\n".join(lines) if lines else str(message["text"])

    def vote(self, server: "BotServer", entry: str, helpful: bool, lang: str, voter: str) -> str:
        key = uuid.uuid4().hex
        action = "kb_helpful" if helpful else "kb_unhelpful"
        body = slack.interaction_body(action, entry, self.stand_in.response_url(key), f"kb_actions:{lang}", voter)
        response = server.post("/slack/interactive", body, slack.slack_headers(body))
        assert response.status_code == 200, response.text
        return self.text(self.stand_in.wait_for(key))


class FeishuHarness(Harness):
    name, label, path = "feishu", "Feishu", "/feishu/events"
    off_error = "the Feishu bot is off: set KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET and KB_FEISHU_VERIFICATION_TOKEN"
    off_log = "Feishu bot off: KB_FEISHU_APP_ID is not set, so /feishu/events answers 404"
    partial = (
        {"feishu_app_id": "cli_x", "feishu_verification_token": "t"},
        "setting KB_FEISHU_APP_SECRET='': expected a value, since KB_FEISHU_APP_ID is set "
        "(or leave KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET, KB_FEISHU_VERIFICATION_TOKEN all empty)",
    )
    late_notice = False  # acknowledged at once, every answer sent in the background
    APP_ID = "cli_kb_feishu_contract"  # the SDK caches tokens by app id: one of its own

    def __init__(self, serve: Callable[[Any], Any]):
        self.stand_in = feishu.FeishuStandIn(serve)
        super().__init__(self.stand_in.url)

    def settings(self, base: ServerSettings) -> ServerSettings:
        return base.with_(
            feishu_app_id=self.APP_ID,
            feishu_app_secret=feishu.APP_SECRET,
            feishu_verification_token=feishu.VERIFICATION_TOKEN,
            feishu_encrypt_key=feishu.ENCRYPT_KEY,
            feishu_base_url=self.stand_in_url,
        )

    def _event(self, text: str, chat: str = "", **options: Any) -> dict[str, Any]:
        return feishu.message_event(text, chat_id=chat or f"oc_{uuid.uuid4().hex}", app_id=self.APP_ID, **options)

    def _signed(self, event: dict[str, Any], **signing: Any) -> Request:
        return *feishu.signed(event, **signing), feishu.message_id(event)

    def message(self, text: str, chat: str = "") -> Request:
        return self._signed(self._event(text, chat))

    def non_text(self) -> Request:
        return self._signed(self._event("", kind="image", content=json.dumps({"image_key": "img_v2_1"})))

    def forged(self, text: str) -> Request:
        return self._signed(self._event(text), sign_with="not-the-key")

    def stale(self, text: str) -> Request:
        return self._signed(self._event(text), timestamp=int(time.time()) - 301)

    def response_text(self, response: httpx.Response) -> str | None:
        assert response.json() == {"msg": "ok"}  # Feishu waits 3 s at most: the answer is always a card of its own
        return None

    def posted(self, key: str) -> list[str]:
        with self.stand_in.arrived:
            return [self.text(card) for card in self.stand_in.cards(key)]

    @staticmethod
    def text(card: dict[str, Any]) -> str:
        """A card's text: its Markdown elements (its buttons left out)."""
        return "\n".join(e["content"] for e in card["body"]["elements"] if e["tag"] == "markdown")

    def vote(self, server: "BotServer", entry: str, helpful: bool, lang: str, voter: str) -> str:
        value = {"kb": "vote", "entry": entry, "vote": "up" if helpful else "down", "lang": lang, "q": "?"}
        event = feishu.press_event(value, user=voter, app_id=self.APP_ID)
        response = server.post(self.path, *feishu.signed(event))
        assert response.status_code == 200, response.text
        return str(response.json()["toast"]["content"])


class DingTalkHarness(Harness):
    name, label, path = "dingtalk", "DingTalk", "/dingtalk/robot"
    off_error = "the DingTalk robot is off: set KB_DINGTALK_APP_KEY and KB_DINGTALK_APP_SECRET"
    off_log = "DingTalk robot off: KB_DINGTALK_APP_KEY is not set, so /dingtalk/robot answers 404"
    partial = (
        {"dingtalk_app_secret": "s"},
        "setting KB_DINGTALK_APP_KEY='': expected a value, since KB_DINGTALK_APP_SECRET is set "
        "(or leave KB_DINGTALK_APP_KEY, KB_DINGTALK_APP_SECRET all empty)",
    )
    ack_window = "server.channels.dingtalk.routes"

    def __init__(self, serve: Callable[[Any], Any]):
        self.stand_in = dingtalk.DingTalkStandIn(serve)
        super().__init__(self.stand_in.url)

    def settings(self, base: ServerSettings) -> ServerSettings:
        return base.with_(
            dingtalk_app_key=dingtalk.APP_KEY,
            dingtalk_app_secret=dingtalk.APP_SECRET,
            dingtalk_webhook_base=self.stand_in_url,
        )

    def _body(self, text: str, chat: str = "", **fields: Any) -> dict[str, Any]:
        return dingtalk.robot_body(text, self.stand_in, conversation=chat or f"cid_{uuid.uuid4().hex}", **fields)

    @staticmethod
    def _signed(body: dict[str, Any], **signing: Any) -> Request:
        return json.dumps(body).encode(), dingtalk.dingtalk_headers(**signing), dingtalk.session_of(body)

    def message(self, text: str, chat: str = "") -> Request:
        return self._signed(self._body(text, chat))

    def non_text(self) -> Request:
        body = self._body("", msgtype="picture", content={"downloadCode": "abc"})
        del body["text"]
        return self._signed(body)

    def forged(self, text: str) -> Request:
        return self._signed(self._body(text), secret="not-the-secret")

    def stale(self, text: str) -> Request:
        return self._signed(self._body(text), timestamp_ms=int((time.time() - 3660) * 1000))

    def response_text(self, response: httpx.Response) -> str | None:
        return self.text(response.json()) if response.content else None

    def posted(self, key: str) -> list[str]:
        with self.stand_in.arrived:
            return [self.text(body) for body in self.stand_in.posted(key)]

    @staticmethod
    def text(message: dict[str, Any]) -> str:
        assert message["msgtype"] == "markdown", message
        return str(message["markdown"]["text"])

    def vote(self, server: "BotServer", entry: str, helpful: bool, lang: str, voter: str) -> str:
        raise AssertionError("the DingTalk robot's Markdown replies carry no vote buttons")


HARNESSES: dict[str, Callable[[Callable[[Any], Any]], Harness]] = {
    "slack": SlackHarness,
    "feishu": FeishuHarness,
    "dingtalk": DingTalkHarness,
}


class BotServer:
    """The app with one bot on, served by a real uvicorn on a loopback port; `idle` waits for every request it
    took to be done, background tasks included."""

    def __init__(self, serve: Callable[..., Any], settings: ServerSettings, harness: Harness | None = None):
        """`harness`: the bot's, for `send`, `ask` and `seen`; a platform's own tests may post as they need."""
        from server import create_app

        self.harness = harness
        self.app = create_app(settings)
        self.running = 0
        self.done = threading.Condition()
        self.url = serve(self._counted, interface="asgi3").url

    async def _counted(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        with self.done:
            self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            with self.done:
                self.running -= 1
                self.done.notify_all()

    def idle(self, timeout: float = 30) -> None:
        """Once every request taken is answered and its background tasks have run."""
        with self.done:
            assert self.done.wait_for(lambda: self.running == 0, timeout), f"still busy after {timeout} s"

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return httpx.post(self.url + path, content=body, headers=headers, timeout=15)

    def send(self, request: Request) -> Sent:
        assert self.harness is not None
        body, headers, key = request
        return Sent(self.post(self.harness.path, body, headers), key)

    def ask(self, text: str, chat: str = "") -> Sent:
        assert self.harness is not None
        return self.send(self.harness.message(text, chat))

    def seen(self, *sent: Sent) -> list[str]:
        """What the asker sees of these requests (one message, or its deliveries), in order, once all is done:
        the replies in the HTTP responses, then those posted to the platform."""
        assert self.harness is not None
        self.idle()
        texts = [self.harness.response_text(s.response) for s in sent]
        keys = dict.fromkeys(s.key for s in sent)
        posted = [t for key in keys for t in self.harness.posted(key)]
        return [t for t in texts if t is not None] + posted

    def rows(self, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
        """The rows `sql` reads from the insights database, once what was queued is written."""
        from kb.insights.store import store_path

        self.idle()
        assert self.app.state.recorder.flush()
        with sqlite3.connect(store_path(self.app.state.settings.data_dir)) as db:
            return db.execute(sql, parameters).fetchall()


class Bots:
    """Every bot's stand-in and servers, made when first asked for: `bots(name, **settings)`."""

    def __init__(self, serve: Callable[[Any], Any], settings: ServerSettings, tmp_path_factory: Any):
        self.serve, self.base, self.tmp_path_factory = serve, settings, tmp_path_factory
        self.harnesses: dict[str, Harness] = {}
        self.servers: dict[tuple[str, tuple[tuple[str, Any], ...]], BotServer] = {}

    def harness(self, name: str) -> Harness:
        if name not in self.harnesses:
            self.harnesses[name] = HARNESSES[name](self.serve)
        return self.harnesses[name]

    def __call__(self, name: str, **more: Any) -> BotServer:
        """A server with the bot `name` on, a data directory of its own, and `more` settings."""
        key = (name, tuple(sorted(more.items())))
        if key not in self.servers:
            harness = self.harness(name)
            data = own_data(self.base, self.tmp_path_factory, name)
            self.servers[key] = BotServer(self.serve, harness.settings(data).with_(**more), harness)
        return self.servers[key]
