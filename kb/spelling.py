"""Near spellings: query words the corpus lacks, matched to corpus words one edit away.

`xformers` finds `xformer`, `falsh` finds `flash` (a swap of two letters counts as one
edit). Candidates come from a table of single-letter deletions (the SymSpell idea), so a
look-up costs a few dictionary probes however large the vocabulary is.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

__all__ = ["Spelling", "edit_distance"]

MIN_LENGTH = 5  # shorter words have too many neighbours one edit away
KEPT = 16_384  # words whose near spellings are kept (a search asks for each of its words')


def _spellable(word: str) -> bool:
    """Words and identifiers (`flash_attn`), not numbers, versions or paths."""
    return word.isascii() and word.replace("_", "").isalpha()


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


class Spelling:
    """The corpus's ASCII words, indexed by their deletions."""

    def __init__(self, words: Iterable[str]):
        self.words = {w for w in words if _spellable(w) and len(w) >= MIN_LENGTH - 1}
        self._by_deletion: dict[str, set[str]] = defaultdict(set)
        for word in self.words:
            self._by_deletion[word].add(word)
            for variant in _deletions(word):
                self._by_deletion[variant].add(word)
        self._near: dict[str, list[str]] = {}

    def near(self, word: str) -> list[str]:
        """Corpus words one edit from `word` (none when `word` is itself a corpus word)."""
        if len(word) < MIN_LENGTH or not _spellable(word):
            return []
        found = self._near.get(word)
        if found is None:
            if len(self._near) >= KEPT:
                self._near.clear()
            found = self._near[word] = self._find(word)
        return list(found)

    def _find(self, word: str) -> list[str]:
        candidates: set[str] = set(self._by_deletion.get(word, ()))
        for variant in _deletions(word):
            candidates |= self._by_deletion.get(variant, set())
        return sorted(c for c in candidates if c != word and edit_distance(word, c) == 1)
