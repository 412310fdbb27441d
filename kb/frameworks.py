"""The frameworks a question names: each entry's framework as the word a query names it by, and which of the
entries a search scores belong to a framework the query names (a signal of the ranking, `Features.named`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .entries import Entry
from .lexical import QueryTerms
from .text import tokenize

__all__ = ["Frameworks"]


class Frameworks:
    """Each entry's framework, coded as a small integer by the word a query names it by."""

    def __init__(self, entries: Sequence[Entry]):
        words = {name: (tokenize(name) or [""])[0] for name in sorted({e.framework for e in entries})}
        self._code = {word: code for code, word in enumerate(dict.fromkeys(words.values()))}
        self._name = {self._code[word]: name for name, word in words.items()}
        self._of_entry = np.array([self._code[words[e.framework]] for e in entries], dtype=np.int32)

    def named(self, terms: QueryTerms, ids: np.ndarray) -> tuple[np.ndarray, str | None]:
        """Whether each entry of `ids` belongs to a framework the query's words name, and the first framework named
        (None: none)."""
        codes = [self._code.get(group[0][0], -1) for group in terms.groups]
        named = {code for code in codes if code >= 0}
        of_named = np.isin(self._of_entry[ids], list(named)) if named else np.zeros(len(ids), dtype=bool)
        return of_named, next((self._name[code] for code in codes if code >= 0), None)
