"""Search filters (tags, source, language) as precomputed sets of entry ids.

Each tag, source and language maps to the sorted ids of its entries, built once when the
index is loaded; a filtered search combines a few of these sets and never looks at the
entries one by one. A set holding a large share of the corpus also keeps a bitmap (one bit
per entry, the layout FAISS's `IDSelectorBitmap` reads), so two broad filters combine by
a bitwise AND of N/8 bytes instead of merging long id lists.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np

from .entries import Entry
from .errors import QueryError, shown

__all__ = ["Subset", "Filters"]

# A set keeps a bitmap when it holds more than this share of the corpus: past it the bitmap
# (N/8 bytes) is smaller than the ids themselves (4 bytes each).
BITMAP_SHARE = 1 / 32

_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _bitmap_of(ids: np.ndarray, size: int) -> np.ndarray:
    """Bit i of byte i >> 3 set for each id (little-endian bit order, as FAISS expects)."""
    mask = np.zeros(size, dtype=bool)
    mask[ids] = True
    return np.packbits(mask, bitorder="little")


class Subset:
    """Some of the corpus's entries: sorted ids, a bitmap, or both."""

    def __init__(self, size: int, ids: np.ndarray | None = None, bitmap: np.ndarray | None = None):
        if ids is None and bitmap is None:
            raise ValueError("a subset needs its ids or its bitmap")
        self.size = size  # entries in the corpus
        self._ids = ids
        self._bitmap = bitmap
        self.count = len(ids) if ids is not None else int(_POPCOUNT[bitmap].sum())

    def ids(self) -> np.ndarray:
        """The entries' ids, ascending (int64, as FAISS labels are)."""
        if self._ids is None:
            assert self._bitmap is not None
            self._ids = np.flatnonzero(np.unpackbits(self._bitmap, count=self.size, bitorder="little"))
        return self._ids.astype(np.int64, copy=False)

    def bitmap(self) -> np.ndarray:
        if self._bitmap is None:
            assert self._ids is not None
            self._bitmap = _bitmap_of(self._ids, self.size)
        return self._bitmap

    def contains(self, ids: np.ndarray) -> np.ndarray:
        """Which of `ids` are in the subset (a boolean per id)."""
        ids = np.asarray(ids, dtype=np.int64)
        if self._bitmap is not None:
            in_bitmap: np.ndarray = ((self._bitmap[ids >> 3] >> (ids & 7).astype(np.uint8)) & 1).astype(bool)
            return in_bitmap
        assert self._ids is not None
        if not len(self._ids):
            return np.zeros(len(ids), dtype=bool)
        at = np.minimum(np.searchsorted(self._ids, ids), len(self._ids) - 1)
        in_subset: np.ndarray = self._ids[at] == ids
        return in_subset

    def __and__(self, other: "Subset") -> "Subset":
        if self._ids is None and other._ids is None:
            assert self._bitmap is not None and other._bitmap is not None
            return Subset(self.size, bitmap=np.bitwise_and(self._bitmap, other._bitmap))
        small, large = sorted((self, other), key=lambda s: s.count)
        ids = small.ids()
        return Subset(self.size, ids=ids[large.contains(ids)])


class Filters:
    """The entries of each tag, source and language, looked up by value."""

    def __init__(self, entries: Sequence[Entry]):
        self.size = len(entries)
        by_value: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, e in enumerate(entries):
            for tag in e.tags:
                by_value[("tag", tag)].append(i)
            by_value[("source", e.source)].append(i)
            for lang in e.languages:
                by_value[("lang", lang)].append(i)
        self._sets = {key: self._subset(ids) for key, ids in by_value.items()}
        self._empty = Subset(self.size, ids=np.zeros(0, dtype=np.int32))

    def _subset(self, ids: list[int]) -> Subset:
        array = np.array(sorted(set(ids)), dtype=np.int32)
        bitmap = _bitmap_of(array, self.size) if len(array) > self.size * BITMAP_SHARE else None
        return Subset(self.size, ids=array, bitmap=bitmap)

    def subset(self, tags: Sequence[str] = (), source: str | None = None, lang: str | None = None) -> Subset | None:
        """The entries with all of `tags`, from `source`, with a version in `lang`; None when nothing filters."""
        keys = [("tag", t) for t in tags]
        keys += [("source", source)] if source else []
        keys += [("lang", lang)] if lang else []
        if not keys:
            return None
        parts = sorted((self._sets.get(key, self._empty) for key in keys), key=lambda s: s.count)
        result = parts[0]
        for part in parts[1:]:
            result = result & part
        return result

    def check(self, tags: Sequence[str] = (), source: str | None = None) -> None:
        """Raise QueryError naming the filter at fault, and the values it may take, for a tag or a source no entry
        has."""
        for field, values in (("tag", tags), ("source", [source] if source is not None else [])):
            known = sorted(value for kind, value in self._sets if kind == field)
            for value in values:
                if value not in known:
                    raise QueryError(field, f"unknown {field} {shown(value)}; known: {', '.join(known)}")
