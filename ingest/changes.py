"""What changed in one source between two builds: entries new, changed, removed, and reworded.

An entry's id is a hash of its source and question, so an entry whose answer changed keeps its
id (changed), and one whose question changed gets a new one. Of the entries only the old build
has and those only the new one has, a pair is the same entry reworded when the evidence says
so: the answer is nearly the same (or alike, and the question alike too, or the entry sits
between the same neighbours). The rest are removed and new. Each pairing is made best first,
so no entry is claimed twice.

The work is bounded whatever upstream sends: answers are weighed by their first `CHARS`
characters (difflib's time grows with the square of a text's length, and worse for a text of
one repeated character); past `PAIRS` pairs of an old and a new entry to weigh, each old entry
is weighed against the new ones nearest its place in the file (a rewording keeps its place,
give or take the entries added and removed around it); and weighing stops after `SECONDS`,
the old entries not yet weighed reported removed (and counted in `Changes.unweighed`).
"""

from __future__ import annotations

import bisect
import re
import time
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Callable, Sequence

from kb.entries import Entry

__all__ = ["Changes", "Reworded", "compare", "ALIKE", "NEARLY_SAME", "plain"]

NEARLY_SAME = 0.8  # answers this alike are one entry's, whatever its question became
ALIKE = 0.5  # answers this alike are one entry's when its question or its place agrees
_PINNED = re.compile(r"/(blob|tree|raw)/[^/\s)>\"']+/")
PAIRS = 10_000  # pairs of an old and a new entry weighed at most (see the module's docstring)
CHARS = 2_000  # characters of each answer weighed
SECONDS = 30.0  # the longest one source's entries are weighed


@dataclass(frozen=True)
class Reworded:
    """An entry whose question changed: its old and new version, and why they are taken for one entry."""

    old: Entry
    new: Entry
    answer: float  # how alike the two answers are, 0 to 1
    question: float  # how alike the two questions are
    neighbours: bool  # whether it sits between the same entries in both
    positions: tuple[int, int]  # its place (1-based) among the source's entries, before and after

    @property
    def evidence(self) -> str:
        place = "between the same neighbours" if self.neighbours else "between other neighbours"
        before, after = self.positions
        return f"answer {self.answer:.2f} alike, question {self.question:.2f} alike, {place}, entry {before} -> {after}"


@dataclass(frozen=True)
class Changes:
    """One source's entries that differ between the served build and the new one."""

    source: str
    new: tuple[Entry, ...] = ()
    changed: tuple[tuple[Entry, Entry], ...] = ()  # (old, new): the same question, another answer
    removed: tuple[Entry, ...] = ()
    reworded: tuple[Reworded, ...] = ()
    unweighed: int = 0  # removed entries not weighed against the new ones: SECONDS ran out

    def __bool__(self) -> bool:
        return bool(self.new or self.changed or self.removed or self.reworded)

    @property
    def moved(self) -> dict[str, str]:
        """Old id -> new id of the reworded entries."""
        return {r.old.id: r.new.id for r in self.reworded}


def plain(text: str) -> str:
    """`text` with the commit of every pinned link left out: a move of the pin is no change of the answer."""
    return _PINNED.sub(r"/\1/*/", text)


def _texts(entry: Entry) -> list[tuple[str, str]]:
    return [(v.question, plain(v.answer)) for v in entry.versions()]


def _alike(a: str, b: str) -> float:
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio() if matcher.real_quick_ratio() >= ALIKE / 2 else 0.0


def _alike_answers(a: str, b: str) -> float:
    """How alike two answers are (difflib's ratio); 0 below ALIKE, found by its cheap upper bounds first."""
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < ALIKE or matcher.quick_ratio() < ALIKE:
        return 0.0
    return matcher.ratio()


def _neighbours(entries: Sequence[Entry], kept: set[str]) -> list[tuple[str, str]]:
    """For each entry, the nearest entries before and after it that both builds have ("" at either end)."""
    before, last = [], ""
    for e in entries:
        before.append(last)
        last = e.id if e.id in kept else last
    after, last = [], ""
    for e in reversed(entries):
        after.append(last)
        last = e.id if e.id in kept else last
    return list(zip(before, reversed(after)))


def _nearest(came: list[int], place: float, width: int) -> list[int]:
    """The `width` positions of `came` (sorted) nearest `place`: all of them when there are no more."""
    if len(came) <= width:
        return came
    at = bisect.bisect_left(came, place)
    start = min(max(0, at - width // 2), len(came) - width)
    return came[start : start + width]


def compare(
    source: str,
    old: Sequence[Entry],
    new: Sequence[Entry],
    progress: Callable[[int, int], None] | None = None,
    seconds: float = SECONDS,
) -> Changes:
    """The changes from `old` to `new`, one source's entries in document order in each build; `progress` is told
    (done, total) of the old entries weighed, when there are many pairs to weigh."""
    old_ids, new_ids = {e.id for e in old}, {e.id for e in new}
    kept = old_ids & new_ids
    by_id = {e.id: e for e in old}
    changed = tuple((by_id[e.id], e) for e in new if e.id in kept and _texts(by_id[e.id]) != _texts(e))
    gone = [i for i, e in enumerate(old) if e.id not in kept]
    came = [j for j, e in enumerate(new) if e.id not in kept]
    candidates = []
    answers_old = {i: plain(old[i].answer)[:CHARS] for i in gone}
    answers_new = {j: plain(new[j].answer)[:CHARS] for j in came}
    deadline, unweighed = time.monotonic() + seconds, 0
    width = max(1, PAIRS // max(len(gone), 1))
    around_old, around_new = _neighbours(old, kept), _neighbours(new, kept)
    report = progress if progress is not None and len(gone) * len(came) > 10_000 else None
    for done, i in enumerate(gone):
        if report is not None and done % 100 == 0:
            report(done, len(gone))
        if unweighed:
            break
        for j in _nearest(came, i / max(len(old), 1) * len(new), width):
            if time.monotonic() > deadline:
                unweighed = len(gone) - done  # this one's pairs weighed so far stay candidates
                break
            answer = _alike_answers(answers_old[i], answers_new[j])
            if answer < ALIKE:
                continue
            question = _alike(old[i].question, new[j].question)
            same_place = around_old[i] == around_new[j]
            if answer >= NEARLY_SAME or question >= ALIKE or same_place:
                closeness = 1 - abs(i / max(len(old), 1) - j / max(len(new), 1))
                score = (answer, same_place, question, closeness)
                candidates.append((score, i, j, Reworded(old[i], new[j], answer, question, same_place, (i + 1, j + 1))))
    if report is not None:
        report(len(gone), len(gone))
    candidates.sort(key=lambda c: c[0], reverse=True)
    reworded, paired_old, paired_new = [], set(), set()
    for _, i, j, pair in candidates:
        if i not in paired_old and j not in paired_new:
            paired_old.add(i)
            paired_new.add(j)
            reworded.append(pair)
    reworded.sort(key=lambda r: r.positions[1])
    return Changes(
        source,
        new=tuple(new[j] for j in came if j not in paired_new),
        changed=changed,
        removed=tuple(old[i] for i in gone if i not in paired_old),
        reworded=tuple(reworded),
        unweighed=unweighed,
    )
