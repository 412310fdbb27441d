"""Verbatim questions: a question asked in an entry's own words, its question in any language it
has or one of its learned alternates, told apart from others by its text alone.

Asked as it stands (case, punctuation, spaces and full-width forms aside), such a question is
the entry's own: the search puts that entry first and is certain of it (`CERTAIN`), whatever
the confidence model makes of its evidence. A text that is also a question the FAQ is known not
to cover, or the question of two entries, is no one entry's own, and is left to the model.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable, Sequence

from .entries import Entry
from .learning.overlay import NOT_COVERED, Learned

__all__ = ["CERTAIN", "Verbatim", "verbatim_key"]

# The confidence of an entry asked in its own words: it answers at every operating point.
CERTAIN = 1.0
# A question longer than this is no entry's title: it is not looked up (no work on a pasted log).
MAX_CHARS = 500


def verbatim_key(text: str, chars: int = MAX_CHARS * 2) -> str:
    """`text` as verbatim questions are compared: full-width forms made half-width (NFKC), case
    folded, every punctuation mark, symbol and space taken out ("How do I resume training?" and
    "how do i resume training" are one key), of its first `chars` characters. "" for a text of none of the rest."""
    folded = unicodedata.normalize("NFKC", text[:chars]).casefold()
    return "".join(c for c in folded if unicodedata.category(c)[0] not in "PSZC")


class Verbatim:
    """Each entry's own wordings (its questions, its learned alternates), by `verbatim_key`."""

    def __init__(self, entries: Sequence[Entry], learned: Learned):
        owners: dict[str, set[int]] = {}
        for position, entry in enumerate(entries):
            for version in entry.versions():
                self._add(owners, version.question, position)
        for question, owner in zip(learned.questions, learned.owners):
            self._add(owners, question.question, int(owner))
        # One entry's own only: a text two entries (or an entry and a not-covered question) share is left out.
        self._owner = {key: next(iter(found)) for key, found in owners.items() if len(found) == 1}
        self._owner = {key: owner for key, owner in self._owner.items() if owner != NOT_COVERED}

    @staticmethod
    def _add(owners: dict[str, set[int]], text: str, owner: int) -> None:
        key = verbatim_key(text)
        if key:
            owners.setdefault(key, set()).add(owner)

    def owner(self, texts: Iterable[str]) -> int | None:
        """The position of the entry whose own question one of `texts` is (the first that is one), else None."""
        for text in texts:
            if len(text) > MAX_CHARS:
                continue
            found = self._owner.get(verbatim_key(text))
            if found is not None:
                return found
        return None

    def __len__(self) -> int:
        return len(self._owner)
