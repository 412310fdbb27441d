"""What every chat bot (Slack, Feishu, DingTalk) does, written once and run for each.

Each bot runs in a real uvicorn on a loopback port, with its platform's servers stood in for by
small HTTP servers on other loopback ports (tests/support/slack.py, feishu.py, dingtalk.py), and
the LLM by the stand-in of tests/support/llm.py; tests/support/bots.py says how each platform
signs, sends and is answered. What only one platform does stays in its own file.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.errors import SettingsError
from server.settings import ServerSettings
from tests.support.bots import BOTS, Bots, BotServer, Harness
from tests.support.llm import fake_llm_app
from tests.support.servers import top_hits
from tests.support.timed import declared, timed

RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training in slime?"
# Nothing in any FAQ comes near; and Slack's mentions, which the reply must not echo.
PIZZA = "<!channel> what is the best pizza in Naples? <@U999> & friends"
SOURCE = {"zh": "来源：", "en": "Source: "}
HELP = {"en": "Ask the training FAQ", "zh": "向训练 FAQ 提问"}
STILL_LOOKING = "Still looking it up; the answer will follow here…"
TEXT_ONLY = (
    "I can only read questions sent as text: send the question or the error as text.\n\n"
    "我只能读文字提问：请把问题或报错以文字发给我。"
)


def every_bot(**lacking: str) -> pytest.MarkDecorator:
    """The test run for every bot; a bot named in `lacking` is expected to fail it, for the reason given."""
    marked = {name: pytest.mark.xfail(strict=True, reason=reason) for name, reason in lacking.items()}
    return pytest.mark.parametrize("name", [pytest.param(n, marks=marked.get(n, ())) for n in BOTS])


def every_bot_but(**not_applicable: str) -> pytest.MarkDecorator:
    """The test run for every bot but those whose platform cannot send what it needs (the reason given)."""
    skipped = {name: pytest.mark.skip(reason=reason) for name, reason in not_applicable.items()}
    return pytest.mark.parametrize("name", [pytest.param(n, marks=skipped.get(n, ())) for n in BOTS])


@pytest.fixture(scope="module")
def bots(serve: Callable[[Any], Any], settings: ServerSettings, tmp_path_factory: pytest.TempPathFactory) -> Bots:
    return Bots(serve, settings, tmp_path_factory)


@pytest.fixture
def harness(bots: Bots, name: str) -> Harness:
    return bots.harness(name)


@pytest.fixture
def bot(bots: Bots, name: str) -> BotServer:
    """The bot on, and a rate limit for browsers (which chat platforms are not counted against)."""
    return bots(name, rate_limit="5/minute")


@pytest.fixture(scope="module")
def llm_url(serve: Callable[[Any], Any]) -> str:
    return str(serve(fake_llm_app([])).url) + "/v1"


def with_llm(bots: Bots, name: str, llm_url: str, model: str) -> BotServer:
    """The bot with the stand-in LLM answering as `model` ("slow": 3 s before its first word; "broken": HTTP 500)."""
    return bots(name, llm_base_url=llm_url, llm_model=model, llm_timeout=10)


# --- answers ---------------------------------------------------------------------------------


@every_bot()
@pytest.mark.parametrize(("question", "lang"), [(RESUME_ZH, "zh"), (RESUME_EN, "en")])
def test_a_question_is_answered_in_the_askers_language(
    bot: BotServer, client: TestClient, name: str, question: str, lang: str
) -> None:
    best = top_hits(client, question, bot.url)[0]
    assert best["question"] == {"zh": "如何续训？", "en": "How do I resume training?"}[lang]
    sent = bot.ask(question)
    assert sent.response.status_code == 200
    [answer] = bot.seen(sent)
    assert best["question"] in answer and best["permalink"] in answer and best["url"] in answer
    other = "en" if lang == "zh" else "zh"
    assert SOURCE[lang] in answer and SOURCE[other] not in answer


@every_bot()
def test_an_unanswerable_question_gets_the_nearest_entries(bot: BotServer, client: TestClient, name: str) -> None:
    hits = top_hits(client, PIZZA, bot.url)
    [reply] = bot.seen(bot.ask(PIZZA))
    assert reply.startswith("The FAQ has no confident answer to this.\n")
    nearest = reply.partition("Nearest entries")[2]
    assert hits and all(h["permalink"] in nearest for h in hits[:3])
    assert "<!" not in reply and "<@" not in reply, "the asker's text is never echoed, so it pings no one"


@every_bot()
def test_a_question_the_first_entry_may_answer_gets_its_answer_marked_not_certain_then_the_others(
    bots: Bots, name: str
) -> None:
    bot = bots(name, answer_precision=0.8, channel_precision="")  # the question sits between the floor and the point
    found = httpx.get(f"{bot.url}/api/search", params={"q": RESUME_EN, "k": 4}, timeout=60).json()
    hits = found["hits"][: found["shown"]]
    assert found["state"] == "likely" and len(hits) > 1
    [reply] = bot.seen(bot.ask(RESUME_EN))
    assert reply.lstrip("*_").startswith("The first entry may answer this (confidence 0.")  # italic or not
    assert "but it is not certain:" in reply.split("\n")[0] and "no confident answer" not in reply
    said, others = reply.split("Other entries", 1)
    assert hits[0]["question"] in said and hits[0]["permalink"] in said
    assert "Simply set the" in said and "--load" in said and SOURCE["en"] in said  # the entry's answer, quoted
    assert hits[0]["permalink"] not in others and hits[1]["permalink"] in others
    assert "Related entries" not in reply


@every_bot()
@pytest.mark.parametrize(("text", "langs"), [("", ["en", "zh"]), ("help", ["en"]), ("帮助", ["zh"])])
def test_help_says_how_to_ask_in_the_askers_language_or_both(
    bot: BotServer, name: str, text: str, langs: list[str]
) -> None:
    [reply] = bot.seen(bot.ask(text))
    shown = [lang for lang in ("en", "zh") if HELP[lang] in reply]
    assert shown == langs
    if len(langs) == 2:
        assert reply.index(HELP["en"]) < reply.index(HELP["zh"])


@every_bot_but(slack="a slash command carries text only")
def test_a_message_that_is_not_text_is_told_to_send_text(bot: BotServer, harness: Harness, name: str) -> None:
    sent = bot.send(harness.non_text())
    assert sent.response.status_code == 200
    assert bot.seen(sent) == [TEXT_ONLY]


@pytest.mark.slow
@every_bot()
def test_a_search_that_overruns_is_answered_late_and_once(
    bot: BotServer, harness: Harness, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine under load: the search takes longer than the platform is given to be acknowledged in."""
    [in_time] = bot.seen(bot.ask(RESUME_EN))
    kb = bot.app.state.reloader.served.kb
    search = kb.search

    async def slow_search(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.5)
        return await search(*args, **kwargs)

    if harness.ack_window:
        monkeypatch.setattr(importlib.import_module(harness.ack_window), "ACK_SECONDS", 0.1)
    monkeypatch.setattr(kb, "search", slow_search)
    started = time.monotonic()
    sent = bot.ask(RESUME_EN)
    assert sent.response.status_code == 200 and time.monotonic() - started < 0.5, "acknowledged before the search"
    assert bot.seen(sent) == [STILL_LOOKING, in_time] if harness.late_notice else [in_time]


@pytest.mark.slow
@every_bot()
def test_with_an_llm_the_entries_come_at_once_and_the_written_answer_follows(
    bots: Bots, client: TestClient, llm_url: str, name: str
) -> None:
    bot = with_llm(bots, name, llm_url, "slow")
    first = top_hits(client, RESUME_EN, bot.url)[0]
    started = time.monotonic()
    sent = bot.ask(RESUME_EN)
    assert sent.response.status_code == 200
    assert time.monotonic() - started < 3.0, "the acknowledgement waited for the LLM (3 s before its first word)"
    entries, written = bot.seen(sent)
    assert first["question"] in entries and entries.endswith("A written answer from these entries is on its way…")
    assert written.startswith("Set `--load` to the `--save` directory and training resumes ")
    assert first["permalink"] in written and "Written by a language model from the cited entries" in written


@every_bot()
def test_when_the_llm_fails_the_asker_is_told_the_entries_stand(
    bots: Bots, client: TestClient, llm_url: str, name: str
) -> None:
    bot = with_llm(bots, name, llm_url, "broken")
    entries, failed = bot.seen(bot.ask(RESUME_ZH))
    assert "如何续训？" in entries and entries.endswith("正在根据这些条目撰写回答，稍后发送……")
    assert failed == "语言模型这次没能写出回答；上面的 FAQ 条目就是答案。"


# --- refused and repeated requests -----------------------------------------------------------


@every_bot()
@pytest.mark.parametrize("how", ["forged", "stale"])
def test_a_forged_or_stale_request_is_refused_and_nothing_is_sent(
    bots: Bots, harness: Harness, llm_url: str, name: str, how: str
) -> None:
    bot = with_llm(bots, name, llm_url, "broken")  # where a question taken is followed by a message of its own
    sent = bot.send(harness.forged(RESUME_EN) if how == "forged" else harness.stale(RESUME_EN))
    assert sent.response.status_code == 401
    error = sent.response.json()
    assert error["ok"] is False and error["error"].startswith(f"not a valid {harness.label} request: ")
    bot.idle()
    assert harness.posted(sent.key) == []


@every_bot()
def test_a_replayed_delivery_is_answered_once(bot: BotServer, harness: Harness, name: str) -> None:
    request = harness.message(RESUME_EN)
    first, again = bot.send(request), bot.send(request)
    assert first.response.status_code == again.response.status_code == 200
    [answer] = bot.seen(first, again)
    assert "How do I resume training?" in answer


# --- settings --------------------------------------------------------------------------------


class Lines(logging.Handler):
    """The lines logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def off(settings: ServerSettings) -> Iterator[tuple[TestClient, list[str]]]:
    """The app with no bot on, and what it logged as it started."""
    from server import create_app

    logger, lines = logging.getLogger("kb.server"), Lines()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(lines)
    try:
        with TestClient(create_app(settings)) as client:
            yield client, lines.lines
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)


@every_bot()
def test_the_bot_is_off_without_its_settings_naming_them(
    off: tuple[TestClient, list[str]], harness: Harness, name: str
) -> None:
    client, logged = off
    body, headers, _ = harness.message(RESUME_EN)
    response = client.post(harness.path, content=body, headers=headers)
    assert response.status_code == 404
    assert response.json() == {"ok": False, "status": 404, "error": harness.off_error}
    assert harness.off_log in logged


@every_bot_but(slack="the Slack routes need one setting (KB_SLACK_SIGNING_SECRET): none can be missing beside it")
def test_partial_settings_are_refused_at_start_up_naming_the_missing_ones(harness: Harness, name: str) -> None:
    assert harness.partial is not None
    given, refusal = harness.partial
    with pytest.raises(SettingsError) as refused:
        ServerSettings(**given)  # type: ignore[arg-type]
    assert str(refused.value) == refusal


# --- limits ----------------------------------------------------------------------------------


@pytest.mark.slow
@every_bot()
def test_each_chat_is_limited_and_the_bot_is_exempt_from_the_browser_limit(bot: BotServer, name: str) -> None:
    chat = f"busy-{name}"
    with ThreadPoolExecutor(24) as pool:  # at once: the limit refills one question every 3 s
        sent = list(pool.map(lambda n: bot.ask(f"{RESUME_EN} ({n})", chat), range(24)))
    assert [s.response.status_code for s in sent] == [200] * 24  # KB_RATE_LIMIT is 5/minute on this server
    seen = [bot.seen(s) for s in sent]
    assert all(s[:-1] in ([], [STILL_LOOKING]) for s in seen)  # 24 searches at once on 2 cores may overrun
    replies = [s[-1] for s in seen]
    busy = [
        r for r in replies if r.startswith("This chat is asking too fast (the limit is 20 a minute); ask again in ")
    ]
    answered = [r for r in replies if "How do I resume training?" in r]
    assert len(answered) >= 20 and len(busy) >= 1 and len(answered) + len(busy) == 24
    [quiet] = bot.seen(bot.ask(RESUME_EN, f"quiet-{name}"))
    assert "How do I resume training?" in quiet
    with httpx.Client(base_url=bot.url) as browser:
        statuses = [browser.get("/api/search", params={"q": "OOM"}).status_code for _ in range(6)]
    assert statuses[-1] == 429


# --- insights and votes ----------------------------------------------------------------------


@every_bot()
def test_a_question_is_recorded_as_a_chat_turn_with_its_channel_and_no_ids(bot: BotServer, name: str) -> None:
    question = f"怎么把 Megatron 的 checkpoint 转成 HF 格式 ({name})"
    chat = f"recorded{name}chat"
    assert bot.ask(question, chat).response.status_code == 200
    rows = bot.rows(
        "SELECT text, channel, kind, chat_workspace, chat_conversation FROM questions WHERE text = ?", question
    )
    assert rows == [(question, name, "chat", None, None)]
    raw = b"".join(p.read_bytes() for p in Path(bot.app.state.settings.data_dir).glob("insights.sqlite*"))
    assert chat.encode() not in raw


@every_bot()
def test_a_question_is_timed_as_a_chat_turn_as_its_channel_declares(bot: BotServer, name: str) -> None:
    """What docs/deployment.md's metrics say of a bot: its messages are timed in kb_chat_seconds, never in
    kb_search_seconds, though the search alone answers them."""
    assert bot.ask(f"how do I resume training in slime? ({name} timed)", f"timed{name}chat").response.status_code == 200
    bot.idle()
    assert timed(httpx.get(f"{bot.url}/metrics").text, name) == declared(name) == {"chat"}


@every_bot(dingtalk="the DingTalk robot's Markdown replies carry no vote buttons: its askers cannot vote")
def test_votes_are_kept_one_per_voter_and_limited_per_voter(bot: BotServer, harness: Harness, name: str) -> None:
    entry, voter = "roll-b02092f6", f"voter-{name}"
    said = [harness.vote(bot, entry, False, "zh", voter)]  # the voter changes their mind: one vote, the last
    said += [harness.vote(bot, entry, True, "en", voter) for _ in range(10)]  # ANSWER_VOTE_LIMIT: 10 a day
    assert said[:10] == ["感谢反馈。"] + ["Thanks for the feedback."] * 9
    assert said[10].startswith("Too many votes from you; try again in ")
    assert bot.rows("SELECT entry_id, helpful, channel FROM votes WHERE entry_id = ?", entry) == [(entry, 1, name)]
    assert not [row for row in bot.rows("SELECT voter FROM votes") if voter in row[0]], "a keyed hash, not the voter"


def test_every_team_chat_in_the_registry_has_a_harness_and_so_every_scenario() -> None:
    from tests.support.bots import HARNESSES

    assert BOTS == ["slack", "feishu", "dingtalk"]  # the registry's team chats, in its order
    assert sorted(HARNESSES) == sorted(BOTS)
