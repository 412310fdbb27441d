"""The chat: one turn from question to answer: follow-ups, retrieval, the extractive or the LLM's answer, fallback.

The chat page, `/api/chat` and Slack's `/faq` all answer through `Chat`. A conversation may
be about one entry (the follow-up link on an entry's page, `about`): each question is then
read with that entry's question (`kb.answer.followup_query`).

The extractive answer is always composed; the LLM (when configured) writes a grounded
answer only when retrieval is confident (`Chat.writes`), and if it fails the extractive
answer is returned with `mode="fallback"` so the caller can say so. The steps can be taken
one at a time (a search for SOURCES_PER_ANSWER entries through `kb.asking.search`, `turn`,
`write`): Slack shows the extractive answer at once and posts the generated one later.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .answer import Answer, compose_answer, followup_query
from .cancel import Cancel
from .entries import Entry
from .errors import LLMFailed, QueryError
from .hits import Hit, SearchResult
from .knowledge import ON_LOOP_CHARS, KnowledgeBase
from .llm import LLM, link_citations
from .search import searched_text
from .see_also import Resolved
from .text import checked_query, detect_lang
from .verdict import AnswerState

__all__ = [
    "ChatReply",
    "Chat",
    "Turn",
    "SOURCES_PER_ANSWER",
    "subject_entry",
    "recent_turns",
    "HISTORY_TURNS",
    "HISTORY_CHARS",
]

SOURCES_PER_ANSWER = 4  # the best entry and up to three related ones
# The earlier turns a conversation is read with, on every channel: the newest, at most this many and this long.
HISTORY_TURNS = 50
HISTORY_CHARS = 40_000


def recent_turns(history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest turns of `history` (oldest first, as given) that fit HISTORY_TURNS and HISTORY_CHARS; older ones
    are not read. A follow-up leans on the last turns, so nothing it needs is lost."""
    kept: list[dict[str, Any]] = []
    total = 0
    for turn in reversed(history):
        total += len(str(turn.get("content", "")))
        if len(kept) == HISTORY_TURNS or total > HISTORY_CHARS:
            break
        kept.append(turn)
    return kept[::-1]


@dataclass(frozen=True)
class ChatReply:
    answer: str  # Markdown
    answered: bool
    mode: str  # "extractive", "llm" or "fallback"
    sources: tuple[Hit, ...]
    error: str = ""  # why the LLM was not used, for the log
    lang: str = "en"  # the reader's language: the answer's, and the sources' where they have it
    note: str = ""  # the framework the question names has no answer in its FAQ (`kb.answer.elsewhere_note`)
    confidence: float = 0.0  # the chance that the first source answers (`kb.hits.SearchResult.confidence`)
    state: AnswerState = AnswerState.NOT_COVERED  # LIKELY: the first source may answer
    # Resolved tracker threads that may help when the FAQ does not cover the question (kb.see_also): not the answer.
    see_also: tuple[Resolved, ...] = ()


@dataclass(frozen=True)
class Turn:
    """A question retrieved for: the message as asked, the reader's language, the extractive answer."""

    message: str
    lang: str
    extractive: Answer
    see_also: tuple[Resolved, ...] = ()  # threads that may help a question the FAQ does not cover

    def reply(self, mode: str = "extractive", error: str = "") -> ChatReply:
        """The extractive answer as the reply (`mode="fallback"` after the LLM failed)."""
        answer = self.extractive
        return ChatReply(
            answer.text,
            answer.answered,
            mode,
            answer.sources,
            error,
            self.lang,
            answer.note,
            answer.confidence,
            answer.state,
            self.see_also,
        )

    def generated(self, text: str, href: Callable[[Hit], str]) -> ChatReply:
        """The LLM's answer as the reply, its citations linked to the sources."""
        answer = self.extractive
        return ChatReply(
            link_citations(text, answer.sources, href),
            True,
            "llm",
            answer.sources,
            lang=self.lang,
            note=answer.note,
            confidence=answer.confidence,
            state=AnswerState.ANSWERED,
        )


def subject_entry(kb: KnowledgeBase, about: str | None) -> Entry | None:
    """The entry with id `about` that a conversation is about (None for none); a QueryError naming `about` for an unknown id."""
    if not about:
        return None
    if about not in kb.by_id:
        raise QueryError("about", f"no entry with id {about!r}")
    return kb.by_id[about]


@dataclass
class Chat:
    kb: KnowledgeBase
    llm: LLM | None = None

    def subject(self, about: str | None, message: str) -> str:
        """The question of the entry a conversation is about, in the message's language ("" for none)."""
        entry = subject_entry(self.kb, about)
        return entry.localized(detect_lang(message)).question if entry else ""

    def turn(self, result: SearchResult, message: str, lang: str | None = None) -> Turn:
        """The extractive answer to a search made for `message`, in `lang` (else the message's language)."""
        lang = lang or detect_lang(message)
        return Turn(message, lang, compose_answer(result.in_language(lang), lang), self.kb.resolved_threads(result))

    async def retrieve(
        self,
        message: str,
        history: Sequence[dict[str, Any]],
        lang: str | None,
        subject: str = "",
        precision: float | None = None,
    ) -> Turn:
        """Search for a message of a conversation (a follow-up read with the question before it),
        answering at `precision`'s operating point (None: KB_ANSWER_PRECISION)."""
        limit = self.kb.settings.max_query_chars
        if len(message) <= ON_LOOP_CHARS:
            message = checked_query(message, limit, "message", "message")
        else:  # checked, and a pasted trace reduced, off the event loop
            message = await asyncio.to_thread(checked_query, message, limit, "message", "message")
        # A longer pasted trace is taken, and reduced before the cut below, as every search reduces one.
        asked = await asyncio.to_thread(searched_text, message) if len(message) > limit else message
        query = followup_query(asked, list(history), subject)[:limit]
        return self.turn(await self.kb.search(query, k=SOURCES_PER_ANSWER, precision=precision), message, lang)

    def writes(self, turn: Turn) -> bool:
        """Whether the LLM writes this turn's answer: there is one, and retrieval is confident."""
        return self.llm is not None and turn.extractive.answered and bool(turn.extractive.sources)

    def write(self, turn: Turn, history: Sequence[dict[str, Any]], href: Callable[[Hit], str]) -> ChatReply:
        """The turn's answer: the LLM's when it writes one, else (or when it fails) the extractive one.
        Blocks while the LLM writes: call it from a worker thread."""
        if self.llm is None or not self.writes(turn):
            return turn.reply()
        try:
            text = self.llm.answer(turn.message, turn.extractive.sources, turn.lang, history)
        except LLMFailed as exc:
            return turn.reply("fallback", str(exc))
        return turn.generated(text, href)

    async def reply(
        self,
        message: str,
        history: Sequence[dict[str, Any]],
        lang: str | None,
        href: Callable[[Hit], str],
        subject: str = "",
        precision: float | None = None,
    ) -> ChatReply:
        """The whole answer at once (the LLM, when it writes, runs in a worker thread)."""
        turn = await self.retrieve(message, history, lang, subject, precision)
        if not self.writes(turn):
            return turn.reply()
        return await asyncio.to_thread(self.write, turn, history, href)

    async def stream(
        self,
        message: str,
        history: Sequence[dict[str, Any]],
        lang: str | None,
        href: Callable[[Hit], str],
        subject: str = "",
        cancelled: Cancel | None = None,
        precision: float | None = None,
    ) -> tuple[tuple[Hit, ...], bool, Iterator[tuple[str, Any]]]:
        """Retrieve now (so bad input raises before any byte is sent), then a stream of events
        (a blocking iterator: the LLM writes as it is read; iterate it from a worker thread). Setting
        `cancelled` closes the LLM's stream at once (the reader has gone: kb/cancel.py).

        Events: ("delta", text) pieces of the answer as written, then ("done", ChatReply).
        After a fallback the "done" answer replaces whatever the deltas said.
        """
        turn = await self.retrieve(message, history, lang, subject, precision)
        answer = turn.extractive

        def events() -> Iterator[tuple[str, Any]]:
            if self.llm is None or not self.writes(turn):
                yield "delta", answer.text
                yield "done", turn.reply()
                return
            pieces: list[str] = []
            try:
                for piece in self.llm.stream(turn.message, answer.sources, turn.lang, history, cancelled):
                    pieces.append(piece)
                    yield "delta", piece
            except LLMFailed as exc:
                yield "done", turn.reply("fallback", str(exc))
                return
            yield "done", turn.generated("".join(pieces).strip(), href)

        return answer.sources, answer.answered, events()
