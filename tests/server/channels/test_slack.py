"""The Slack `/faq` command as only Slack has it: its signature's every rejection, Block Kit and mrkdwn, sharing.

What every chat bot does (answers in the asker's language, help, overruns, the LLM's answer,
replays, limits, votes, insights, settings) is tested once for all in test_bots.py. Requests
are signed here the way Slack signs them (HMAC-SHA256 over `v0:{timestamp}:{body}`, computed in
the test, not by the code under test); a small HTTP server on a 127.0.0.1 port stands in for
Slack's servers, receiving what the app posts to a `response_url` (tests/support/slack.py).
"""

from __future__ import annotations

import importlib
import logging
import time
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from kb.entries import Entry
from kb.hits import Hit
from kb.settings import Settings
from server import create_app
from server.channels.slack.blocks import answer_message
from server.channels.slack.mrkdwn import escape, to_mrkdwn, trim
from server.channels.slack.signature import BadSlackSignature, sign, verify
from tests.support.slack import SECRET, SlackStandIn, command_body, interaction_body, post_command, slack_headers

RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"


def within_slack_limits(message: dict[str, Any]) -> None:
    """Slack's Block Kit limits, as documented: a `text` fallback, 50 blocks, 3,000-character sections."""
    assert isinstance(message["text"], str) and message["text"].strip()
    assert message["response_type"] in ("ephemeral", "in_channel")
    blocks = message["blocks"]
    assert 1 <= len(blocks) <= 50
    for block in blocks:
        assert block["type"] in ("section", "context", "actions", "divider")
        if block["type"] == "section":
            assert block["text"]["type"] == "mrkdwn" and 0 < len(block["text"]["text"]) <= 3000
        if block["type"] == "context":
            assert 1 <= len(block["elements"]) <= 10
            assert all(0 < len(e["text"]) <= 3000 for e in block["elements"])
        if block["type"] == "actions":
            assert len(block["block_id"]) <= 255 and len(block["elements"]) <= 25
            for button in block["elements"]:
                assert button["type"] == "button" and len(button["action_id"]) <= 255
                assert len(button["text"]["text"]) <= 75 and len(button["value"]) <= 2000


@pytest.fixture(scope="module")
def stand_in(serve: Callable[[Any], Any]) -> SlackStandIn:
    return SlackStandIn(serve)


@pytest.fixture(scope="module")
def slack(settings: Settings, stand_in: SlackStandIn) -> Iterator[TestClient]:
    """Slack on, its answers posted to the stand-in (KB_SLACK_RESPONSE_BASE, as hooks.slack.com is by default)."""
    configured = settings.with_(slack_signing_secret=SECRET, slack_response_base=stand_in.url)
    with TestClient(create_app(configured)) as client:
        yield client


def top_hits(client: TestClient, query: str) -> list[dict[str, Any]]:
    """The hits the search page shows for `query` (at most four), as Slack's reply gives them."""
    found = client.get("/api/search", params={"q": query, "k": 4}).json()
    return found["hits"][: found["shown"]]


@pytest.mark.parametrize(
    "module",
    [
        "server.channels.slack",
        "server.channels.slack.blocks",
        "server.channels.slack.mrkdwn",
        "server.channels.slack.signature",
        "server.channels.slack.routes",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


# --- signatures ------------------------------------------------------------------------


def test_signature_matches_slacks_documented_example() -> None:
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
        b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
        b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
        b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert sign(SECRET, "1531420618", body) == expected
    verify(SECRET, "1531420618", expected, body, now=1531420618 + 299)
    with pytest.raises(BadSlackSignature, match="301 s old; Slack requests older than 300 s are refused"):
        verify(SECRET, "1531420618", expected, body, now=1531420618 + 301)


def test_a_stale_or_future_timestamp_says_which_it_is() -> None:
    body = b"text=resume"
    signed = sign(SECRET, "1531420618", body)
    with pytest.raises(BadSlackSignature) as old:
        verify(SECRET, "1531420618", signed, body, now=1531420618 + 700)
    assert str(old.value) == (
        "X-Slack-Request-Timestamp is 700 s old; Slack requests older than 300 s are refused (a replay, or this server's clock is wrong)"
    )
    with pytest.raises(BadSlackSignature) as ahead:
        verify(SECRET, "1531420618", signed, body, now=1531420618 - 400)
    assert str(ahead.value) == (
        "X-Slack-Request-Timestamp is 400 s in the future; more than 300 s ahead is refused (is this server's clock behind?)"
    )


def _tampered(body: bytes) -> dict[str, str]:
    headers = slack_headers(body)
    headers["X-Slack-Signature"] = headers["X-Slack-Signature"][:-1] + (
        "0" if headers["X-Slack-Signature"][-1] != "0" else "1"
    )
    return headers


REJECTIONS: list[tuple[str, Callable[[bytes], dict[str, str]], str]] = [
    (
        "no headers",
        lambda b: {"Content-Type": "application/x-www-form-urlencoded"},
        "X-Slack-Request-Timestamp header is missing",
    ),
    (
        "no signature",
        lambda b: {k: v for k, v in slack_headers(b).items() if k != "X-Slack-Signature"},
        "X-Slack-Signature header is missing",
    ),
    (
        "no timestamp",
        lambda b: {k: v for k, v in slack_headers(b).items() if k != "X-Slack-Request-Timestamp"},
        "X-Slack-Request-Timestamp header is missing",
    ),
    ("one hex digit changed", _tampered, "X-Slack-Signature does not match the body"),
    (
        "another secret",
        lambda b: slack_headers(b, secret="not-the-secret"),
        "X-Slack-Signature does not match the body",
    ),
    (
        "stale",
        lambda b: slack_headers(b, timestamp=int(time.time()) - 301),
        "s old; Slack requests older than 300 s are refused",
    ),
    (
        "from the future",
        lambda b: slack_headers(b, timestamp=int(time.time()) + 400),
        "s in the future; more than 300 s ahead is refused",
    ),
    (
        "timestamp not a number",
        lambda b: {**slack_headers(b), "X-Slack-Request-Timestamp": "yesterday"},
        "'yesterday' is not a whole number",
    ),
    ("body changed after signing", slack_headers, "does not match the body"),
]


@pytest.mark.parametrize("path", ["/slack/command", "/slack/interactive"])
@pytest.mark.parametrize(("case", "headers", "message"), REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_unsigned_bad_or_stale_requests_get_401_and_are_logged(
    slack: TestClient,
    caplog: pytest.LogCaptureFixture,
    path: str,
    case: str,
    headers: Callable[[bytes], dict[str, str]],
    message: str,
) -> None:
    body = command_body(RESUME_EN)
    sent = body.replace(b"resume", b"delete") if case == "body changed after signing" else body
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        response = slack.post(path, content=sent, headers=headers(body))
    assert response.status_code == 401
    error = response.json()
    assert error["ok"] is False and error["status"] == 401
    assert error["error"].startswith("not a valid Slack request: ") and message in error["error"]
    assert any("Slack request to " + path in r.getMessage() and message in r.getMessage() for r in caplog.records)


# --- the command -----------------------------------------------------------------------


def expected_answer(hits: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """The reply Slack should get for these hits (written out by hand from the API's fields)."""
    best = hits[0]
    words = {
        "zh": ("来源：", "相关条目", "分享到频道", "👍 有帮助", "👎 没帮助"),
        "en": ("Source: ", "Related entries", "Share in channel", "👍 Helpful", "👎 Not helpful"),
    }[lang]
    source = f"<{best['url']}|{escape(best['source']['title'])} · {best['source']['version']}>"
    related = "\n".join(f"• <{h['permalink']}|{escape(h['question'])}> · {h['source']['framework']}" for h in hits[1:3])
    buttons = [
        {
            "type": "button",
            "action_id": "kb_share",
            "value": best["id"],
            "style": "primary",
            "text": {"type": "plain_text", "text": words[2], "emoji": True},
        },
        {
            "type": "button",
            "action_id": "kb_helpful",
            "value": best["id"],
            "text": {"type": "plain_text", "text": words[3], "emoji": True},
        },
        {
            "type": "button",
            "action_id": "kb_unhelpful",
            "value": best["id"],
            "text": {"type": "plain_text", "text": words[4], "emoji": True},
        },
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*<{best['permalink']}|{best['question']}>*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": to_mrkdwn(best["answer"])}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"{words[0]}{source}"}]},
    ]
    if related:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"*{words[1]}*\n{related}"}})
    blocks.append({"type": "actions", "block_id": f"kb_actions:{lang}", "elements": buttons})
    return {
        "response_type": "ephemeral",
        "text": f"{best['question']}\n{' '.join(best['answer'].split())}",
        "blocks": blocks,
    }


def test_command_answers_in_the_response_body_in_block_kit(slack: TestClient) -> None:
    hits = top_hits(slack, RESUME_ZH)
    response = post_command(slack, RESUME_ZH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    message = response.json()
    within_slack_limits(message)
    assert message == expected_answer(hits, "zh")


def test_exact_reply_for_the_resume_question(slack: TestClient) -> None:
    message = post_command(slack, RESUME_ZH).json()
    assert message["blocks"][1] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "直接将 `--load` 设置为 `--save` 的目录即可。"},
    }
    assert message["blocks"][2]["elements"][0]["text"].startswith("来源：<https://github.com/THUDM/slime/blob/")
    assert message["blocks"][2]["elements"][0]["text"].endswith(
        "|slime 问答 · 2025-06-30>"
    )  # the source's Chinese title


def test_a_translated_answer_says_who_translated_it_and_links_the_original(slack: TestClient) -> None:
    question = "deepspeed: Unable to pre-compile async_io"
    best = top_hits(slack, question)[0]
    assert best["translated_by"] == "maintainers"
    message = post_command(slack, question).json()
    within_slack_limits(message)
    source = message["blocks"][2]["elements"][0]["text"]
    assert source.endswith(
        "\nTranslated from the Chinese original by this knowledge base's maintainers. "
        f"<{best['original_url']}|original>"
    ), source
    # The authors' own English text says nothing of who wrote it.
    assert "Translated" not in post_command(slack, RESUME_EN).json()["blocks"][2]["elements"][0]["text"]


def test_an_overlong_paste_is_refused_in_slack_with_the_limit(slack: TestClient, settings: Settings) -> None:
    text = "RuntimeError: CUDA error\n" * 200
    message = post_command(slack, text).json()
    within_slack_limits(message)
    limit = settings.max_query_chars
    assert message["text"] == f"the query is {len(text.strip())} characters; the limit is {limit}"


def test_ssl_check_is_acknowledged(slack: TestClient) -> None:
    body = urlencode({"ssl_check": "1", "token": "x"}).encode()
    response = slack.post("/slack/command", content=body, headers=slack_headers(body))
    assert response.status_code == 200 and response.content == b""


# --- Block Kit and mrkdwn --------------------------------------------------------------


def _entry(answer: str) -> Entry:
    return Entry(
        id="demo-1",
        question="How long can an answer be?",
        answer=answer,
        source="demo",
        source_title="Demo FAQ",
        source_version="v1",
        source_url="https://example.org/faq",
        framework="Demo",
        section="",
        url="https://example.org/faq#long",
        lang="en",
    )


@pytest.mark.parametrize(
    "answer",
    [
        "word " * 2000,
        "line of text\n" * 600,
        "Intro.\n\n```bash\n" + "echo step && ls <dir>\n" * 400 + "```\n",
        "See [the guide](https://example.org/guide?a=1&b=2) " * 200,
    ],
)
def test_a_long_answer_is_trimmed_to_3000_characters_with_a_read_more_link(answer: str) -> None:
    hits = [Hit(_entry(answer), 0.9, 1)]
    message = answer_message(hits, True, "en", "https://faq.example.com/")
    within_slack_limits(message)
    text = message["blocks"][1]["text"]["text"]
    assert len(text) <= 3000
    assert text.endswith("…\n<https://faq.example.com/entries/demo-1|Read the full answer>")
    body = text[: -len("…\n<https://faq.example.com/entries/demo-1|Read the full answer>")]
    assert body.count("```") % 2 == 0, "an open code block is closed"
    assert body.count("<") == body.count(">"), "no link is cut in half"
    shown = message["text"].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")  # as Slack shows it
    assert len(shown) <= 600


def test_trim_leaves_short_text_alone_and_never_splits_an_entity() -> None:
    assert trim("short", 3000, "<x|more>") == "short"
    assert trim("x" * 28 + "&amp;" + "y" * 50, 40) == "x" * 28 + "…"


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("Use `--load <dir>` & retry", "Use `--load &lt;dir&gt;` &amp; retry"),
        ("**bold** and *italic* and ~~gone~~", "*bold* and _italic_ and ~gone~"),
        ("See [the docs](https://x.org/a?b=1&c=2).", "See <https://x.org/a?b=1&c=2|the docs>."),
        ("[\\[1\\]](https://faq.example.com/entries/a)", "<https://faq.example.com/entries/a|[1]>"),
        ("[a <b> & c](https://x.org/p|q)", "<https://x.org/p%7Cq|a &lt;b&gt; &amp; c>"),
        ("[click](javascript:alert(1))", "click"),
        ("## Heading **here**", "*Heading here*"),
        ("- one\n  - two", "• one\n  • two"),
        ("> quoted <tag>", "> quoted &lt;tag&gt;"),
        (
            "```python\nif a < b and c > d:\n    [x](https://no)\n```",
            "```\nif a &lt; b and c &gt; d:\n    [x](https://no)\n```",
        ),
        ("<!channel> <@U123> <https://evil|ok>", "&lt;!channel&gt; &lt;@U123&gt; &lt;https://evil|ok&gt;"),
        ("max_tokens_per_gpu 与 --max-tokens-per-gpu", "max_tokens_per_gpu 与 --max-tokens-per-gpu"),
    ],
)
def test_markdown_becomes_slack_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        pytest.param(
            "Pass `**kwargs`, not **bold**:\n\n```python\nf(**kwargs)  # *all* & <more>\n```",
            "Pass `**kwargs`, not *bold*:\n\n```\nf(**kwargs)  # *all* &amp; &lt;more&gt;\n```",
            id="emphasis-marks-inside-code",
        ),
        pytest.param(
            "Never <script>alert(1)</script> & <b>bold</b>",
            "Never &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;",
            id="html-in-text",
        ),
        pytest.param(
            "See [train | eval](https://x.org/run) now",
            "See <https://x.org/run|train | eval> now",
            id="pipe-in-link-text",
        ),
        pytest.param("[**bold** `code`](https://x.org)", "<https://x.org|bold code>", id="formatting-in-link-text"),
        pytest.param(
            "1. first\n   - sub a\n     - deeper\n   - sub b\n2. second",
            "1. first\n   • sub a\n     • deeper\n   • sub b\n2. second",
            id="nested-lists",
        ),
        pytest.param("3. three\n4. four", "3. three\n4. four", id="numbered-from-three"),
        pytest.param(
            "Set --max-tokens-per-gpu to 4096; `--max-tokens-per-gpu` fixes KeyError: 1",
            "Set --max-tokens-per-gpu to 4096; `--max-tokens-per-gpu` fixes KeyError: 1",
            id="identifiers-kept-whole",
        ),
        pytest.param(
            "## 如何续训\n\n**注意**：把 `--load` 设为 `--save` 的目录即可*续训*。\n\n> 参见[文档](https://x.org/zh)",
            "*如何续训*\n\n*注意*：把 `--load` 设为 `--save` 的目录即可_续训_。\n\n> 参见<https://x.org/zh|文档>",
            id="chinese",
        ),
        pytest.param(
            "***both*** and ![logo](https://x.org/l.png)",
            "_*both*_ and <https://x.org/l.png|logo>",
            id="bold-italic-and-image",
        ),
        pytest.param(
            "| flag | meaning |\n|---|---|\n| `--load` | resume <dir> |",
            "*flag* | *meaning*\n`--load` | resume &lt;dir&gt;",
            id="table",
        ),
        pytest.param("AT&amp;T &lt;tag&gt; \\[1\\]", "AT&amp;T &lt;tag&gt; [1]", id="entities-and-escapes"),
    ],
)
def test_hard_cases_become_slack_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


def test_every_entry_fits_slacks_limits(slack: TestClient) -> None:
    kb = slack.app.state.reloader.served.kb  # type: ignore[attr-defined]
    for entry in kb.entries:
        related = kb.related(entry.id, 2)
        message = answer_message([Hit(entry, 1.0, 1), *related], True, entry.lang, "https://faq.example.com/")
        within_slack_limits(message)


# --- buttons: share in channel, helpful / not helpful ----------------------------------


def test_share_reposts_the_answer_in_the_channel(slack: TestClient, stand_in: SlackStandIn) -> None:
    best = top_hits(slack, RESUME_ZH)[0]
    body = interaction_body("kb_share", best["id"], stand_in.response_url("share"), "kb_actions:zh")
    response = slack.post("/slack/interactive", content=body, headers=slack_headers(body))
    assert response.status_code == 200
    posted = stand_in.wait_for("share")
    within_slack_limits(posted)
    assert posted["response_type"] == "in_channel" and posted["replace_original"] is False
    assert posted["blocks"][0] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": f"*<{best['permalink']}|{best['question']}>*"},
    }
    assert posted["blocks"][-1] == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "<@U0001> 通过 /faq 分享"}],
    }
    assert not any(block["type"] == "actions" for block in posted["blocks"])


@pytest.mark.parametrize(("action", "name"), [("kb_helpful", "up"), ("kb_unhelpful", "down")])
def test_votes_are_logged_and_thanked_in_block_kit(
    slack: TestClient, stand_in: SlackStandIn, caplog: pytest.LogCaptureFixture, action: str, name: str
) -> None:
    body = interaction_body(action, "slime-b0ab398d", stand_in.response_url(name))
    with caplog.at_level(logging.INFO, logger="kb.server"):
        assert slack.post("/slack/interactive", content=body, headers=slack_headers(body)).status_code == 200
    vote = "helpful" if action == "kb_helpful" else "not helpful"
    assert f"Slack feedback: {vote} on entry slime-b0ab398d" in caplog.messages
    assert stand_in.wait_for(name) == {
        "response_type": "ephemeral",
        "replace_original": False,
        "text": "Thanks for the feedback.",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Thanks for the feedback."}}],
    }


def test_sharing_an_entry_that_is_gone_says_so(slack: TestClient, stand_in: SlackStandIn) -> None:
    body = interaction_body("kb_share", "nope-00000000", stand_in.response_url("gone"))
    assert slack.post("/slack/interactive", content=body, headers=slack_headers(body)).status_code == 200
    assert stand_in.wait_for("gone")["text"] == "That entry is no longer in the FAQ."


@pytest.mark.parametrize("payload", ["{not json", '{"type": ' + "1" * 5000 + "}"])  # past 4,300 digits
def test_a_payload_that_is_not_json_is_a_400(slack: TestClient, payload: str) -> None:
    body = urlencode({"payload": payload}).encode()
    response = slack.post("/slack/interactive", content=body, headers=slack_headers(body))
    assert response.status_code == 400
    assert response.json()["error"] == "payload: not JSON (Slack sends interactions as a form field `payload`)"


# --- with an LLM: the top entries at once, the written answer to response_url ---------
