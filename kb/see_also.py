""" "See also": resolved tracker threads shown below the entries of a question the FAQ may not answer, never as its
answer.

The threads are the harvested drafts a maintainer has not decided yet and those a maintainer accepted, each with
the threads grouped under it (`kb.harvest`, kept in the insights database): a small corpus of its own, searched as
the entries are (`kb.thread_search`: each thread's question and answer embedded as a passage, its words in a
lexical index, the question's vector through the query adapter, the evidence weighed by the calibration's ranking
weights). A search whose state is `likely` or `not_covered` ranks the threads with the vector it already has of the
question (`SearchResult.vector`), so "see also" embeds nothing per question. A thread is shown when:

- its score reaches `MIN_SCORE`, and its text outside its title (the body's question and the answer) holds at
  least `MIN_BODY` of the question's words: a short title alone is not evidence enough (for a whole issue, as a
  tracker's bot reads it, `ISSUE_MIN_SCORE` and `ISSUE_MIN_BODY`: its many words each weigh less);
- it is not the question's own thread: not its link (`own_url`, where the channel knows it), and neither its title
  nor its whole question near-identical to the question (the same words, or the title's vector at `OWN_COSINE`);
- it is not the thread of an accepted entry already among the question's entries.

At most `MAX_SHOWN` threads are shown, best first, one a draft: the draft's own thread (the one holding the answer),
whichever of its threads the question was found by. The thresholds are chosen on the tune side only, each kind of
input on its own (bench/bench_see_also.py: the questions of real_tune.jsonl for `MIN_SCORE` and `MIN_BODY`, the whole
issues of issues_tune.jsonl for `ISSUE_MIN_SCORE` and `ISSUE_MIN_BODY`; the out-of-scope ones shown a wrong thread at
most once in 50, the in-scope ones shown their entry as a thread as often as that allows); the same benchmark
reports real_test's and issues_test's. The vectors (the passages', and the titles' that
`draft_asking` compares) are kept in the data directory's embedding cache (`$KB_DATA_DIR/cache/embeddings.sqlite`:
the passages under the model's name, as the entries', the titles under the model's name and `#query`, where
`kb harvest` leaves those it embedded): a server starting, or a second replica, embeds none of them again. The
index is swapped whole when the drafts change (`SeeAlso.load`).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from .dense import matvec
from .embedding_cache import EmbeddingCache
from .hyperlinks import tracker_link
from .thread_search import ThreadSearch, ThreadText, query_of
from .verdict import AnswerState

if TYPE_CHECKING:
    from .embedding import Embedder
    from .hits import SearchResult
    from .search import Searcher

__all__ = [
    "Resolved",
    "SeeAlso",
    "threads_of",
    "stored_threads",
    "cached_questions",
    "keep_questions",
    "MAX_SHOWN",
    "MIN_SCORE",
    "MIN_BODY",
    "ISSUE_MIN_SCORE",
    "ISSUE_MIN_BODY",
    "OWN_COSINE",
    "MAX_THREADS",
]

MAX_SHOWN = 3  # threads shown below a question, at most
MIN_SCORE = 14.0  # the ranking's score (`kb.thread_search`) a thread must reach
MIN_BODY = 0.1  # the share of the question's words a thread must hold outside its title
# The same for a whole issue, as a tracker's bot reads it: its many words are each a smaller share of its question,
# so a thread that answers it scores lower than for a question typed in a few words.
ISSUE_MIN_SCORE = 9.0
ISSUE_MIN_BODY = 0.1
OWN_COSINE = 0.995  # a thread whose title's vector is this near the question's is the question's own thread
MAX_THREADS = 5000  # threads held, at most (the newest drafts first)
MAX_TITLE = 300  # characters of a thread's title shown
MAX_OWN = 4000  # characters of a question or a thread compared to tell a question's own thread
SHOWN_STATES = (AnswerState.LIKELY, AnswerState.NOT_COVERED)  # the states it is shown in: never an answered one


@dataclass(frozen=True)
class Resolved:
    """A resolved thread that may help: its title (the question it asked), its link, where it was asked, and the
    entry it became when a maintainer accepted it ("": a draft waiting)."""

    title: str
    url: str
    repo: str
    number: int
    entry_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "url": self.url, "repo": self.repo, "number": self.number}


QUERY_CACHE = "#query"  # after the model's name in the embedding cache: a question's vector, not a passage's


def cached_questions(
    path: Path | None, model: str, questions: Sequence[str], suffix: str = QUERY_CACHE
) -> dict[str, np.ndarray]:
    """The vectors of `questions` the embedding cache at `path` holds for `model` (with `suffix`: "" for passages),
    by text (none for no path, or a cache that cannot be read: it is only a cache)."""
    if path is None or not questions:
        return {}
    try:
        cache = EmbeddingCache(path, model + suffix)
        try:
            found = cache.get_many([EmbeddingCache.key(q) for q in questions])
        finally:
            cache.close()
    except (sqlite3.Error, OSError):
        return {}
    return {q: found[EmbeddingCache.key(q)] for q in questions if EmbeddingCache.key(q) in found}


def keep_questions(path: Path | None, model: str, vectors: Mapping[str, np.ndarray], suffix: str = QUERY_CACHE) -> None:
    """Keep the vectors of texts in the embedding cache at `path`, for `model` (with `suffix`: "" for passages; best
    effort: a cache that cannot be written, busy with an ingest, is left as it is)."""
    if path is None or not vectors:
        return
    try:
        cache = EmbeddingCache(path, model + suffix)
        try:
            cache.put_many({EmbeddingCache.key(q): np.asarray(v, np.float32) for q, v in vectors.items()})
        finally:
            cache.close()
    except (sqlite3.Error, OSError):
        return


def _split(question: str) -> tuple[str, str]:
    title, _, body = question.partition("\n\n")
    return title[:MAX_TITLE], body.strip()


Thread = tuple[Resolved, ThreadText]


def threads_of(drafts: Iterable[Any], accepted: Iterable[tuple[Any, str]] = ()) -> list[list[Thread]]:
    """Per harvested draft (`kb.harvest.Draft`: those waiting, then those `accepted`, each with the id of the entry
    it became), its thread and the threads grouped under it, each with what it is searched by: its title (the
    question's first paragraph, the issue's title as the harvest cleaned it), the rest of its question, and the
    draft's answer. A thread whose link is not an https URL on the tracker's own host
    (`kb.hyperlinks.tracker_link`) is left out."""
    grouped = []
    for draft, entry_id in [*((d, "") for d in drafts), *accepted]:
        title, body = _split(draft.question)
        threads = [(Resolved(title, draft.url, draft.repo, draft.number, entry_id), ThreadText(title, body, ""))]
        for asked in draft.alternates:
            other, more = _split(asked.question)
            threads.append(
                (Resolved(other, asked.url, draft.repo, asked.number, entry_id), ThreadText(other, more, ""))
            )
        grouped.append(
            [
                (t, ThreadText(text.title, text.body, draft.answer))
                for t, text in threads
                if text.title and tracker_link(t.url).startswith("https://")
            ]
        )
    return grouped


def stored_threads(store: Any) -> list[list[Thread]]:
    """`threads_of` the drafts an insights store (`kb.insights.InsightsStore`) keeps: those waiting, then those
    accepted, the newest `MAX_THREADS` of each."""
    waiting = store.drafts.all("new", MAX_THREADS)
    accepted = store.drafts.all("accepted", MAX_THREADS)
    return threads_of((kept.draft for kept in waiting), ((kept.draft, kept.written_id) for kept in accepted))


@dataclass(frozen=True)
class Found:
    """A held thread as ranked for one question: its score, its evidence beyond its title, the draft it is of."""

    thread: Resolved
    score: float
    body: float
    group: int


def _words(text: str) -> str:
    """A text as near-identical texts share it: case, punctuation and spacing aside."""
    return " ".join("".join(c if c.isalnum() else " " for c in text[:MAX_OWN].casefold()).split())


def _url(url: str) -> str:
    return url.strip().rstrip("/").casefold()


@dataclass(frozen=True)
class _Index:
    threads: tuple[Resolved, ...]
    texts: tuple[ThreadText, ...]
    groups: np.ndarray  # the draft each thread is grouped under (one shown a draft)
    titles: np.ndarray  # the titles' vectors, as questions: a unit row a thread, float32
    search: ThreadSearch  # the threads' passages and words, searched as the entries are
    model: str
    # The threads by what makes one a question's own: its link, and its title's and whole question's words.
    by_text: Mapping[str, tuple[int, ...]]
    accepted: tuple[int, ...]  # the threads of accepted drafts (an entry each)


def _by_text(threads: Sequence[Resolved], texts: Sequence[ThreadText]) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for i, (thread, text) in enumerate(zip(threads, texts)):
        for key in dict.fromkeys((_url(thread.url), _words(text.title), _words(text.question))):
            found.setdefault(key, []).append(i)
    return {key: tuple(ids) for key, ids in found.items()}


def _empty() -> _Index:
    return _Index(
        (), (), np.zeros(0, np.int64), np.zeros((0, 0), np.float32), ThreadSearch([], np.zeros((0, 0))), "", {}, ()
    )


class SeeAlso:
    """The resolved threads a question may be shown below its entries: shared by every build served, swapped whole."""

    def __init__(
        self,
        min_score: float = MIN_SCORE,
        min_body: float = MIN_BODY,
        issue_min_score: float = ISSUE_MIN_SCORE,
        issue_min_body: float = ISSUE_MIN_BODY,
    ) -> None:
        self.min_score = min_score
        self.min_body = min_body
        self.issue_min_score = issue_min_score
        self.issue_min_body = issue_min_body
        self._index = _empty()
        self._known: dict[tuple[bool, str], np.ndarray] = {}  # each text embedded once, across loads
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index.threads)

    def load(self, drafts: Iterable[Sequence[Thread]], embedder: Embedder, cache: Path | None = None) -> int:
        """Hold the threads of `drafts` (per draft, each thread with what it is searched by) in place of those held;
        the texts not embedded before are read from the embedding cache at `cache`, or embedded now (and kept
        there). Blocks: call it from a worker thread. How many threads are held."""
        threads: list[Resolved] = []
        texts: list[ThreadText] = []
        groups: list[int] = []
        for group, draft in enumerate(drafts):
            for thread, text in draft:
                if len(threads) == MAX_THREADS:
                    break
                threads.append(thread)
                texts.append(text)
                groups.append(group)
        with self._lock:  # two loads at once embed each text once
            known = {} if self._index.model not in ("", embedder.model) else self._known
            wanted = [(True, t.title) for t in texts] + [(False, t.passage) for t in texts]
            for query in (True, False):
                new = [
                    text for is_query, text in dict.fromkeys(wanted) if is_query == query and (query, text) not in known
                ]
                known.update({(query, t): v for t, v in self._embedded(new, query, embedder, cache).items()})
            self._known = {key: known[key] for key in wanted}  # a draft decided since is forgotten
            titles = self._stacked([(True, t.title) for t in texts], embedder.dim)
            passages = self._stacked([(False, t.passage) for t in texts], embedder.dim)
            search = ThreadSearch(texts, passages)
            self._index = _Index(
                tuple(threads), tuple(texts), np.array(groups, np.int64), titles, search, embedder.model,
                _by_text(threads, texts), tuple(i for i, t in enumerate(threads) if t.entry_id),
            )  # fmt: skip
        return len(threads)

    @staticmethod
    def _embedded(texts: list[str], query: bool, embedder: Embedder, cache: Path | None) -> dict[str, np.ndarray]:
        suffix = QUERY_CACHE if query else ""
        found = cached_questions(cache, embedder.model, texts, suffix)
        missing = [t for t in texts if t not in found]
        if missing:
            embed = embedder.embed_queries if query else embedder.embed_passages
            embedded = dict(zip(missing, embed(missing, batch_size=32)))
            keep_questions(cache, embedder.model, embedded, suffix)
            found |= embedded
        return found

    def _stacked(self, keys: list[tuple[bool, str]], dim: int) -> np.ndarray:
        if not keys:
            return np.zeros((0, dim), np.float32)
        return np.stack([self._known[k] for k in keys]).astype(np.float32, copy=False)

    def draft_asking(self, vector: np.ndarray | None, model: str, same: float) -> Resolved | None:
        """The thread leading the held draft waiting whose threads hold the one nearest `vector` (a question's
        vector by `model`), when that one's title is at least `same` near: the draft a thread asking the same joins.
        None otherwise (and for drafts already accepted)."""
        index = self._index
        if vector is None or not index.threads or model != index.model or vector.shape != (index.titles.shape[1],):
            return None
        waiting = np.array([not t.entry_id for t in index.threads])
        cosines = np.where(waiting, index.titles @ vector, -1.0)
        best = int(cosines.argmax())
        if float(cosines[best]) < same:
            return None
        return index.threads[int(np.flatnonzero(index.groups == index.groups[best])[0])]  # each draft's lead first

    def near(self, result: SearchResult, searcher: Searcher, own_url: str = "") -> tuple[Resolved, ...]:
        """The threads to show below `result`'s entries: none unless its state is `likely` or `not_covered`; else up
        to `MAX_SHOWN`, best first, one a draft, each passing the rules above. `searcher`: the one that made the
        result (its embedder's vector, adapter, glossary and weights); `own_url`: the link of the thread the question
        is, when the channel knows it."""
        if result.state not in SHOWN_STATES:
            return ()
        shown: list[Resolved] = []
        seen: set[int] = set()
        least, body = self.thresholds(result)
        for found in self.ranked(result, searcher, own_url, least, body):
            if found.score < least or len(shown) == MAX_SHOWN:
                break
            if found.group in seen or found.body < body:
                continue
            seen.add(found.group)
            shown.append(found.thread)
        return tuple(shown)

    def thresholds(self, result: SearchResult) -> tuple[float, float]:
        """The score and the share of the question's words beyond its title a thread needs to be shown below
        `result`: a whole issue's own when the search read one."""
        if result.reads == "issue":
            return self.issue_min_score, self.issue_min_body
        return self.min_score, self.min_body

    def ranked(
        self, result: SearchResult, searcher: Searcher, own_url: str = "", least: float = -np.inf, body: float = 0.0
    ) -> list[Found]:
        """Every held thread that may be shown below `result`, best first, with its score and its evidence beyond its
        title, whatever they are, each as the thread of its draft that holds the answer (the draft's own, which a
        thread grouped under it stands for): not the question's own thread (nor any of a draft whose own it is), nor
        an accepted entry's among its entries; those scoring `least` or more, with `body` or more of the question's
        words outside their titles."""
        index, vector = self._index, result.vector
        if vector is None or not index.threads:
            return []
        if searcher.embedder.model != index.model or vector.shape != (index.titles.shape[1],):
            return []
        terms, q, background = query_of(searcher, result.searched or result.query, vector)
        scored = index.search.rank(terms, q, background, searcher.weights)
        own = self._own(result, vector, own_url)
        leads = np.searchsorted(index.groups, index.groups)  # the first thread of each one's draft: the draft's own
        keep = ~own & ~own[leads] & (scored.score >= least) & (scored.body >= body)
        listed = {hit.entry.id for hit in result.hits}
        for i in index.accepted:  # an accepted thread whose entry is listed above is not shown again
            keep[i] &= index.threads[i].entry_id not in listed
        kept = np.flatnonzero(keep)
        return [
            Found(index.threads[int(leads[i])], float(scored.score[i]), float(scored.body[i]), int(index.groups[i]))
            for i in map(int, kept[np.argsort(-scored.score[kept], kind="stable")])
        ]

    def _own(self, result: SearchResult, vector: np.ndarray, own_url: str) -> np.ndarray:
        """Which held threads are the question's own: its link, or its title or whole question near-identical."""
        index = self._index
        keys = {_words(result.query), _words(result.searched), _words(result.query.split("\n", 1)[0])} - {""}
        own: np.ndarray = matvec(index.titles, vector) >= OWN_COSINE
        for key in keys | ({_url(own_url)} if own_url.strip() else set()):
            own[list(index.by_text.get(key, ()))] = True
        return own
