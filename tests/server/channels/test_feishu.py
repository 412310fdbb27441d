"""The Feishu (Lark) bot: verified events, cards in the asker's language, votes, and the open platform failing.

Requests are made here the way Feishu makes them, as its developer guide documents: the
event JSON encrypted with AES-256-CBC under the SHA-256 of the Encrypt Key (a random IV
before the ciphertext, PKCS#7 padding, Base64) and signed with the SHA-256 of
timestamp + nonce + Encrypt Key + body; computed in the test, not by the code under test.
Feishu's open platform cannot be reached from here, so a small HTTP server on a 127.0.0.1
port stands in for it (`FeishuStandIn`): it hands out tenant access tokens and takes the
cards the bot sends as replies, as open.feishu.cn would. The knowledge base runs in a real
uvicorn on another loopback port.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib
import json
import logging
import os
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
from server.channels.feishu.card import card_markdown, help_card
from server.channels.feishu.client import FeishuClient
from server.settings import ServerSettings
from tests.support.servers import ServedApp, own_data, top_hits

# The SDK keeps tenant access tokens in one cache per process, by app id: each app here has its own id.
APP_ID = "cli_kb_feishu_test"
PLAIN_APP_ID = "cli_kb_plain_short"  # its tokens live a second (`expire` 601: the SDK renews ten minutes early)
APP_SECRET = "feishu-app-secret"
VERIFICATION_TOKEN = "kb-verification-token"
ENCRYPT_KEY = "kb-encrypt-key"
RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"
ROLL_RESUME = "how do I resume training in ROLL"  # ROLL's FAQ has no entry on resuming; slime's has
PIZZA = "what is the best pizza in Naples?"


# --- Feishu's side: encryption, signatures, events --------------------------------------


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


def press_event(value: dict[str, Any], user: str = "ou_asker") -> dict[str, Any]:
    """`card.action.trigger`: a button on one of the bot's cards pressed."""
    return {
        "schema": "2.0",
        "header": header("card.action.trigger"),
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


# --- the servers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stand_in(serve: Callable[[Any], Any]) -> Iterator[FeishuStandIn]:
    platform = FeishuStandIn(serve)
    yield platform
    platform.reply_mode = "ok"


@pytest.fixture
def reply_mode(stand_in: FeishuStandIn) -> Iterator[Callable[[str], None]]:
    def switch(mode: str) -> None:
        stand_in.reply_mode = mode

    yield switch
    stand_in.reply_mode = "ok"


class Bot(ServedApp):
    """A real server (uvicorn) with the Feishu bot on; `ask` sends it an event as Feishu does (encrypted, signed)."""

    def post(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return httpx.post(f"{self.url}/feishu/events", content=body, headers=headers, timeout=10)

    def ask(self, event: dict[str, Any]) -> httpx.Response:
        return self.post(*signed(event))


@pytest.fixture(scope="module")
def bot(settings: ServerSettings, serve: Callable[[Any], Any], stand_in: FeishuStandIn, tmp_path_factory: Any) -> Bot:
    """Feishu on with an Encrypt Key, and a rate limit for browsers (which Feishu is not counted against)."""
    configured = own_data(settings, tmp_path_factory, "feishu").with_(
        feishu_app_id=APP_ID,
        feishu_app_secret=APP_SECRET,
        feishu_verification_token=VERIFICATION_TOKEN,
        feishu_encrypt_key=ENCRYPT_KEY,
        feishu_base_url=stand_in.url,
        rate_limit="5/minute",
    )
    return Bot(serve, configured)


@pytest.fixture(scope="module")
def plain(settings: ServerSettings, serve: Callable[[Any], Any], stand_in: FeishuStandIn, tmp_path_factory: Any) -> Bot:
    """Feishu on without an Encrypt Key (the Verification Token alone), recording chat ids."""
    configured = own_data(settings, tmp_path_factory, "feishu-plain").with_(
        feishu_app_id=PLAIN_APP_ID,
        feishu_app_secret=APP_SECRET,
        feishu_verification_token=VERIFICATION_TOKEN,
        feishu_base_url=stand_in.url,
        insights_chat_ids=True,
    )
    return Bot(serve, configured)


def post_plain(plain: Bot, payload: dict[str, Any]) -> httpx.Response:
    return plain.post(json.dumps(payload).encode(), {"Content-Type": "application/json"})


def expected_card(hits: list[dict[str, Any]], lang: str, question: str) -> dict[str, Any]:
    """The card Feishu should get for these hits (written out by hand from the API's fields)."""
    best = hits[0]
    words = {
        "zh": ("来源：", "相关条目", "👍 有帮助", "👎 没帮助"),
        "en": ("Source: ", "Related entries", "👍 Helpful", "👎 Not helpful"),
    }[lang]
    source = f"[{best['source']['title']} · {best['source']['version']}]({best['url']})"
    elements: list[dict[str, Any]] = [
        {"tag": "markdown", "content": f"**[{best['question']}]({best['permalink']})**"},
        {"tag": "markdown", "content": best["answer"]},
        {"tag": "markdown", "content": f"{words[0]}{source}", "text_size": "notation"},
    ]
    if len(hits) > 1:
        lines = [f"- [{h['question']}]({h['permalink']}) · {h['source']['framework']}" for h in hits[1:4]]
        elements.append({"tag": "markdown", "content": "\n".join([f"**{words[1]}**", *lines])})

    def button(label: str, vote: str) -> dict[str, Any]:
        value = {"kb": "vote", "entry": best["id"], "vote": vote, "lang": lang, "q": question}
        element = {
            "tag": "button",
            "text": {"tag": "plain_text", "content": label},
            "type": "default",
            "behaviors": [{"type": "callback", "value": value}],
        }
        return {"tag": "column", "width": "auto", "elements": [element]}

    elements.append({"tag": "column_set", "columns": [button(words[2], "up"), button(words[3], "down")]})
    return {"schema": "2.0", "config": {"update_multi": True, "width_mode": "fill"}, "body": {"elements": elements}}


@pytest.mark.parametrize(
    "module",
    [
        "server.channels.feishu",
        "server.channels.feishu.card",
        "server.channels.feishu.client",
        "server.channels.feishu.events",
        "server.channels.feishu.bot",
        "server.channels.feishu.routes",
        "server.replies",
        "server.markdown_replies",
        "server.replays",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


# --- the request URL ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_request_url_challenge_is_answered(bot: Bot, plain: Bot) -> None:
    challenge = {"challenge": "ajls384kdjx98XX", "token": VERIFICATION_TOKEN, "type": "url_verification"}
    response = bot.ask(challenge)
    assert response.status_code == 200 and response.json() == {"challenge": "ajls384kdjx98XX"}
    assert post_plain(plain, challenge).json() == {"challenge": "ajls384kdjx98XX"}
    refused = post_plain(plain, {**challenge, "token": "another app's token"})
    assert refused.status_code == 401
    assert refused.json()["error"] == (
        "not a valid Feishu request: invalid verification_token "
        "(is KB_FEISHU_VERIFICATION_TOKEN the app's Verification Token?)"
    )


# --- questions ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("question", "lang"), [(RESUME_ZH, "zh"), (RESUME_EN, "en")])
def test_a_question_gets_a_card_in_its_language(
    bot: Bot, stand_in: FeishuStandIn, client: TestClient, question: str, lang: str
) -> None:
    hits = top_hits(client, question, bot.url)
    assert hits[0]["question"] == {"zh": "如何续训？", "en": "How do I resume training?"}[lang]
    event = message_event(question)
    started = time.monotonic()
    response = bot.ask(event)
    assert response.status_code == 200 and response.json() == {"msg": "ok"}
    assert time.monotonic() - started < 1.0, "Feishu waits 3 s for its answer; the bot acknowledges at once"
    [card] = stand_in.wait_for(message_id(event))
    assert card == expected_card(hits, lang, question)


@pytest.mark.slow
def test_a_direct_message_needs_no_mention_and_a_group_message_without_one_is_not_answered(
    bot: Bot, stand_in: FeishuStandIn, client: TestClient
) -> None:
    overheard = message_event(RESUME_EN, mention=False)
    direct = message_event(RESUME_EN, chat_type="p2p", chat_id="oc_direct", mention=False)
    assert bot.ask(overheard).status_code == 200 and bot.ask(direct).status_code == 200
    [card] = stand_in.wait_for(message_id(direct))
    assert card == expected_card(top_hits(client, RESUME_EN, bot.url), "en", RESUME_EN)
    time.sleep(0.5)
    assert stand_in.cards(message_id(overheard)) == []


def test_a_rich_text_message_is_read_and_an_image_is_answered_that_text_is_needed(
    bot: Bot, stand_in: FeishuStandIn
) -> None:
    post = {
        "title": "",
        "content": [[{"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": " slime 如何续训？"}]],
    }
    rich = message_event("", kind="post", content=json.dumps(post))
    image = message_event("", kind="image", content=json.dumps({"image_key": "img_v2_1"}))
    assert bot.ask(rich).status_code == 200 and bot.ask(image).status_code == 200
    [answer] = stand_in.wait_for(message_id(rich))
    assert answer["body"]["elements"][-1]["tag"] == "column_set"
    assert answer["body"]["elements"][-1]["columns"][0]["elements"][0]["text"]["content"] == "👍 有帮助"
    [notice] = stand_in.wait_for(message_id(image))
    assert notice["body"]["elements"][0]["content"] == (
        "I can only read questions sent as text: send the question or the error as text.\n\n"
        "我只能读文字提问：请把问题或报错以文字发给我。"
    )


def test_an_unanswerable_question_gets_the_nearest_entries_and_no_buttons(
    bot: Bot, stand_in: FeishuStandIn, client: TestClient
) -> None:
    hits = top_hits(client, PIZZA, bot.url)
    event = message_event(PIZZA)
    bot.ask(event)
    [card] = stand_in.wait_for(message_id(event))
    nearest = [f"- [{h['question']}]({h['permalink']}) · {h['source']['framework']}" for h in hits[:3]]
    assert card["body"]["elements"] == [
        {"tag": "markdown", "content": "The FAQ has no confident answer to this."},
        {"tag": "markdown", "content": "\n".join(["**Nearest entries**", *nearest])},
    ]


def test_a_question_about_a_framework_whose_faq_lacks_it_says_so_first(bot: Bot, stand_in: FeishuStandIn) -> None:
    event = message_event(ROLL_RESUME)
    bot.ask(event)
    [card] = stand_in.wait_for(message_id(event))
    # slime's answer is not given for ROLL (its confidence is 0.1), and the card says ROLL's FAQ lacks it.
    assert card["body"]["elements"][0] == {"tag": "markdown", "content": "ROLL's FAQ does not cover this."}


@pytest.mark.parametrize("text", ["", "help", "帮助"])
def test_a_mention_alone_or_help_gets_how_to_ask(bot: Bot, stand_in: FeishuStandIn, text: str) -> None:
    event = message_event(text)
    bot.ask(event)
    [card] = stand_in.wait_for(message_id(event))
    assert card == help_card({"": None, "help": "en", "帮助": "zh"}[text])
    shown = [block["content"] for block in card["body"]["elements"]]
    assert len(shown) == (2 if text == "" else 1) and all("how do I resume training?" in s for s in shown)


def test_card_markdown_shows_tags_as_text_and_keeps_code_and_links() -> None:
    answer = (
        "Set `--load <dir>` and see [the guide](https://x.org/a?b=1).\n\n"
        "<at id=all></at> <font color='red'>hi</font> ![chart](https://x.org/c.png)\n\n"
        "```bash\nls <dir> && echo '<at id=all></at>'\n```"
    )
    assert card_markdown(answer) == (
        "Set `--load <dir>` and see [the guide](https://x.org/a?b=1).\n\n"
        "&lt;at id=all>&lt;/at> &lt;font color='red'>hi&lt;/font> [chart](https://x.org/c.png)\n\n"
        "```bash\nls <dir> && echo '<at id=all></at>'\n```"
    )


# --- refused requests ------------------------------------------------------------------


def _one_hex_changed(event: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body, headers = signed(event)
    last = headers["X-Lark-Signature"][-1]
    return body, {**headers, "X-Lark-Signature": headers["X-Lark-Signature"][:-1] + ("0" if last != "0" else "1")}


def _without(name: str) -> Callable[[dict[str, Any]], tuple[bytes, dict[str, str]]]:
    def make(event: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        body, headers = signed(event)
        return body, {k: v for k, v in headers.items() if k != name}

    return make


REFUSALS: list[tuple[str, Callable[[dict[str, Any]], tuple[bytes, dict[str, str]]], str]] = [
    (
        "one hex digit of the signature changed",
        _one_hex_changed,
        "signature verification failed (is KB_FEISHU_ENCRYPT_KEY the app's Encrypt Key?)",
    ),
    (
        "signed with another key",
        lambda e: signed(e, sign_with="not-the-key"),
        "signature verification failed (is KB_FEISHU_ENCRYPT_KEY the app's Encrypt Key?)",
    ),
    (
        "encrypted with another key",
        lambda e: signed(e, key="not-the-key"),
        "(is KB_FEISHU_ENCRYPT_KEY the app's Encrypt Key?)",
    ),
    (
        "five minutes old",
        lambda e: signed(e, timestamp=int(time.time()) - 301),
        "s old; more than 300 s away is refused",
    ),
    (
        "from the future",
        lambda e: signed(e, timestamp=int(time.time()) + 400),
        "s in the future; more than 300 s away is refused",
    ),
    ("no signature", _without("X-Lark-Signature"), "the X-Lark-Signature header is missing"),
    ("no timestamp", _without("X-Lark-Request-Timestamp"), "the X-Lark-Request-Timestamp header is missing"),
    (
        "another app's verification token",
        lambda e: signed({**e, "header": {**e["header"], "token": "another app's token"}}),
        "invalid verification_token (is KB_FEISHU_VERIFICATION_TOKEN the app's Verification Token?)",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "make", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_forged_stale_or_unsigned_event_is_refused_without_an_answer(
    bot: Bot, stand_in: FeishuStandIn, caplog: pytest.LogCaptureFixture, case: str, make: Any, message: str
) -> None:
    event = message_event(RESUME_EN)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = bot.post(*make(event))
    assert response.status_code == 401
    error = response.json()
    assert error["ok"] is False and error["error"].startswith("not a valid Feishu request: ")
    assert message in error["error"]
    logged = [r for r in caplog.records if r.getMessage().startswith("Feishu request from 127.0.0.1 refused")]
    assert len(logged) == 1 and message in logged[0].getMessage() and logged[0].exc_info is None
    assert not [r for r in caplog.records if r.name == "Lark"], "the SDK's traceback is not logged"
    time.sleep(0.3)
    assert stand_in.cards(message_id(event)) == []


@pytest.mark.slow
def test_a_replayed_or_retried_event_is_answered_once(bot: Bot, stand_in: FeishuStandIn) -> None:
    event = message_event(RESUME_EN)
    body, headers = signed(event)
    assert bot.post(body, headers).status_code == 200
    assert bot.post(body, headers).json() == {"msg": "ok"}  # the same request again: a replay
    assert bot.ask(event).status_code == 200  # signed again, as Feishu's retry is
    stand_in.wait_for(message_id(event))
    time.sleep(0.5)
    assert len(stand_in.cards(message_id(event))) == 1


# --- votes -------------------------------------------------------------------------------


def test_a_vote_button_records_the_vote_like_the_webs(bot: Bot, stand_in: FeishuStandIn) -> None:
    event = message_event(RESUME_ZH)
    bot.ask(event)
    [card] = stand_in.wait_for(message_id(event))
    up, down = (column["elements"][0] for column in card["body"]["elements"][-1]["columns"])
    for button in (down, up):  # the same person changes their mind: one vote
        response = bot.ask(press_event(button["behaviors"][0]["value"]))
        assert response.status_code == 200
        assert response.json() == {"toast": {"type": "success", "content": "感谢反馈。"}}
    entry = up["behaviors"][0]["value"]["entry"]
    votes = bot.rows(f"SELECT entry_id, helpful, channel, question, voter FROM votes WHERE entry_id = '{entry}'")
    assert [row[:4] for row in votes] == [(entry, 1, "feishu", RESUME_ZH)]
    assert "ou_asker" not in votes[0][4]  # a keyed hash of the voter, not the voter


def test_a_press_that_is_not_a_vote_is_acknowledged_and_ignored(bot: Bot) -> None:
    before = bot.rows("SELECT count(*) FROM votes")
    response = bot.ask(press_event({"kb": "share", "entry": "x"}))
    assert response.status_code == 200 and response.json() == {}
    assert bot.rows("SELECT count(*) FROM votes") == before


# --- insights ------------------------------------------------------------------------------


def test_questions_are_recorded_with_their_channel_and_chat_ids_only_when_asked(
    bot: Bot, plain: Bot, stand_in: FeishuStandIn
) -> None:
    event = message_event("怎么把 Megatron 的 checkpoint 转成 HF 格式", chat_id="oc_recorded")
    bot.ask(event)
    stand_in.wait_for(message_id(event))
    rows = bot.rows(
        "SELECT text, channel, kind, chat_workspace, chat_conversation FROM questions WHERE text LIKE '%Megatron%'"
    )
    assert rows == [("怎么把 Megatron 的 checkpoint 转成 HF 格式", "feishu", "chat", None, None)]  # a chat turn
    raw = b"".join(p.read_bytes() for p in Path(bot.app.state.settings.data_dir).glob("insights.sqlite*"))
    assert b"ou_asker" not in raw and b"oc_recorded" not in raw
    # KB_INSIGHTS_CHAT_IDS=true: the tenant and the chat, still not the asker.
    asked = message_event(RESUME_EN, chat_id="oc_recorded", app_id=PLAIN_APP_ID)
    assert post_plain(plain, asked).status_code == 200
    stand_in.wait_for(message_id(asked))
    rows = plain.rows("SELECT text, channel, kind, chat_workspace, chat_conversation FROM questions")
    assert rows == [(RESUME_EN, "feishu", "chat", "tenant-1", "oc_recorded")]


# --- limits ------------------------------------------------------------------------------


@pytest.mark.slow
def test_each_chat_is_limited_and_feishu_is_exempt_from_the_browser_limit(bot: Bot, stand_in: FeishuStandIn) -> None:
    events = [message_event(f"{RESUME_EN} ({n})", chat_id="oc_busy") for n in range(24)]
    with ThreadPoolExecutor(len(events)) as pool:  # at once: the limit refills one question every 3 s
        statuses = [r.status_code for r in pool.map(bot.ask, events)]
    assert statuses == [200] * 24  # KB_RATE_LIMIT is 5/minute on this server; Feishu's servers are not counted
    cards = [stand_in.wait_for(message_id(event))[0] for event in events]
    busy = [
        c
        for c in cards
        if c["body"]["elements"][0]["content"].startswith(
            "This chat is asking too fast (the limit is 20 a minute); ask again in "
        )
    ]
    answered = [c for c in cards if c["body"]["elements"][-1]["tag"] == "column_set"]
    assert len(answered) >= 20 and len(busy) >= 1 and len(answered) + len(busy) == 24
    other = message_event(RESUME_EN, chat_id="oc_quiet")
    bot.ask(other)
    assert stand_in.wait_for(message_id(other))[0]["body"]["elements"][-1]["tag"] == "column_set"
    with httpx.Client(base_url=bot.url) as browser:
        statuses = [browser.get("/api/search", params={"q": "OOM"}).status_code for _ in range(6)]
    assert statuses[-1] == 429


# --- the open platform: tokens, failures, slowness --------------------------------------


@pytest.mark.slow
def test_the_tenant_access_token_is_fetched_once_and_kept_until_it_expires(
    bot: Bot, plain: Bot, stand_in: FeishuStandIn
) -> None:
    def authorization(event: dict[str, Any]) -> str:
        stand_in.wait_for(message_id(event))
        return next(auth for sent, auth, _ in stand_in.replies if sent == message_id(event))

    first, second = message_event(RESUME_EN), message_event(RESUME_ZH)
    for event in (first, second):
        bot.ask(event)
    token = f"Bearer t-{stand_in.tokens.index(APP_ID) + 1}"
    assert authorization(first) == authorization(second) == token
    assert stand_in.tokens.count(APP_ID) == 1  # for every card this module's `bot` sent
    # PLAIN_APP_ID's tokens expire a second after they are given: each question then needs a new one.
    time.sleep(1.5)
    before = stand_in.tokens.count(PLAIN_APP_ID)
    used = []
    for _ in range(2):
        event = message_event(RESUME_EN, app_id=PLAIN_APP_ID, chat_id="oc_expiry")
        post_plain(plain, event)
        used.append(authorization(event))
        time.sleep(1.5)
    assert stand_in.tokens.count(PLAIN_APP_ID) == before + 2 and used[0] != used[1]


@pytest.mark.slow
def test_a_slow_platform_does_not_delay_the_acknowledgement(
    bot: Bot, stand_in: FeishuStandIn, reply_mode: Callable[[str], None]
) -> None:
    reply_mode("slow")
    event = message_event(RESUME_EN)
    started = time.monotonic()
    assert bot.ask(event).status_code == 200
    assert time.monotonic() - started < 1.0
    stand_in.wait_for(message_id(event))
    assert time.monotonic() - started >= 3.0


def test_a_failing_platform_is_logged_once_and_the_event_still_acknowledged(
    bot: Bot, stand_in: FeishuStandIn, reply_mode: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    reply_mode("error")
    event = message_event(RESUME_EN)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        assert bot.ask(event).status_code == 200
        deadline = time.monotonic() + 10
        while not [r for r in caplog.records if message_id(event) in r.getMessage()]:
            assert time.monotonic() < deadline, "the failure was not logged"
            time.sleep(0.05)
        time.sleep(0.3)
    logged = [r for r in caplog.records if message_id(event) in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is None
    assert logged[0].getMessage().startswith(f"Feishu: the answer to message {message_id(event)} was not sent")


@pytest.mark.slow
def test_a_timeout_and_a_refused_token_are_each_one_line(
    stand_in: FeishuStandIn, reply_mode: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    """The client on its own, against the stand-in: a reply slower than its timeout, an App Secret refused."""
    card = {"schema": "2.0", "body": {"elements": []}}
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        refused = FeishuClient("cli_refused", APP_SECRET, stand_in.url)
        assert refused.reply("om_refused", card) is False
        reply_mode("slow")
        slow = FeishuClient("cli_kb_timeout", APP_SECRET, stand_in.url, timeout=0.5)
        started = time.monotonic()
        assert slow.reply("om_slow", card) is False
        assert time.monotonic() - started < 2.5
    lines = [r.getMessage() for r in caplog.records if r.name == "kb.server"]
    assert len(lines) == 2
    assert lines[0].startswith("Feishu: the answer to message om_refused was not sent")
    assert "code: 10014, msg: app secret invalid" in lines[0]
    assert lines[1].startswith("Feishu: the answer to message om_slow was not sent") and "Timeout" in lines[1]


# --- off, and settings ---------------------------------------------------------------------


def test_the_bot_is_off_without_its_settings(settings: ServerSettings, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="kb.server"):
        with TestClient(create_app(settings)) as client:
            response = client.post("/feishu/events", content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 404
    assert response.json()["error"] == (
        "the Feishu bot is off: set KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET and KB_FEISHU_VERIFICATION_TOKEN"
    )
    assert "Feishu bot off: KB_FEISHU_APP_ID is not set, so /feishu/events answers 404" in caplog.messages


def test_its_settings_come_together_and_its_address_is_checked() -> None:
    with pytest.raises(SettingsError) as half:
        ServerSettings(feishu_app_id="cli_x", feishu_verification_token="t")
    assert str(half.value) == (
        "setting KB_FEISHU_APP_SECRET='': expected a value, since KB_FEISHU_APP_ID is set "
        "(or leave KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET, KB_FEISHU_VERIFICATION_TOKEN all empty)"
    )
    with pytest.raises(SettingsError, match="KB_FEISHU_BASE_URL='http://open.feishu.cn'"):
        ServerSettings(feishu_base_url="http://open.feishu.cn")
    assert ServerSettings(feishu_base_url="https://open.larksuite.com").feishu_base_url == "https://open.larksuite.com"


DEEP = "[" * 1000 + "]" * 1000
UNREADABLE = [
    ("an unsigned body nested 1,000 deep", lambda: (DEEP.encode(), {"Content-Type": "application/json"}), False),
    ("a message whose content is nested deep", lambda: signed(_deep_content()), True),
    ("a deep object inside the encrypted payload", lambda: _signed_text('{"a":' * 1000 + "1" + "}" * 1000), True),
    ("a challenge holding a quote", lambda: signed(_challenge('a"b')), True),
    ("a challenge holding a backslash", lambda: signed(_challenge("a\\q")), True),
]


def _deep_content() -> dict[str, Any]:
    event = message_event(RESUME_EN)
    event["event"]["message"]["content"] = '{"text":' * 1000 + '"x"' + "}" * 1000
    return event


def _challenge(value: str) -> dict[str, Any]:
    return {"challenge": value, "token": VERIFICATION_TOKEN, "type": "url_verification"}


def _signed_text(plaintext: str) -> tuple[bytes, dict[str, str]]:
    """`signed`, for a plaintext that is not a JSON object this test could build as a dict."""
    body = json.dumps({"encrypt": encrypt(plaintext)}).encode()
    timestamp, nonce = str(int(time.time())), uuid.uuid4().hex
    signature = hashlib.sha256((timestamp + nonce + ENCRYPT_KEY).encode() + body).hexdigest()
    return body, {
        "Content-Type": "application/json",
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature,
    }


@pytest.mark.slow
@pytest.mark.parametrize(("case", "make", "to_bot"), UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_an_unreadable_body_is_refused_with_one_line(
    bot: Bot, plain: Bot, caplog: pytest.LogCaptureFixture, case: str, make: Any, to_bot: bool
) -> None:
    with caplog.at_level(logging.INFO):
        response = (bot if to_bot else plain).post(*make())
    assert response.status_code == 401 and response.json()["error"].startswith("not a valid Feishu request: ")
    assert [r.exc_info for r in caplog.records if r.levelno >= logging.WARNING] == [None]
