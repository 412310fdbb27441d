"""Gaps in the FAQ: unanswered questions grouped by meaning (a draft entry for each is `kb/insights/gap_drafts.py`).

Questions are compared by embedding similarity, two ways, and the higher counts: their
plain query vectors (the ones search computed, reused from the embedder's query cache),
and their vectors with the glossary's other-language terms added (as search does), so
"如何续训" and "how do I resume training" land close together. The embedder is
multilingual, but scores two questions in the same language about 0.04 higher than the
same pair across languages; `CROSS_LANGUAGE` adds that back to the plain similarity of a
Chinese and an English question, so "what's the weather in Beijing" meets "北京天气怎么样"
though no glossary term joins them. Grouping is greedy and deterministic: questions in
order of how often they were asked, each joining the group whose members it is on average
most similar to, when that similarity clears `THRESHOLD`, else starting a group of its own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..embedding import Embedder
from ..glossary import Glossary, load_glossary
from ..lru import LRU
from .records import QuestionCount

__all__ = ["Gap", "GapFinder", "THRESHOLD", "CROSS_LANGUAGE", "EXAMPLES"]

# Cosine similarity of e5 query vectors: paraphrases score 0.92 and above, different topics
# 0.83 to 0.89 (measured on FAQ-style questions). On the 167 labelled questions of
# tests/data (dev, holdout, real_tune), questions for different entries score at or above
# 0.91 in 0.7% of same-language pairs, and at or above 0.87 in 1.1% of Chinese-English
# pairs (plain vectors); questions for the same entry have medians 0.904 and 0.856.
THRESHOLD = 0.91
CROSS_LANGUAGE = 0.04
EXAMPLES = 5
CACHE_SIZE = 20_000  # question vectors kept between page loads


@dataclass(frozen=True)
class Gap:
    """One missing topic: the questions about it, most asked first."""

    label: str  # the most asked wording
    count: int  # questions in the group, repeats included
    questions: tuple[QuestionCount, ...]
    langs: tuple[str, ...]
    channels: tuple[str, ...]
    first_asked: float
    last_asked: float

    @property
    def examples(self) -> tuple[str, ...]:
        return tuple(q.text for q in self.questions[:EXAMPLES])


class GapFinder:
    """Groups questions by meaning; keeps the vectors of questions it has seen (embedding costs ~10 ms)."""

    def __init__(self, embedder: Embedder, glossary: Glossary | None = None, threshold: float = THRESHOLD):
        self.embedder = embedder
        self.glossary = glossary if glossary is not None else load_glossary()
        self.threshold = threshold
        self._vectors: LRU[str, tuple[np.ndarray, np.ndarray]] = LRU(CACHE_SIZE)  # text -> (plain, glossed)
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(plain, glossed) normalised vectors of the texts; a plain vector search made is reused,
        and only texts not seen before are embedded."""
        with self._lock:  # page loads are rare; one at a time is fine
            known = {t: v for t in texts if (v := self._vectors.get(t)) is not None}
            missing = [t for t in dict.fromkeys(texts) if t not in known]
            if missing:
                cached = getattr(self.embedder, "cache", None)
                plain = [cached.get(t) if cached is not None else None for t in missing]
                todo = [t for t, v in zip(missing, plain) if v is None]
                fresh = iter(self.embedder.embed_queries(todo + [self.glossary.gloss(t) for t in missing]))
                vectors = [v if v is not None else next(fresh) for v in plain]
                for text, pair in zip(missing, zip(vectors, fresh), strict=True):
                    known[text] = pair
                    self._vectors.put(text, pair)
            found = [known[t] for t in texts]
            return np.stack([p for p, _ in found]), np.stack([g for _, g in found])

    def similarities(self, texts: Sequence[str], langs: Sequence[str]) -> np.ndarray:
        """Every pair's similarity: the higher of the glossed and the plain one, the plain one
        raised by `CROSS_LANGUAGE` between a Chinese and an English question."""
        plain, glossed = self.vectors([t.strip() for t in texts])
        lang = np.array(langs)
        across = (lang[:, None] != lang[None, :]) * CROSS_LANGUAGE
        similarity: np.ndarray = np.maximum(glossed @ glossed.T, plain @ plain.T + across)
        return similarity

    def group(self, questions: Sequence[QuestionCount]) -> list[Gap]:
        """Groups of questions, biggest first (then the most recently asked)."""
        if not questions:
            return []
        ordered = sorted(questions, key=lambda q: (-q.count, -q.last_asked, q.text))
        similar = self.similarities([q.text for q in ordered], [q.lang for q in ordered])
        members: list[list[int]] = []
        for i in range(len(ordered)):
            best, best_score = -1, self.threshold
            for g, group in enumerate(members):
                score = float(similar[i, group].mean())  # mean similarity to the members
                if score >= best_score:
                    best, best_score = g, score
            if best < 0:
                members.append([i])
            else:
                members[best].append(i)
        gaps = [_gap([ordered[i] for i in group]) for group in members]
        return sorted(gaps, key=lambda g: (-g.count, -g.last_asked, g.label))


def _gap(questions: list[QuestionCount]) -> Gap:
    return Gap(
        label=questions[0].text.strip(),
        count=sum(q.count for q in questions),
        questions=tuple(questions),
        langs=tuple(sorted({q.lang for q in questions})),
        channels=tuple(sorted({c for q in questions for c in q.channels})),
        first_asked=min(q.first_asked for q in questions),
        last_asked=max(q.last_asked for q in questions),
    )
