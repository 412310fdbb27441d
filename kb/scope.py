"""Entries that answer only the questions naming what they are for.

A source may give a scope in its manifest: words, one of which a question must name for the
source's entries to answer it. ROLL's Ascend NPU FAQ has `scope = ["NPU", "Ascend", "昇腾",
"CANN", "HCCL"]`: its entries speak of the same errors as the others ("out of memory with
vLLM", "vLLM inference is slow on NPU"), and without a scope they would answer questions
asked about a GPU. A question that names none of the words is searched as if those entries
were not in the corpus; one that names any of them meets them with every other entry.

A word is named as a whole word, in any case, and in the plural: "NPU", "NPUs", "torch_npu"
and "npu-smi" name "NPU"; "cannot" does not name "CANN". A Chinese word is named wherever it
appears in the question.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .entries import Entry

__all__ = ["Scopes", "names"]


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and text[at].isascii() and text[at].isalnum()


def names(text: str, word: str) -> bool:
    """Whether `text` names `word`: anywhere for a word with a non-ASCII letter, else as a whole word
    (letters and digits around it end it; `_` and `-` do not), in any case, with an optional plural "s"."""
    text, word = text.lower(), word.lower()
    if not word.isascii():
        return word in text
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if text[end : end + 1] == "s":
            end += 1 if not _word_char(text, end + 1) else 0
        if not _word_char(text, at - 1) and not _word_char(text, end):
            return True
        at = text.find(word, at + 1)
    return False


class Scopes:
    """The corpus's scopes, and which entries each question leaves out by them."""

    def __init__(self, entries: Sequence[Entry]):
        distinct = list(dict.fromkeys(e.scope for e in entries if e.scope))
        self.scopes: list[tuple[str, ...]] = distinct
        code = {scope: i + 1 for i, scope in enumerate(distinct)}
        # Each entry's scope as a small integer: 0 for an entry every question may meet.
        self.codes = np.array([code.get(e.scope, 0) for e in entries], dtype=np.int32)

    def __bool__(self) -> bool:
        return bool(self.scopes)

    def unnamed(self, text: str) -> np.ndarray:
        """The codes of the scopes `text` names none of the words of."""
        return np.array(
            [i + 1 for i, scope in enumerate(self.scopes) if not any(names(text, word) for word in scope)],
            dtype=np.int32,
        )

    def kept(self, ids: np.ndarray, text: str, keep: int | None = None) -> np.ndarray:
        """`ids` without the entries of a scope `text` does not name, save `keep` (an entry asked in its own
        words). When every one of `ids` is of such a scope (a filter chose them), all are kept."""
        if not self.scopes or not len(ids):
            return ids
        unnamed = self.unnamed(text)
        if not len(unnamed):
            return ids
        out = np.isin(self.codes[ids], unnamed)
        if keep is not None:
            out &= ids != keep
        return ids if out.all() else ids[~out]

    def beside(self, position: int, ids: np.ndarray) -> np.ndarray:
        """`ids` that may be shown beside the entry at `position` (its related entries): those of no scope,
        and those of its own."""
        if not self.scopes:
            return ids
        codes = self.codes[ids]
        kept: np.ndarray = ids[(codes == 0) | (codes == self.codes[position])]
        return kept
