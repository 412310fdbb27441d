"""One chat turn: fold a follow-up into the question, retrieve, answer extractively or with the LLM.

A conversation may be about one entry (the follow-up link on an entry's page, `about`):
each question is then read with that entry's question (`kb.answer.followup_query`).

The extractive answer is always composed; the LLM (when configured) writes a grounded
answer only when retrieval is confident, and if it fails the extractive answer is returned
with `mode="fallback"` so the page can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from kb.answer import Answer, compose_answer, followup_query
from kb.errors import QueryError
from kb.knowledge import KnowledgeBase
from kb.llm import LLM, LLMError, link_citations
from kb.search import Hit
from kb.text import clean_query, detect_lang

__all__ = ["ChatReply", "Chat", "SOURCES_PER_ANSWER"]

SOURCES_PER_ANSWER = 4  # the best entry and up to three related ones


@dataclass(frozen=True)
class ChatReply:
    answer: str  # Markdown
    answered: bool
    mode: str  # "extractive", "llm" or "fallback"
    sources: tuple[Hit, ...]
    error: str = ""  # why the LLM was not used, for the log
    lang: str = "en"  # the reader's language: the answer's, and the sources' where they have it
    note: str = ""  # the framework the question names has no answer in its FAQ (`kb.answer.elsewhere_note`)


@dataclass(frozen=True)
class _Turn:
    message: str
    lang: str
    extractive: Answer


@dataclass
class Chat:
    kb: KnowledgeBase
    llm: LLM | None = None

    def subject(self, about: str | None, message: str) -> str:
        """The question of the entry a conversation is about, in the message's language ("" for none)."""
        if not about:
            return ""
        if about not in self.kb.by_id:
            raise QueryError("about", f"no entry with id {about!r}")
        return self.kb.by_id[about].localized(detect_lang(message)).question

    def _retrieve(self, message: str, history: Sequence[dict[str, Any]], lang: str | None, subject: str) -> _Turn:
        message = clean_query(message).strip()
        if not message:
            raise QueryError("message", "the message is empty")
        limit = self.kb.settings.max_query_chars
        if len(message) > limit:
            raise QueryError("message", f"the message is {len(message)} characters; the limit is {limit}")
        query = followup_query(message, list(history), subject)[:limit]
        result = self.kb.search_blocking(query, k=SOURCES_PER_ANSWER)
        lang = lang or detect_lang(message)
        return _Turn(message, lang, compose_answer(result.in_language(lang), lang))

    def _use_llm(self, turn: _Turn) -> bool:
        return self.llm is not None and turn.extractive.answered and bool(turn.extractive.sources)

    def reply(
        self, message: str, history: Sequence[dict[str, Any]], lang: str | None, href: Callable[[Hit], str],
        subject: str = "",
    ) -> ChatReply:
        """The whole answer at once."""
        turn = self._retrieve(message, history, lang, subject)
        answer = turn.extractive
        if not self._use_llm(turn):
            return ChatReply(answer.text, answer.answered, "extractive", answer.sources, lang=turn.lang, note=answer.note)
        assert self.llm is not None
        try:
            text = self.llm.answer(turn.message, answer.sources, turn.lang, history)
        except LLMError as exc:
            return ChatReply(answer.text, answer.answered, "fallback", answer.sources, str(exc), turn.lang, answer.note)
        return ChatReply(link_citations(text, answer.sources, href), True, "llm", answer.sources, lang=turn.lang, note=answer.note)

    def stream(
        self, message: str, history: Sequence[dict[str, Any]], lang: str | None, href: Callable[[Hit], str],
        subject: str = "",
    ) -> tuple[tuple[Hit, ...], bool, Iterator[tuple[str, Any]]]:
        """Retrieve now (so bad input raises before any byte is sent), then a stream of events.

        Events: ("delta", text) pieces of the answer as written, then ("done", ChatReply).
        After a fallback the "done" answer replaces whatever the deltas said.
        """
        turn = self._retrieve(message, history, lang, subject)
        answer = turn.extractive

        def events() -> Iterator[tuple[str, Any]]:
            if not self._use_llm(turn):
                yield "delta", answer.text
                yield "done", ChatReply(answer.text, answer.answered, "extractive", answer.sources, lang=turn.lang, note=answer.note)
                return
            assert self.llm is not None
            pieces: list[str] = []
            try:
                for piece in self.llm.stream(turn.message, answer.sources, turn.lang, history):
                    pieces.append(piece)
                    yield "delta", piece
            except LLMError as exc:
                yield "done", ChatReply(answer.text, answer.answered, "fallback", answer.sources, str(exc), turn.lang, answer.note)
                return
            text = link_citations("".join(pieces).strip(), answer.sources, href)
            yield "done", ChatReply(text, True, "llm", answer.sources, lang=turn.lang, note=answer.note)

        return answer.sources, answer.answered, events()
