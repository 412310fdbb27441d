"""Recording questions and votes for the insights, without slowing or failing the answer.

`Recorder.hear` listens to what the library publishes (`kb.events`: each search, chat turn
and vote, from `kb.asking`): it queues a record and returns at once; `kb.insights.writer.Writer`
writes the queue on its own thread, keeps what the database refuses, drops what is beyond
`KB_INSIGHTS_QUEUE_SIZE` waiting records and counts it (`Recorder.dropped`, on `/healthz`),
and prunes rows older than `KB_INSIGHTS_RETENTION_DAYS`. The answer is served either way.
A vote taken over HTTP is not queued: `record_vote` writes it before the server answers
202, so an acknowledged vote survives the process being killed; a queued record may not
(docs/insights.md, "Feedback and insights", says which). Text is stored without control characters or lone
surrogates (`kb.text.clean_query`): a NUL never reaches the database, and one odd record
cannot make SQLite refuse a whole batch.

The search page asks as the reader types; those searches carry a `live` id, and a run of
them that extend one another ("how", "how do I", "how do I resume training") is recorded
once, as the last of the run, when the reader pauses.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Sequence

from ..answer import followup_query
from ..errors import InsightsUnavailable
from ..events import Chatted, Event, Searched, Voted
from ..hits import Hit, SearchResult
from ..settings import Settings
from ..text import clean_query, detect_lang
from .records import Question, Vote
from .store import InsightsStore, store_path
from .writer import LIVE_QUIET, Writer, related_typing

__all__ = ["Recorder", "LIVE_QUIET", "related_typing"]

log = logging.getLogger("kb.insights")


class Recorder(Writer):
    """Takes records of questions and votes from whoever answers, and writes them on its own thread."""

    def __init__(
        self,
        store: InsightsStore | None,
        settings: Settings,
        problem: str = "",
        quiet: float = LIVE_QUIET,
        ids_kept: frozenset[str] = frozenset(),
    ):
        self.problem = problem  # why there is no store
        self.ids_kept = ids_kept  # the channels whose workspace and conversation ids are recorded with a question
        super().__init__(store, settings.insights_queue_size, settings.insights_retention_days, quiet)

    @classmethod
    def open(cls, settings: Settings, ids_kept: frozenset[str] = frozenset()) -> "Recorder":
        """A recorder writing to KB_DATABASE_URL, or else the data directory's insights file; without one if it cannot be opened."""
        try:
            store = InsightsStore(settings.database_url or store_path(settings.data_dir))
        except InsightsUnavailable as exc:
            log.warning("questions and votes are not recorded, and feedback is off: %s", exc)
            return cls(None, settings, problem=str(exc), ids_kept=ids_kept)
        log.info("recording questions and votes in %s", store.location)
        return cls(store, settings, ids_kept=ids_kept)

    @property
    def feedback_on(self) -> bool:
        return self.store is not None

    def pseudonym(self, identity: str) -> str:
        assert self.store is not None, "no store: check feedback_on first"
        return self.store.pseudonym(identity)

    def searched(
        self,
        result: SearchResult,
        channel: str,
        started: float,
        kind: str = "search",
        live: str | None = None,
        conversation: tuple[str, str] | None = None,
    ) -> None:
        """Record a search (or the retrieval of a chat turn); `started` is its `time.perf_counter()`."""
        self.asked(result.query, result.lang, result.answered, result.hits, channel, started, kind, live, conversation)

    def asked(
        self,
        text: str,
        lang: str,
        answered: bool,
        sources: Sequence[Hit],
        channel: str,
        started: float,
        kind: str = "chat",
        live: str | None = None,
        conversation: tuple[str, str] | None = None,
        previous: str | None = None,
    ) -> None:
        """Record a question with its best entry (the first of `sources`) and how far it led the second;
        a team chat's (workspace, conversation) only where a setting asks (KB_INSIGHTS_SLACK_IDS,
        KB_INSIGHTS_CHAT_IDS), in the `chat_workspace` and `chat_conversation` columns whatever the chat."""
        if self.store is None:
            return
        try:
            best = sources[0] if sources else None
            team, chat = conversation if conversation and channel in self.ids_kept else (None, None)
            question = Question(
                text=clean_query(text),
                lang=lang,
                channel=channel,
                answered=answered,
                top_entry=best.entry.id if best else None,
                top_score=best.score if best else None,
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
                kind=kind,
                chat_workspace=team or None,
                chat_conversation=chat or None,
                margin=sources[0].score - sources[1].score if len(sources) > 1 else None,
                previous=clean_query(previous) if previous else None,
            )
            self._put((live, question) if live else question)
        except Exception:  # a bug here must not cost the reader their answer
            log.exception("could not record a question")

    def chatted(
        self,
        message: str,
        history: Sequence[dict[str, Any]],
        answered: bool,
        sources: Sequence[Hit],
        channel: str,
        started: float,
        subject: str = "",
        conversation: tuple[str, str] | None = None,
    ) -> None:
        """Record a chat turn as the question searched (a follow-up joined to the question before it, or to the subject's)."""
        try:
            text = followup_query(message.strip(), list(history), subject)
            lang = detect_lang(message)
            # A question of its own right after an answer may be the answer asked again in other words.
            asked = [str(t.get("content", "")).strip() for t in history if t.get("role") == "user"]
            previous = asked[-1] if asked and text == message.strip() else None
        except Exception:
            log.exception("could not record a chat question")
            return
        self.asked(
            text, lang, answered, sources, channel, started, kind="chat", conversation=conversation, previous=previous
        )

    def hear(self, event: Event) -> None:
        """The listener (`kb.events.Events`): record a search, a chat turn or a vote as it is published."""
        kind = type(event)
        if kind is Searched:
            s: Searched = event  # type: ignore[assignment]
            self.searched(s.result, s.channel, s.started, live=s.live, conversation=s.conversation)
        elif kind is Chatted:
            e: Chatted = event  # type: ignore[assignment]
            self.chatted(e.message, e.history, e.answered, e.sources, e.channel, e.started, e.subject, e.conversation)
        elif kind is Voted:
            self.voted(event)  # type: ignore[arg-type]

    def voted(self, event: Voted) -> None:
        """A vote, queued; the voter is kept only as a keyed hash, for one vote each (none without a store or an entry)."""
        vote = self._vote_of(event)
        if vote is not None:
            self._put(vote)

    def record_vote(self, event: Voted) -> None:
        """Write a vote now, on the caller's thread: committed when this returns (a server answers 202 after it).

        InsightsUnavailable when the database refuses it (locked past its busy timeout, a full disk, a
        server down): nothing is kept, so the caller can say the vote was not taken."""
        vote = self._vote_of(event)
        if vote is None:
            return
        assert self.store is not None
        try:
            self.store.votes.add([vote])
        except Exception as exc:  # sqlite3.Error, OSError, psycopg.Error
            self._warn(
                f"vote:{type(exc).__name__}",
                f"could not record a vote in {self.store.location}: {type(exc).__name__}: {exc}",
            )
            raise InsightsUnavailable(
                self.store.location, f"the vote was not recorded ({type(exc).__name__}: {exc}); try again"
            ) from None

    def _vote_of(self, event: Voted) -> Vote | None:
        """The vote as stored: its texts cleaned, its voter a keyed hash (None without a store or an entry)."""
        if self.store is None or not event.entry_id:
            return None
        return Vote(
            entry_id=event.entry_id,
            helpful=event.helpful,
            question=clean_query(event.question),
            voter=self.pseudonym(event.voter),
            channel=event.channel,
            reason=event.reason,
            comment=event.comment and clean_query(event.comment),
        )
