"""The Feishu (Lark) bot as only Feishu has it: encrypted events and their refusals, cards, tokens, the platform failing.

What every chat bot does (answers in the asker's language, help, a non-text message, the LLM's
answer, forged and replayed requests, limits, votes, insights, settings) is tested once for all
in test_bots.py. Events are encrypted and signed here as Feishu does it, and a small HTTP server
on a 127.0.0.1 port stands in for its open platform (tests/support/feishu.py); the knowledge base
runs in a real uvicorn on another loopback port.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import time
import uuid
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.errors import SettingsError
from server.channels.feishu.card import card_markdown
from server.channels.feishu.client import FeishuClient
from server.settings import ServerSettings
from tests.support.bots import BotServer
from tests.support.feishu import (
    APP_ID,
    APP_SECRET,
    ENCRYPT_KEY,
    VERIFICATION_TOKEN,
    FeishuStandIn,
    encrypt,
    message_event,
    message_id,
    press_event,
    signed,
)
from tests.support.servers import own_data, top_hits

PLAIN_APP_ID = "cli_kb_plain_short"  # its tokens live a second (`expire` 601: the SDK renews ten minutes early)
RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"
ROLL_RESUME = "how do I resume training in ROLL"  # ROLL's FAQ has no entry on resuming; slime's has


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


class Bot(BotServer):
    """A real server (uvicorn) with the Feishu bot on; `event` sends it an event as Feishu does (encrypted, signed)."""

    def deliver(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return self.post("/feishu/events", body, headers)

    def event(self, event: dict[str, Any]) -> httpx.Response:
        return self.deliver(*signed(event))


@pytest.fixture(scope="module")
def bot(settings: ServerSettings, serve: Callable[[Any], Any], stand_in: FeishuStandIn, tmp_path_factory: Any) -> Bot:
    """Feishu on with an Encrypt Key."""
    configured = own_data(settings, tmp_path_factory, "feishu").with_(
        feishu_app_id=APP_ID,
        feishu_app_secret=APP_SECRET,
        feishu_verification_token=VERIFICATION_TOKEN,
        feishu_encrypt_key=ENCRYPT_KEY,
        feishu_base_url=stand_in.url,
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
    return plain.deliver(json.dumps(payload).encode(), {"Content-Type": "application/json"})


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
        "server.bots.replies",
        "server.bots.markdown",
        "server.bots.delivery_ids",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


# --- the request URL ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_request_url_challenge_is_answered(bot: Bot, plain: Bot) -> None:
    challenge = {"challenge": "ajls384kdjx98XX", "token": VERIFICATION_TOKEN, "type": "url_verification"}
    response = bot.event(challenge)
    assert response.status_code == 200 and response.json() == {"challenge": "ajls384kdjx98XX"}
    assert post_plain(plain, challenge).json() == {"challenge": "ajls384kdjx98XX"}
    refused = post_plain(plain, {**challenge, "token": "another app's token"})
    assert refused.status_code == 401
    assert refused.json()["error"] == (
        "not a valid Feishu request: invalid verification_token "
        "(is KB_FEISHU_VERIFICATION_TOKEN the app's Verification Token?)"
    )


# --- questions ----------------------------------------------------------------------------


def test_a_question_is_acknowledged_at_once_and_answered_with_a_card(
    bot: Bot, stand_in: FeishuStandIn, client: TestClient
) -> None:
    hits = top_hits(client, RESUME_ZH, bot.url)
    event = message_event(RESUME_ZH)
    started = time.monotonic()
    response = bot.event(event)
    assert response.status_code == 200 and response.json() == {"msg": "ok"}
    assert time.monotonic() - started < 1.0, "Feishu waits 3 s for its answer; the bot acknowledges at once"
    [card] = stand_in.wait_for(message_id(event))
    assert card == expected_card(hits, "zh", RESUME_ZH)


@pytest.mark.slow
def test_a_direct_message_needs_no_mention_and_a_group_message_without_one_is_not_answered(
    bot: Bot, stand_in: FeishuStandIn, client: TestClient
) -> None:
    overheard = message_event(RESUME_EN, mention=False)
    direct = message_event(RESUME_EN, chat_type="p2p", chat_id="oc_direct", mention=False)
    assert bot.event(overheard).status_code == 200 and bot.event(direct).status_code == 200
    [card] = stand_in.wait_for(message_id(direct))
    assert card == expected_card(top_hits(client, RESUME_EN, bot.url), "en", RESUME_EN)
    bot.idle()
    assert stand_in.cards(message_id(overheard)) == []


def test_a_rich_text_message_is_read(bot: Bot, stand_in: FeishuStandIn) -> None:
    post = {
        "title": "",
        "content": [[{"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": " slime 如何续训？"}]],
    }
    rich = message_event("", kind="post", content=json.dumps(post))
    assert bot.event(rich).status_code == 200
    [answer] = stand_in.wait_for(message_id(rich))
    assert answer["body"]["elements"][-1]["tag"] == "column_set"
    assert answer["body"]["elements"][-1]["columns"][0]["elements"][0]["text"]["content"] == "👍 有帮助"


def test_a_question_about_a_framework_whose_faq_lacks_it_says_so_first(bot: Bot, stand_in: FeishuStandIn) -> None:
    event = message_event(ROLL_RESUME)
    bot.event(event)
    [card] = stand_in.wait_for(message_id(event))
    # slime's answer is not given for ROLL (its confidence is 0.1), and the card says ROLL's FAQ lacks it.
    assert card["body"]["elements"][0] == {"tag": "markdown", "content": "ROLL's FAQ does not cover this."}


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


# --- refused requests (that nothing is sent for one is tested in test_bots.py) -----------


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
def test_a_forged_stale_or_unsigned_event_is_refused_and_logged(
    bot: Bot, caplog: pytest.LogCaptureFixture, case: str, make: Any, message: str
) -> None:
    event = message_event(RESUME_EN)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = bot.deliver(*make(event))
    assert response.status_code == 401
    error = response.json()
    assert error["ok"] is False and error["error"].startswith("not a valid Feishu request: ")
    assert message in error["error"]
    logged = [r for r in caplog.records if r.getMessage().startswith("Feishu request from 127.0.0.1 refused")]
    assert len(logged) == 1 and message in logged[0].getMessage() and logged[0].exc_info is None
    assert not [r for r in caplog.records if r.name == "Lark"], "the SDK's traceback is not logged"


@pytest.mark.slow
def test_a_retried_event_is_answered_once(bot: Bot, stand_in: FeishuStandIn) -> None:
    event = message_event(RESUME_EN)
    assert bot.event(event).status_code == 200
    assert bot.event(event).json() == {"msg": "ok"}  # signed again, as Feishu's retry is: its event id seen
    bot.idle()
    assert len(stand_in.cards(message_id(event))) == 1


# --- votes -------------------------------------------------------------------------------


def test_a_press_that_is_not_a_vote_is_acknowledged_and_ignored(bot: Bot) -> None:
    before = bot.rows("SELECT count(*) FROM votes")
    response = bot.event(press_event({"kb": "share", "entry": "x"}))
    assert response.status_code == 200 and response.json() == {}
    assert bot.rows("SELECT count(*) FROM votes") == before


# --- insights ------------------------------------------------------------------------------


def test_chat_ids_are_recorded_when_asked_for(plain: Bot, stand_in: FeishuStandIn) -> None:
    """KB_INSIGHTS_CHAT_IDS=true: the tenant and the chat, still not the asker."""
    asked = message_event(RESUME_EN, chat_id="oc_recorded", app_id=PLAIN_APP_ID)
    assert post_plain(plain, asked).status_code == 200
    stand_in.wait_for(message_id(asked))
    rows = plain.rows("SELECT text, channel, kind, chat_workspace, chat_conversation FROM questions")
    assert rows == [(RESUME_EN, "feishu", "chat", "tenant-1", "oc_recorded")]


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
        bot.event(event)
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
    assert bot.event(event).status_code == 200
    assert time.monotonic() - started < 1.0
    stand_in.wait_for(message_id(event))
    assert time.monotonic() - started >= 3.0


def test_a_failing_platform_is_logged_once_and_the_event_still_acknowledged(
    bot: Bot, stand_in: FeishuStandIn, reply_mode: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    reply_mode("error")
    event = message_event(RESUME_EN)
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        assert bot.event(event).status_code == 200
        bot.idle()
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


# --- settings and unreadable bodies ---------------------------------------------------------------------


def test_its_address_is_checked() -> None:
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
        response = (bot if to_bot else plain).deliver(*make())
    assert response.status_code == 401 and response.json()["error"].startswith("not a valid Feishu request: ")
    assert [r.exc_info for r in caplog.records if r.levelno >= logging.WARNING] == [None]


@pytest.mark.parametrize("where", ["main thread after asyncio.run", "worker thread"])
def test_reading_feishus_requests_leaves_no_event_loop_open_when_python_exits(where: str) -> None:
    """lark_oapi's import makes an event loop where the importing thread has none; the bot closes it, so a process
    that turned the bot on (a test run) exits without `ResourceWarning: unclosed event loop` after its last line."""
    import subprocess
    import sys

    from tests.support.paths import ROOT

    make = "FeishuEvents('verification-token')"
    code = (
        "import asyncio, threading\n"
        "from server.channels.feishu.events import FeishuEvents\n"
        "async def nothing(): pass\n"
        + (
            f"asyncio.run(nothing())\n{make}\n"
            if where.startswith("main")
            else f"t = threading.Thread(target=lambda: {make}); t.start(); t.join()\n"
        )
        + "print('done')\n"
    )
    run = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "always::ResourceWarning", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    assert "ResourceWarning" not in run.stderr and "unclosed" not in run.stderr, run.stderr
