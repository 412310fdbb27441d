"""Term postings per field (question, answer), and how much of a query each entry covers.

Built from the entries' tokens at ingest and saved in the build (`lexical.npz`), so a server
starts without tokenizing the corpus.

A search never scores the lexical side over every entry: `top` finds the entries that best
cover the query from the postings of its terms (cost proportional to the postings read),
and `scores` gives the coverage of a given few entries by looking each one up.

Both work on a table of which entries hold which query terms (an entry a row, a term of the
query a column), filled from the terms' postings in a few array operations for all the terms
at once, rather than term by term: a query has about 27 terms with its glossary equivalents
and near spellings, and a step per term cost more than the arithmetic.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .filters import Subset
from .text import is_cjk, tokenize

if TYPE_CHECKING:
    from .entries import Entry

__all__ = ["FieldIndex", "QueryTerms", "LexicalIndex", "Weighed", "POSTINGS_BUDGET"]

# `top` reads the postings of the query's terms rarest first, up to this many ids in all.
# A term past the budget is in tens of thousands of entries: it has a low idf and names no
# particular entry, so it still counts in every candidate's score but nominates none.
POSTINGS_BUDGET = 20_000
# `holds` reads a term's postings whole (one merged lookup for all such terms) when they are
# at most this many times the entries asked about; a longer list (a common word in a large
# corpus) is searched for each entry instead, which costs log(postings) an entry.
MERGE_POSTINGS = 16
TERMS_KEPT = 65_536  # terms whose document frequency and idf a LexicalIndex keeps at hand


@dataclass(frozen=True)
class QueryTerms:
    """A query as groups of alternatives: each group is one query word and its glossary equivalents.

    A group counts as matched when any of its terms is in the entry.
    """

    groups: tuple[tuple[tuple[str, float], ...], ...]  # ((term, weight), ...) per group


class Weighed:
    """A query's terms in query order (a term of two groups twice), with the group of each, what
    each earns an entry that holds it, and the query's whole weight: what coverage needs,
    worked out once per query rather than once per term and field."""

    __slots__ = ("terms", "credit", "starts", "total")

    def __init__(self, terms: list[str], credit: list[float], starts: list[int], total: float):
        self.terms = terms
        self.credit = np.array(credit, dtype=np.float32)
        self.starts = np.array(starts, dtype=np.int64)  # where each group's terms begin
        self.total = total


class FieldIndex:
    """Which entries contain each term of one field, and the term's idf.

    The postings of all terms are one array of entry ids, grouped by term and ascending
    within a term; `_start[t]:_start[t + 1]` is term t's share.
    """

    def __init__(self, docs: Sequence[Sequence[str]]):
        terms: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        for doc_id, doc in enumerate(docs):
            for term in dict.fromkeys(doc):
                term_ids.append(terms.setdefault(term, len(terms)))
                doc_ids.append(doc_id)
        self._build(list(terms), np.array(term_ids, dtype=np.int64), np.array(doc_ids, dtype=np.int64), len(docs))

    @classmethod
    def from_ids(cls, vocabulary: Sequence[str], term_ids: np.ndarray, doc_ids: np.ndarray, size: int) -> "FieldIndex":
        """An index of `size` documents given as (term id, document id) pairs, repeats allowed.

        For corpora tokenized elsewhere (the scale benchmark builds a million documents
        this way, without a Python loop per token).
        """
        index = cls.__new__(cls)
        index._build(list(vocabulary), np.asarray(term_ids, dtype=np.int64), np.asarray(doc_ids, dtype=np.int64), size)
        return index

    def _build(self, vocabulary: list[str], term_ids: np.ndarray, doc_ids: np.ndarray, size: int) -> None:
        self.size = size
        pairs = term_ids * max(size, 1) + doc_ids
        pairs.sort()  # by term, then document
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))] if len(pairs) else pairs
        terms = pairs // max(size, 1)
        self._ids = (pairs % max(size, 1)).astype(np.int32)
        del pairs
        counts = np.bincount(terms, minlength=len(vocabulary))
        used = counts > 0  # a vocabulary given with `from_ids` may hold terms no document has
        self._vocabulary = [term for term, n in zip(vocabulary, used) if n]
        self._start = np.concatenate(([0], np.cumsum(counts[used]))).astype(np.int64)
        self._terms = {term: t for t, term in enumerate(self._vocabulary)}

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The index as plain arrays (the vocabulary as UTF-8 lines), for `np.savez`."""
        words = "\n".join(self._vocabulary).encode("utf-8")
        return {
            "vocabulary": np.frombuffer(words, dtype=np.uint8),
            "start": self._start,
            "ids": self._ids,
            "size": np.array([self.size], dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "FieldIndex":
        """The inverse of `to_arrays`; raises ValueError when the arrays do not fit together."""
        index = cls.__new__(cls)
        words = arrays["vocabulary"].tobytes().decode("utf-8")
        index._vocabulary = words.split("\n") if words else []
        index._start = np.asarray(arrays["start"], dtype=np.int64)
        index._ids = np.asarray(arrays["ids"], dtype=np.int32)
        index.size = int(arrays["size"][0])
        if len(index._start) != len(index._vocabulary) + 1 or index._start[-1] != len(index._ids):
            raise ValueError(f"{len(index._vocabulary)} terms, {len(index._start)} offsets, {len(index._ids)} postings")
        if len(index._ids) and (index._ids.min() < 0 or index._ids.max() >= index.size):
            raise ValueError(f"postings name entries outside 0..{index.size - 1}")
        index._terms = {term: t for t, term in enumerate(index._vocabulary)}
        return index

    def lengths(self) -> np.ndarray:
        """How many distinct terms each document holds."""
        return np.bincount(self._ids, minlength=self.size)

    def df(self, term: str) -> int:
        t = self._terms.get(term)
        return 0 if t is None else int(self._start[t + 1] - self._start[t])

    def idf(self, term: str) -> float:
        df = self.df(term)
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    @property
    def vocabulary(self) -> list[str]:
        return list(self._terms)

    def __contains__(self, term: str) -> bool:
        return term in self._terms

    def matches(self, term: str) -> np.ndarray:
        """Ids of the entries that contain `term`, ascending."""
        t = self._terms.get(term)
        if t is None:
            return np.zeros(0, dtype=np.int32)
        ids: np.ndarray = self._ids[self._start[t] : self._start[t + 1]]
        return ids

    def contains(self, term: str, ids: np.ndarray) -> np.ndarray:
        """Which of the entries `ids` contain `term` (a boolean per id, by binary search)."""
        postings = self.matches(term)
        if not len(postings):
            return np.zeros(len(ids), dtype=bool)
        at = np.minimum(np.searchsorted(postings, ids), len(postings) - 1)
        found: np.ndarray = postings[at] == ids
        return found


class LexicalIndex:
    """Coverage: how much of a query's weight an entry contains, in one field or all.

    Each query group weighs the idf of its own word (a word no entry has weighs most: the
    corpus cannot match it). An entry earns a group's weight through the best term it
    contains, in proportion to that term's idf and weight, so a common translation such as
    "model" earns little of a rare word's weight.
    """

    def __init__(self, questions: Sequence[Sequence[str]], answers: Sequence[Sequence[str]]):
        self._setup(FieldIndex(questions), FieldIndex([list(q) + list(a) for q, a in zip(questions, answers)]))

    @classmethod
    def of_entries(
        cls, entries: Sequence["Entry"], alternates: Sequence[Sequence[str]] | None = None
    ) -> "LexicalIndex":
        """The entries' tokens, every language version of each. The framework's name belongs
        with the question: "slime OOM" asks about slime's OOM. `alternates[i]` are other
        wordings of entry i's question: their words count in the question field only, so
        that they say "this is the question" without making the entry cover more."""
        questions = [tokenize(" ".join([e.framework] + [v.question for v in e.versions()])) for e in entries]
        answers = [tokenize("\n".join(f"{v.section}\n{v.answer}" for v in e.versions())) for e in entries]
        index = cls.__new__(cls)
        asked = [q + tokenize(" ".join(more)) for q, more in zip(questions, alternates)] if alternates else questions
        index._setup(FieldIndex(asked), FieldIndex([list(q) + list(a) for q, a in zip(questions, answers)]))
        return index

    def save(self, path: Path) -> None:
        fields = {"question": self.question, "both": self.both}
        # Any: numpy's stubs take a str-keyed dict's values for `allow_pickle` as well as for arrays.
        arrays: dict[str, Any] = {f"{name}.{key}": a for name, f in fields.items() for key, a in f.to_arrays().items()}
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> "LexicalIndex":
        """A saved index; raises ValueError (or OSError) for a file that is not one."""
        try:
            with np.load(path, allow_pickle=False) as saved:
                arrays = {name: saved[name] for name in saved.files}
            field = {
                name: FieldIndex.from_arrays(
                    {k.partition(".")[2]: a for k, a in arrays.items() if k.startswith(name + ".")}
                )
                for name in ("question", "both")
            }
        except (KeyError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise ValueError(f"not a saved lexical index ({type(exc).__name__}: {exc})") from None
        if field["question"].size != field["both"].size:
            raise ValueError(f"{field['question'].size} questions but {field['both'].size} entries")
        return cls.from_fields(field["question"], field["both"])

    @classmethod
    def from_fields(cls, question: FieldIndex, both: FieldIndex) -> "LexicalIndex":
        """From prebuilt fields: the questions, and questions with answers."""
        index = cls.__new__(cls)
        index._setup(question, both)
        return index

    def _setup(self, question: FieldIndex, both: FieldIndex) -> None:
        self.question = question
        self.both = both
        self.size = both.size
        self._rare = math.log(1 + (self.size + 0.5) / 0.5)
        self._stats: dict[str, tuple[int, float]] = {}

    def _term(self, term: str) -> tuple[int, float]:
        """The term's document frequency (entries with it anywhere) and the idf it is weighed
        by, kept for the terms met most recently (a query's are mostly met before)."""
        found = self._stats.get(term)
        if found is None:
            if len(self._stats) >= TERMS_KEPT:
                self._stats.clear()
            df = self.both.df(term)
            found = self._stats[term] = (df, self.both.idf(term) if term in self.both else self._unseen(term))
        return found

    def _unseen(self, term: str) -> float:
        """The weight of a word no entry holds: the most a word can weigh (the question asks what the corpus lacks),
        but nothing for a single Chinese character (让, 报, 存: what jieba leaves of a phrase it has no word for, as
        a single Latin letter is dropped from a query)."""
        return 0.0 if len(term) == 1 and is_cjk(term) else self._rare

    def _idf(self, term: str) -> float:
        return self._term(term)[1]

    def _df(self, term: str) -> int:
        return self._term(term)[0]

    def weighed(self, query: QueryTerms | Weighed) -> Weighed:
        """The query's terms and what each earns: each group weighs the idf of its own word; a
        term of it earns an entry the smaller of that weight and its own idf times its weight.
        A search works this out once and hands it to each step (a `Weighed` is returned as is)."""
        if isinstance(query, Weighed):
            return query
        terms: list[str] = []
        credit: list[float] = []
        starts: list[int] = []
        total = 0.0
        for group in query.groups:
            weight = self._idf(group[0][0])
            total += weight
            starts.append(len(terms))
            for term, term_weight in group:
                terms.append(term)
                credit.append(min(weight, term_weight * self._idf(term)))
        return Weighed(terms, credit, starts, total)

    def holds(self, query: QueryTerms | Weighed, ids: np.ndarray, field: FieldIndex | None = None) -> np.ndarray:
        """Which of the query's terms (`Weighed.terms`, columns) each of the entries `ids` (rows) holds in `field`."""
        return self._holds(self.weighed(query), np.asarray(ids, dtype=np.int64), (field or self.both,))[0]

    def evidence(self, query: QueryTerms | Weighed, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the entries `ids`: which of the query's terms each holds anywhere (`holds`), and the
        share of the query each covers anywhere and in its question (`scores`), in one pass."""
        weighed = self.weighed(query)
        anywhere, question = self._holds(weighed, np.asarray(ids, dtype=np.int64), (self.both, self.question))
        return anywhere, self.share(weighed, anywhere), self.share(weighed, question)

    def _holds(self, weighed: Weighed, ids: np.ndarray, fields: Sequence[FieldIndex]) -> list[np.ndarray]:
        """`holds` for each of `fields`, the postings of all their terms looked up at once."""
        if len(ids) > 1 and not np.all(ids[1:] > ids[:-1]):  # merged lookups need ascending ids, each once
            unique, inverse = np.unique(ids, return_inverse=True)
            return [table[inverse] for table in self._holds(weighed, unique, fields)]
        terms = len(weighed.terms)
        table = np.zeros((len(ids), terms * len(fields)), dtype=bool)  # the fields' tables side by side
        if len(ids):
            merged: list[np.ndarray] = []
            columns: list[int] = []
            for f, field in enumerate(fields):
                for column, term in enumerate(weighed.terms, f * terms):
                    postings = field.matches(term)
                    if len(postings) > MERGE_POSTINGS * len(ids):
                        table[:, column] = field.contains(term, ids)
                    elif len(postings):
                        merged.append(postings)
                        columns.append(column)
            if merged:
                postings = np.concatenate(merged)
                column_of = np.repeat(columns, [len(p) for p in merged])
                rows = np.minimum(np.searchsorted(ids, postings), len(ids) - 1)
                hit = ids[rows] == postings
                table[rows[hit], column_of[hit]] = True
        return [table[:, f * terms : (f + 1) * terms] for f in range(len(fields))]

    def share(self, query: QueryTerms | Weighed, table: np.ndarray) -> np.ndarray:
        """The share of the query's weight each row of `holds`' table earns: per group the best
        of its terms held, summed over the groups in query order."""
        weighed = self.weighed(query)
        if not len(weighed.starts):
            return np.zeros(len(table), dtype=np.float32)
        earned = np.where(table, weighed.credit, np.float32(0))
        best = np.maximum.reduceat(earned, weighed.starts, axis=1)
        # Summed group after group, in float32, as scores have always been added up.
        earned = np.cumsum(best, axis=1, dtype=np.float32)[:, -1]
        return earned / weighed.total if weighed.total else earned

    def scores(self, query: QueryTerms | Weighed, ids: np.ndarray, field: FieldIndex | None = None) -> np.ndarray:
        """The share of the query's weight each of the entries `ids` contains (in `field`, or anywhere)."""
        weighed = self.weighed(query)
        return self.share(weighed, self.holds(weighed, ids, field))

    def coverage(self, query: QueryTerms, field: FieldIndex | None = None) -> np.ndarray:
        """`scores` for every entry, in id order."""
        return self.scores(query, np.arange(self.size), field)

    def top(self, query: QueryTerms | Weighed, n: int, allowed: Subset | None = None) -> np.ndarray:
        """Ids of (up to) `n` entries covering most of the query, among `allowed` if given.

        Reads the postings of the query's terms rarest first, within `POSTINGS_BUDGET` ids;
        entries are ranked by the coverage those terms give them. A small corpus fits the
        budget whole, so there every entry that contains a query term is considered.
        """
        weighed = self.weighed(query)
        terms = sorted({term for term in weighed.terms if self._df(term)}, key=self._df)
        postings: dict[str, np.ndarray] = {}
        read = 0
        for term in terms:
            read += self._df(term)
            if read > POSTINGS_BUDGET:
                break
            ids = self.both.matches(term)
            postings[term] = ids[allowed.contains(ids)] if allowed is not None else ids
        found = np.unique(np.concatenate(list(postings.values()))) if postings else np.zeros(0, dtype=np.int32)
        if not len(found):
            return np.zeros(0, dtype=np.int64)
        table = np.zeros((len(found), len(weighed.terms)), dtype=bool)
        held = [(column, postings[term]) for column, term in enumerate(weighed.terms) if term in postings]
        if held:  # every id read is in `found`: its row is where it sorts
            rows = np.searchsorted(found, np.concatenate([ids for _, ids in held]))
            table[rows, np.repeat([column for column, _ in held], [len(ids) for _, ids in held])] = True
        earned = self.share(weighed, table)
        if len(found) > n:
            best = np.argpartition(-earned, n - 1)[:n]
            found = found[np.sort(best)]
        return found.astype(np.int64)
