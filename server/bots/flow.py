"""The chat bots' one flow (Slack, Feishu, DingTalk): what happens to a platform's message, from arrival to its last reply.

A bot's route verifies and reads its platform's request (a refusal is answered and logged by
server/error_handler.py) into a `BotMessage`, and hands it to its `BotFlow` with `send`: how a later
message reaches the chat (Slack's `response_url`, DingTalk's `sessionWebhook`, Feishu's API). The
flow is the same for every bot:

1. a message delivered before (the platform's retry, or a replay) is not answered again (`Guard.delivered`);
2. a message with no text (a picture, a file) is told that only text is answered; an empty one or a
   help word gets how to use the bot (`asks_for_help`);
3. a chat over its limit (`Guard.chats`, `CHAT_LIMIT`) is told when to ask again;
4. the question is searched (`BotQuestion`: recorded with its channel and conversation, published as a chat
   turn) and answered with the entries when the search is done within `within` seconds; else "still
   looking" at once, and the entries follow through `send`;
5. with an LLM configured and a way to send, the generated answer (the LLM's) follows, or a line saying it could not be generated.

What differs is each platform's: its markup (a `Renderer`: the entries, the generated answer, help, a
notice) and its timing. Slack and DingTalk answer in the HTTP response within their `ACK_SECONDS`
(`BotFlow.respond`); Feishu acknowledges at once and sends every reply through its API (`BotFlow.answer_later`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from fastapi import BackgroundTasks, Response
from starlette.concurrency import run_in_threadpool

from kb.answer import Reply
from kb.chat import Chat, Turn
from kb.errors import QueryError
from kb.events import Events
from kb.hits import Hit
from kb.text import detect_lang

from ..rendering.strings import Translator
from .delivery_ids import Guard
from .replies import BotQuestion, asks_for_help, generated, help_lang

__all__ = ["BotMessage", "Renderer", "BotFlow", "Send"]

log = logging.getLogger("kb.server")

_REPEATED = object()  # a message delivered before: nothing to answer

Send = Callable[[Any], object]  # posts one of the platform's messages to the chat; blocks (called from a worker thread)


@dataclass(frozen=True)
class BotMessage:
    """A message to a bot, as every platform's is read: what it says, where it was said, which one it is."""

    text: str  # the question, stripped ("" for a message that has none)
    chat: tuple[str, str]  # (workspace, conversation): recorded with the question; its limit counts per conversation
    message_id: str = ""  # the platform's id for it: delivered again, it is not answered again ("": no id)
    kind: str = "text"  # "text", else what it is ("image", "file"): only text is answered

    @property
    def lang(self) -> str:
        return detect_lang(self.text)


@dataclass(frozen=True)
class Renderer:
    """A platform's markup for each reply the flow gives (a Block Kit message, a Feishu card, DingTalk Markdown): its
    four writers. `question` is the message's text and `root` this server's address, for the writer that uses them."""

    # (reply, question, root): the entries: the best one's answer, its source and related entries, or a notice and
    # the nearest
    answer: Callable[[Reply, str, str], Any]
    # (markdown, hits, lang, question, root): the answer an LLM wrote from the entries, with the entries it cites
    generated: Callable[[str, Sequence[Hit], str, str, str], Any]
    help: Callable[[str | None], Any]  # how to use the bot (in both languages for None)
    notice: Callable[[str], Any]  # a short line, shown as written: busy, still looking, a question's error, a failure


@dataclass
class BotFlow:
    """One bot's flow: its channel's name and label, what it keeps between requests, its markup."""

    channel: str  # as questions are recorded: "slack"
    label: str  # as the log names it: "Slack"
    guard: Guard
    render: Renderer

    def first_reply(self, message: BotMessage) -> Any | None:
        """What a message is answered with before any search (steps 1-3), or None when it is a question to search;
        `_REPEATED` for one delivered before."""
        if message.message_id and not self.guard.delivered.first(message.message_id):
            log.info("%s message %s was delivered before; not answered again", self.label, message.message_id[:64])
            return _REPEATED
        if message.kind != "text":  # no text to tell the language by
            return self.render.notice("\n\n".join(Translator(lang)("bot_text_only") for lang in ("en", "zh")))
        if asks_for_help(message.text):
            return self.render.help(help_lang(message.text))
        waiting = self.guard.chats.wait(" ".join(message.chat))
        if waiting:
            t = Translator(message.lang)
            return self.render.notice(t("bot_busy", limit=self.guard.chats.limit, retry=waiting))
        return None

    def ask(self, chat: Chat, events: Events, message: BotMessage) -> BotQuestion:
        """The message's search, started."""
        return BotQuestion(chat, events, message.text, self.channel, message.chat)

    async def respond(
        self,
        chat: Chat,
        events: Events,
        message: BotMessage,
        root: str,
        within: float | None,
        send: Send | None,
        background: BackgroundTasks,
    ) -> Any:
        """The reply to give in the response (Slack, DingTalk): the entries if the search is done `within` seconds
        (None: however long it takes), else "still looking"; what follows goes through `send` as background tasks.
        With no way to send (None), nothing follows: the search is waited for. A message delivered before: an empty 200."""
        first = self.first_reply(message)
        if first is _REPEATED:
            return Response(status_code=200)
        if first is not None:
            return first
        asked = self.ask(chat, events, message)
        turn = await asked.in_time(
            within if send else None, functools.partial(self._late, asked, root, send), background, self.label
        )
        if isinstance(turn, str):
            return self.render.notice(turn)
        return self._entries(asked, turn, root, send, background)

    async def answer_later(self, chat: Chat, events: Events, message: BotMessage, root: str, send: Send) -> None:
        """Every reply sent through `send` (Feishu, which is acknowledged at once): run it as a background task."""
        first = self.first_reply(message)
        if first is not None:
            if first is not _REPEATED:
                await run_in_threadpool(send, first)
            return
        await self._late(self.ask(chat, events, message), root, send)

    async def _late(self, asked: BotQuestion, root: str, send: Send | None) -> None:
        """The entries sent once the search is done, then the generated answer, if any."""
        assert send is not None  # only a bot that can send answers late
        later = BackgroundTasks()
        try:
            turn = await asked.turn()
            assert turn is not None  # waited for as long as it took
            reply = self._entries(asked, turn, root, send, later)
        except QueryError as exc:
            reply = self.render.notice(exc.message)
        await run_in_threadpool(send, reply)
        await later()

    def _entries(
        self, asked: BotQuestion, turn: Turn, root: str, send: Send | None, background: BackgroundTasks
    ) -> Any:
        """The entries found; with an LLM and a way to send, its generated answer is scheduled to follow them."""
        pending = send is not None and asked.chat.writes(turn)
        if send is not None and pending:
            background.add_task(self._write, asked, turn, root, send)
        return self.render.answer(asked.reply(turn, pending), asked.text, root)

    def _write(self, asked: BotQuestion, turn: Turn, root: str, send: Send) -> None:
        """Background task: the LLM's answer from the entries already sent, or a line saying it could not write one."""
        reply = generated(asked.chat, turn, root, self.label)
        if reply is None:
            send(self.render.notice(Translator(turn.lang)("bot_llm_failed")))
            return
        send(self.render.generated(reply.answer, reply.sources, turn.lang, asked.text, root))
