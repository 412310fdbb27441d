"""Replies in team chat (Slack, Feishu, DingTalk): what a bot answers a question with, before any platform's markup.

A question asked in a chat is searched through the library's front door (`kb.asking`), so it
is recorded with its channel (and, where a setting asks, its conversation), and answered in
the language it was asked in: one language per reply (`BotQuestion`). `kb.answer.reply_to` decides what
the reply holds: the best entry's answer, its source and related entries; or, when the FAQ has
no confident answer, a line saying so (or that the FAQ of the framework the question names
does not cover it) and the nearest entries. Each platform writes a `Reply` in its own markup
(server/channels/slack/blocks.py, server/channels/feishu/card.py, server/channels/dingtalk/markdown.py). With an LLM
configured, the entries come at once and the generated answer (the LLM's) follows (`generated`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Awaitable, Callable

from fastapi import BackgroundTasks

from kb import asking
from kb.answer import NEAREST, RELATED, Reply, reply_to
from kb.chat import SOURCES_PER_ANSWER, Chat, ChatReply, Turn
from kb.errors import QueryError
from kb.events import Events
from kb.text import detect_lang

from ..permalinks import permalinks
from ..rendering.strings import LANGS, Translator

__all__ = [
    "BotQuestion",
    "generated",
    "asks_for_help",
    "help_lang",
    "help_texts",
    "shorten",
    "HELP_WORDS",
    "RELATED_SHOWN",
    "NEAREST_SHOWN",
]

log = logging.getLogger("kb.server")

HELP_WORDS = {"help", "-h", "--help", "?", "帮助", "用法"}
RELATED_SHOWN = RELATED  # related entries beside an answer: as many as the pages and the API give
NEAREST_SHOWN = NEAREST  # entries offered when the FAQ has no confident answer


def asks_for_help(text: str) -> bool:
    """Whether a message asks how to use the bot (nothing but a mention, or a help word) rather than a question."""
    words = text.strip()
    return not words or words.lower() in HELP_WORDS


def help_lang(text: str) -> str | None:
    """The language to show help in for a message that asks for it; None (both languages) when it says nothing."""
    words = text.strip()
    return ("zh" if words in ("帮助", "用法") else "en") if words else None


def help_texts(lang: str | None, key: str = "bot_help") -> list[str]:
    """How to use the bot (the string `key`) in `lang`; in both languages, English first, when it is not known."""
    return [Translator(code)(key) for code in ([lang] if lang in LANGS else ["en", "zh"])]


class BotQuestion:
    """A question asked in a team chat, searched as soon as it is made, in the language it was asked in.

    The search is published as a chat turn when it is done, whether or not the reply waited for it
    (a search that failed is not), recorded with `channel` and the chat's (workspace, conversation).
    """

    def __init__(
        self, chat: Chat, events: Events, text: str, channel: str, conversation: tuple[str, str] | None = None
    ):
        self.chat = chat
        self.text = text
        self.lang = detect_lang(text)
        self.search = asyncio.ensure_future(
            asking.search(
                chat.kb, events, text, channel=channel, k=SOURCES_PER_ANSWER, conversation=conversation, turn=True
            )
        )

    async def turn(self, within: float | None = None) -> Turn | None:
        """The extractive answer, waiting at most `within` seconds (None: as long as it takes); None once
        that has passed (the search goes on). A QueryError (an empty or overlong question) is raised."""
        try:
            found = await asyncio.wait_for(asyncio.shield(self.search), within)
        except TimeoutError:
            return None
        return self.chat.turn(found.result, self.text, self.lang)

    def reply(self, turn: Turn, pending: bool = False, related: int = RELATED_SHOWN) -> Reply:
        answer = turn.extractive
        return reply_to(
            answer.sources, answer.answered, turn.lang, answer.note, pending, related, answer.state, answer.confidence
        )

    async def in_time(
        self, within: float | None, late: Callable[[], Awaitable[None]], background: BackgroundTasks, channel: str
    ) -> Turn | str:
        """The extractive answer when the search is done within `within` seconds (None: however long it
        takes). Else a notice to answer with at once, in the asker's language: the question's error, or
        that the answer is still being looked for, and then `late` (which posts it) is scheduled."""
        try:
            turn = await self.turn(within)
        except QueryError as exc:
            return exc.message
        if turn is None:
            log.warning("%s: the search took over %s s; the answer follows in a message of its own", channel, within)
            background.add_task(late)
            return Translator(self.lang)("bot_still_looking")
        return turn


def generated(chat: Chat, turn: Turn, root: str, channel: str) -> ChatReply | None:
    """The LLM's answer from the entries already shown, citations linked to this server's pages; None
    (and a line in the log) when it could not write one, so the entries stand. Blocks: call it from a worker thread."""
    reply = chat.write(turn, (), permalinks(root))
    if reply.mode != "llm":
        log.warning("%s: no generated answer, the entries stand: %s", channel, reply.error)
        return None
    return reply


def shorten(markdown: str, limit: int) -> tuple[str, bool]:
    """`markdown` cut to at most `limit` characters at a line break (an open code block closed), and
    whether it was cut; a platform adds its own link to the whole answer."""
    if len(markdown) <= limit:
        return markdown, False
    cut = markdown[: limit - 8]  # room to close a code block
    for separator in ("\n\n", "\n", " "):
        at = cut.rfind(separator)
        if at > len(cut) * 0.6:
            cut = cut[:at]
            break
    cut = cut.rstrip()
    if len(re.findall(r"^[ \t]*```", cut, re.MULTILINE)) % 2:
        cut += "\n```"
    return cut + "\n…", True
