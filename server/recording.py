"""Recording questions and votes for the insights page, without slowing or failing a request.

A route hands its record to `Recorder`, which puts it on a queue and returns at once; one
writer thread takes records off the queue and writes them in batches. When the database
cannot be written (a lock another process holds, a full disk) the writer logs a warning,
keeps the records and tries again every `RETRY_EVERY` seconds, so a lock that is released
loses nothing. At most `KB_INSIGHTS_QUEUE_SIZE` records wait to be written; beyond that a new
record is dropped, counted (`Recorder.dropped`, on `/healthz`) and logged. The answer is
served either way. Text is stored without control characters
or lone surrogates (`kb.text.clean_query`): a NUL never reaches the database, and one odd
record cannot make SQLite refuse a whole batch. The writer also prunes rows older than
`KB_INSIGHTS_RETENTION_DAYS`.

The search page asks as the reader types; those searches carry a `live` id, and a run of
them that extend one another ("how", "how do I", "how do I resume training") is recorded
once, as the last of the run, when the reader pauses.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from kb.answer import followup_query
from kb.lru import LRU
from kb.insights import REASONS, InsightsError, InsightsStore, Question, Vote, store_path
from kb.search import Hit, SearchResult
from kb.settings import Settings
from kb.text import clean_query, detect_lang

__all__ = ["Recorder", "LIVE_QUIET", "related_typing", "feedback_context"]

log = logging.getLogger("kb.insights")

BATCH = 500
LINGER = 0.5  # seconds the writer waits for more records before it commits a batch
BOXES = 10_000  # search boxes whose last question is remembered (for "asked again")
LIVE_QUIET = 4.0  # seconds without a newer search from the same box before a live search is recorded
LIVE_MAX = 60.0  # a live search is recorded at the latest this long after it was made
PRUNE_EVERY = 6 * 3600.0
WARN_EVERY = 60.0  # seconds between repeated warnings about the same trouble
RETRY_EVERY = 1.0  # seconds between tries to write records the database refused


@dataclass
class _Live:
    question: Question
    due: float
    deadline: float


@dataclass
class _Flush:
    done: threading.Event = field(default_factory=threading.Event)


_STOP = object()


def feedback_context(recorder: "Recorder") -> dict[str, Any]:
    """What a page needs to show vote buttons (templates/_votes.html): whether votes are taken, and the reasons."""
    return {"feedback": recorder.feedback_on, "feedback_reasons": REASONS}


def related_typing(before: str, after: str) -> bool:
    """Whether `after` continues what `before` was typing: one is the other's start, give or take a two-letter fix."""
    a, b = before.strip().casefold(), after.strip().casefold()
    shorter = min(len(a), len(b))
    common = 0
    while common < shorter and a[common] == b[common]:
        common += 1
    return common >= shorter - 2 and common > 0


def _in_box(question: Question, box: str, last_in_box: LRU[str, str]) -> Question:
    """A live search as recorded: with the question its search box recorded before it."""
    before = last_in_box.get(box)
    last_in_box.put(box, question.text)
    return replace(question, previous=before)


class Recorder:
    """Takes records from request handlers and writes them on its own thread."""

    def __init__(self, store: InsightsStore | None, settings: Settings, problem: str = "", quiet: float = LIVE_QUIET):
        self.store = store
        self.problem = problem  # why there is no store
        self.retention_days = settings.insights_retention_days
        self.slack_ids = settings.insights_slack_ids
        self.quiet = quiet
        self.queue_size = settings.insights_queue_size
        self.dropped = 0  # records never written: more than `queue_size` were waiting
        self.waiting = 0  # records taken and not yet written: queued, being gathered, or kept after a failed write
        self._count = threading.Lock()
        self._queue: queue.Queue[object] = queue.Queue()  # bounded by `waiting`
        self._kept: tuple[list[Question], list[Vote]] = ([], [])  # refused by the database, to try again
        self._warned: dict[str, float] = {}
        self._refused: set[str] = set()  # kinds of record the database last refused
        self._thread: threading.Thread | None = None
        if store is not None:
            self._thread = threading.Thread(target=self._run, name="kb-insights-writer", daemon=True)
            self._thread.start()

    @classmethod
    def open(cls, settings: Settings) -> "Recorder":
        """A recorder writing to the data directory's insights database; without one if it cannot be opened."""
        try:
            store = InsightsStore(store_path(settings.data_dir))
        except InsightsError as exc:
            log.warning("questions and votes are not recorded, and feedback is off: %s", exc)
            return cls(None, settings, problem=str(exc))
        log.info("recording questions and votes in %s", store.path)
        return cls(store, settings)

    @property
    def feedback_on(self) -> bool:
        return self.store is not None

    def pseudonym(self, identity: str) -> str:
        assert self.store is not None, "no store: check feedback_on first"
        return self.store.pseudonym(identity)

    # What routes call

    def searched(
        self,
        result: SearchResult,
        channel: str,
        started: float,
        kind: str = "search",
        live: str | None = None,
        slack: tuple[str, str] | None = None,
    ) -> None:
        """Record a search (or the retrieval of a chat turn); `started` is its `time.perf_counter()`."""
        self.asked(result.query, result.lang, result.answered, result.hits, channel, started, kind, live, slack)

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
        slack: tuple[str, str] | None = None,
        previous: str | None = None,
    ) -> None:
        """Record a question with its best entry (the first of `sources`) and how far it led the second."""
        if self.store is None:
            return
        try:
            best = sources[0] if sources else None
            team, slack_channel = slack if slack and self.slack_ids else (None, None)
            question = Question(
                text=clean_query(text), lang=lang, channel=channel, answered=answered,
                top_entry=best.entry.id if best else None, top_score=best.score if best else None,
                latency_ms=round((time.perf_counter() - started) * 1000, 2), kind=kind,
                slack_team=team or None, slack_channel=slack_channel or None,
                margin=sources[0].score - sources[1].score if len(sources) > 1 else None,
                previous=clean_query(previous) if previous else None,
            )
            self._put((live, question) if live else question)
        except Exception:  # a bug here must not cost the reader their answer
            log.exception("could not record a question")

    def chatted(
        self, message: str, history: Sequence[dict[str, Any]], answered: bool, sources: Sequence[Hit], channel: str,
        started: float, subject: str = "",
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
        self.asked(text, lang, answered, sources, channel, started, kind="chat", previous=previous)

    def when_searched(
        self, search: asyncio.Future[SearchResult], channel: str, started: float, slack: tuple[str, str] | None = None
    ) -> None:
        """Record a search running as a future once it is done (a search that failed is not recorded)."""

        def done(future: asyncio.Future[SearchResult]) -> None:
            if not future.cancelled() and future.exception() is None:
                self.searched(future.result(), channel, started, slack=slack)

        search.add_done_callback(done)

    def vote(self, vote: Vote) -> None:
        self._put(replace(vote, question=clean_query(vote.question), comment=vote.comment and clean_query(vote.comment)))

    def slack_vote(self, entry_id: str, helpful: bool, team: str, user: str) -> None:
        """A vote from a button on a Slack reply; the user is kept only as a keyed hash, for one vote each."""
        if self.store is None or not entry_id:
            return
        voter = self.pseudonym(f"slack:{team}:{user}")
        self._put(Vote(entry_id=entry_id, helpful=helpful, question="", voter=voter, channel="slack"))

    def _put(self, record: object) -> None:
        with self._count:
            full = self.waiting >= self.queue_size
            if full:
                self.dropped += 1
            else:
                self.waiting += 1
        if full:
            self._warn("queue", f"{self.queue_size} records are waiting to be written to the insights database "
                       f"(KB_INSIGHTS_QUEUE_SIZE); new ones are dropped ({self.dropped} so far)")
        else:
            self._queue.put(record)

    def _written(self, count: int) -> None:
        with self._count:
            self.waiting -= count

    def _warn(self, key: str, message: str) -> None:
        now = time.monotonic()
        if now - self._warned.get(key, -WARN_EVERY) >= WARN_EVERY:
            self._warned[key] = now
            log.warning(message)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything recorded so far (live searches too) is written; False on timeout."""
        if self._thread is None:
            return True
        marker = _Flush()
        self._queue.put(marker)
        return marker.done.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the writer and close the database."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
            if self.waiting:
                log.warning("%d questions and votes could not be written to the insights database before shutdown; "
                            "they are lost", self.waiting)
        if self.store is not None:
            self.store.close()

    # The writer thread

    def _run(self) -> None:
        live: dict[str, _Live] = {}
        last_in_box: LRU[str, str] = LRU(BOXES)  # the question each search box recorded last
        next_prune = 0.0
        stop = False
        while not stop:
            now = time.monotonic()
            retry = now + RETRY_EVERY if any(self._kept) else now + 60
            wait = min([p.due for p in live.values()], default=retry) - now
            wait = min(wait, retry - now)
            try:
                items = [self._queue.get(timeout=max(wait, 0.0))]
            except queue.Empty:
                items = []
            self._gather(items)
            questions: list[Question] = []
            votes: list[Vote] = []
            flushes: list[_Flush] = []
            now = time.monotonic()
            for item in items:
                if item is _STOP:
                    stop = True
                elif isinstance(item, _Flush):
                    flushes.append(item)
                elif isinstance(item, Vote):
                    votes.append(item)
                elif isinstance(item, Question):
                    questions.append(item)
                elif isinstance(item, tuple):
                    key, question = item
                    earlier = live.get(key)
                    if earlier is not None and not related_typing(earlier.question.text, question.text):
                        questions.append(_in_box(earlier.question, key, last_in_box))
                        earlier = None
                    elif earlier is not None:
                        self._written(1)  # the reader typed on: the newer search stands for it
                    deadline = earlier.deadline if earlier else now + LIVE_MAX
                    live[key] = _Live(question, min(now + self.quiet, deadline), deadline)
            for key in [k for k, p in live.items() if p.due <= now or flushes or stop]:
                questions.append(_in_box(live.pop(key).question, key, last_in_box))
            self._write(questions, votes)
            for marker in flushes:
                marker.done.set()
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + PRUNE_EVERY
                self._prune()

    def _gather(self, items: list[object]) -> None:
        """Add what arrives within `LINGER` of the first record (or until a flush or stop), up to `BATCH`.

        One transaction for many records: under a steady trickle of requests the writer
        commits a few times a second instead of once per request.
        """
        deadline = time.monotonic() + LINGER
        while items and len(items) < BATCH and not isinstance(items[-1], _Flush) and items[-1] is not _STOP:
            try:
                items.append(self._queue.get(timeout=max(deadline - time.monotonic(), 0.0)))
            except queue.Empty:
                return

    def _write(self, questions: list[Question], votes: list[Vote]) -> None:
        """Write these records after those kept from a failed write; keep whatever the database refuses."""
        store = self.store
        assert store is not None
        kept_questions, kept_votes = self._kept
        kept_questions += questions
        kept_votes += votes
        batches: list[tuple[str, list[Any], Callable[[list[Any]], int]]] = [
            ("questions", kept_questions, store.add_questions), ("votes", kept_votes, store.add_votes),
        ]
        for kind, records, write in batches:
            if not records:
                continue
            try:
                write(records)
            except Exception as exc:  # sqlite3.Error, OSError: a lock held too long, a full disk, not a database
                self._refused.add(kind)
                self._warn(
                    f"write:{kind}:{type(exc).__name__}:{exc}",  # a lost vote is worth its own line
                    f"could not record {len(records)} {kind} in {store.path}: {type(exc).__name__}: {exc}; "
                    f"they are kept and tried again every {RETRY_EVERY:g} s ({self.waiting} records waiting, "
                    f"{self.dropped} dropped so far); answers are served as usual",
                )
                continue
            if kind in self._refused:
                self._refused.discard(kind)
                self._warned = {key: at for key, at in self._warned.items() if not key.startswith(f"write:{kind}:")}
                log.warning("recorded %d %s once the insights database took them (%d records dropped so far)",
                            len(records), kind, self.dropped)
            self._written(len(records))
            records.clear()

    def _prune(self) -> None:
        assert self.store is not None
        try:
            questions, votes = self.store.prune(time.time() - self.retention_days * 86400)
        except Exception as exc:
            self._warn("prune", f"could not prune {self.store.path}: {type(exc).__name__}: {exc}")
            return
        if questions or votes:
            log.info("pruned %d questions and %d votes older than %d days", questions, votes, self.retention_days)
