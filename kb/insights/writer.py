"""The insights writer: a bounded queue of records and the thread that writes them to the store in batches.

Records are put on a queue and the caller returns at once; one writer thread takes them off
and writes them in batches. When the database cannot be written (a lock another process
holds, a full disk, a PostgreSQL server down or restarting) the writer logs a warning (one
per outage), keeps the records and tries again every `RETRY_EVERY` seconds, so a lock that
is released or a server that comes back loses nothing. At most `queue_size`
records wait to be written; beyond that a new record is dropped, counted (`dropped`) and
logged. The writer also prunes rows older than `retention_days`.

A search typed live arrives as `(box, Question)`: a run of them from one search box that
extend one another ("how", "how do I", "how do I resume training") is written once, as the
last of the run, when the reader pauses for `quiet` seconds.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..lru import LRU
from .records import Question, Vote
from .store import InsightsStore

__all__ = ["Writer", "related_typing", "LIVE_QUIET", "RETRY_EVERY"]

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


def _ends_batch(item: object) -> bool:
    """A flush or stop is written at once, with whatever came before it."""
    return isinstance(item, _Flush) or item is _STOP


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


class Writer:
    """Takes records (`_put`) from any thread and writes them to `store` on its own thread (none without a store)."""

    def __init__(self, store: InsightsStore | None, queue_size: int, retention_days: int, quiet: float = LIVE_QUIET):
        self.store = store
        self.queue_size = queue_size
        self.retention_days = retention_days
        self.quiet = quiet
        self.dropped = 0  # records never written: more than `queue_size` were waiting
        self.waiting = 0  # records taken and not yet written: queued, being gathered, or kept after a failed write
        self._count = threading.Lock()
        self._queue: queue.Queue[object] = queue.Queue()  # bounded by `waiting`
        self._urgent = threading.Event()  # a flush or stop is queued: end the linger now
        self._kept: tuple[list[Question], list[Vote]] = ([], [])  # refused by the database, to try again
        self._warned: dict[str, float] = {}
        self._refused: set[str] = set()  # kinds of record the database last refused
        self._thread: threading.Thread | None = None
        if store is not None:
            self._thread = threading.Thread(target=self._run, name="kb-insights-writer", daemon=True)
            self._thread.start()

    def _put(self, record: object) -> None:
        """Queue a Question, a Vote or a live search `(box, Question)`; drop it when `queue_size` are waiting."""
        with self._count:
            full = self.waiting >= self.queue_size
            if full:
                self.dropped += 1
            else:
                self.waiting += 1
        if full:
            self._warn(
                "queue",
                f"{self.queue_size} records are waiting to be written to the insights database "
                f"(KB_INSIGHTS_QUEUE_SIZE); new ones are dropped ({self.dropped} so far)",
            )
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
        self._urgent.set()
        return marker.done.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the writer and close the database."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._urgent.set()
            self._thread.join(timeout)
            self._thread = None
            if self.waiting:
                log.warning(
                    "%d questions and votes could not be written to the insights database before shutdown; "
                    "they are lost",
                    self.waiting,
                )
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
        commits a few times a second instead of once per request. It sleeps through the
        linger rather than waking for each record, so queueing a record never wakes this
        thread to contend with the request that queued it; a flush or stop ends the linger.
        """
        if not items or _ends_batch(items[-1]):
            return
        if self._queue.qsize() < BATCH:  # else a full batch is already waiting: no linger
            self._urgent.wait(LINGER)
        self._urgent.clear()  # a flush or stop that set it is already queued: the loop below takes it
        while len(items) < BATCH:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return
            if _ends_batch(items[-1]):
                return

    def _write(self, questions: list[Question], votes: list[Vote]) -> None:
        """Write these records after those kept from a failed write; keep whatever the database refuses."""
        store = self.store
        assert store is not None
        kept_questions, kept_votes = self._kept
        kept_questions += questions
        kept_votes += votes
        batches: list[tuple[str, list[Any], Callable[[list[Any]], int]]] = [
            ("questions", kept_questions, store.questions.add),
            ("votes", kept_votes, store.votes.add),
        ]
        for kind, records, write in batches:
            if not records:
                continue
            try:
                write(records)
            except Exception as exc:  # sqlite3.Error, OSError, psycopg.Error: a lock, a full disk, a server gone
                self._refused.add(kind)
                if store.unreachable(exc):  # one line for the outage, whichever records it holds up
                    self._warn(
                        "write:unreachable",
                        (
                            f"the insights database {store.location} cannot be reached ({type(exc).__name__}: {exc}); "
                            f"questions and votes are kept and tried again every {RETRY_EVERY:g} s, up to "
                            f"{self.queue_size} (KB_INSIGHTS_QUEUE_SIZE); answers are served as usual"
                        ),
                    )
                    continue
                self._warn(
                    f"write:{kind}:{type(exc).__name__}:{exc}",  # a lost vote is worth its own line
                    f"could not record {len(records)} {kind} in {store.location}: {type(exc).__name__}: {exc}; "
                    f"they are kept and tried again every {RETRY_EVERY:g} s ({self.waiting} records waiting, "
                    f"{self.dropped} dropped so far); answers are served as usual",
                )
                continue
            if kind in self._refused:
                self._refused.discard(kind)
                self._warned = {
                    key: at
                    for key, at in self._warned.items()
                    if not key.startswith(f"write:{kind}:") and key != "write:unreachable"
                }
                log.warning(
                    "recorded %d %s once the insights database took them (%d records dropped so far)",
                    len(records),
                    kind,
                    self.dropped,
                )
            self._written(len(records))
            records.clear()

    def _prune(self) -> None:
        assert self.store is not None
        try:
            questions, votes = self.store.prune(time.time() - self.retention_days * 86400)
        except Exception as exc:
            self._warn("prune", f"could not prune {self.store.location}: {type(exc).__name__}: {exc}")
            return
        if questions or votes:
            log.info("pruned %d questions and %d votes older than %d days", questions, votes, self.retention_days)
