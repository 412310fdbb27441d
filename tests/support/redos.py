"""Superlinear regular expressions found by analysis, not by timing: regexploit's model of backtracking, read the
way Python's `re` runs a pattern.

regexploit (`regexploit.redos`) follows each repeat through the elements after it, intersecting the characters
each can match: two repeats (or more) that can match the same run, followed by something that can fail, make the
engine try every way of splitting the run between them. It reports a chain of three (cubic) or more. Two things it
leaves out are put back here:

- **the search.** `re.sub`, `re.finditer` and `re.search` try the pattern from every position, so a single repeat
  that can run to the end of the text and then fail (`\\s+x` on spaces, `<!--.*?-->` on `<!--` repeated) costs the
  square of the text. A pattern read that way ("finditer") is analysed behind an implicit repeat of any character
  worth two stars, and one only matched at the start ("match") behind one worth one: regexploit's threshold of
  three is then quadratic overall. A repeat whose every element before it can match one of its characters is
  also analysed from there: the search opens an attempt at each copy of that opening, and each attempt's repeat
  runs over all the copies after it, whatever characters they are made of (`_reopened`).
- **what stops a retry.** Python 3.11's possessive repeats (`a*+`) and atomic groups (`(?>...)`) never give back
  what they matched: they are parsed as repeats that add no star. A lookbehind on one character class, negative
  (`(?<!\\s)\\s+`) or positive (`(?<=\\s)`: its last character), a `^`, `\\A` or `\\b` before a repeat of characters it
  excludes lets a run be entered at its start only: the chain through it is cut there.

`attacks(pattern, how)` lists each chain found: its degree (2 quadratic, 3 cubic, ..., 11 and more exponential) and
a text that shows it (the repeated character 3,456 times, then one that makes the match fail). The analysis is
conservative (a lookahead other than one negated character is read as absent), so a finding may be one the code
bounds some other way: its row in the inventory then says why it holds.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, replace
from re import _constants as sre_constants  # type: ignore[attr-defined]
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # regexploit reads patterns with sre_parse
    from regexploit.ast.branch import Branch
    from regexploit.ast.char import Character
    from regexploit.ast.repeat import FiniteRepeat, InfiniteRepeat
    from regexploit.ast.sequence import Sequence
    from regexploit.ast.sre import SreOpParser
    from regexploit.redos import expand_branches, find_redos_in_branchless_sequence

# The implicit repeat in front of a pattern: how many stars the way it is run adds.
SEARCH_STARS = {"finditer": 2, "match": 1}
EXPONENTIAL = 11  # regexploit counts a repeat inside a repeat as ten stars


@dataclass(frozen=True)
class Attack:
    degree: int  # the text's length to this power: 2 quadratic, 3 cubic, EXPONENTIAL and more exponential; 0: not read
    text: str  # a Python expression of a text that shows it, e.g. "'<!--' + ' ' * 3456"

    def __str__(self) -> str:
        if not self.degree:
            return self.text
        name = "exponential" if self.degree >= EXPONENTIAL else {2: "quadratic", 3: "cubic"}.get(self.degree)
        return f"{name or f'degree {self.degree}'} on {self.text}"


@dataclass(frozen=True)
class _RunStart:
    """A zero-width test that the character before is not in `before` (`(?<!C)`, `^`, `\\A`, `\\b`)."""

    before: Character | None  # None: nothing may come before (`\A`, `^` without MULTILINE)
    starriness: int = 0
    minimum_length: int = 0

    def overall_character_class(self) -> Character:
        return Character.ANY()

    def exact_character_class(self) -> None:
        return None

    def maximal_character_class(self) -> Character:
        return Character.ANY()

    def example(self) -> str:
        return ""


def _unstarred(parsed: Any) -> Any:
    """`parsed` with no backtracking into it: its repeats add no star."""
    if isinstance(parsed, InfiniteRepeat):
        return replace(parsed, forced_starriness=0)
    if isinstance(parsed, Sequence):
        return Sequence([_unstarred(e) for e in parsed.elements])
    if isinstance(parsed, Branch):
        return Branch([_unstarred(b) for b in parsed.branches], parsed.optional)
    return parsed


class _Parser(SreOpParser):  # type: ignore[misc]
    def __init__(self, flags: int) -> None:
        super().__init__()
        self._multiline = bool(flags & re.MULTILINE)

    def from_POSSESSIVE_REPEAT(self, data: Any) -> Any:
        return _unstarred(self.from_MAX_REPEAT(data))

    def from_ATOMIC_GROUP(self, data: Any) -> Any:
        return _unstarred(self.sequence_or_singleton(data))

    def from_ASSERT_NOT(self, data: Any) -> Any:
        direction, ops = data
        if direction == -1 and len(ops) == 1 and ops[0][0] in (sre_constants.LITERAL, sre_constants.IN):
            excluded = self.parse_op(*ops[0])
            return _RunStart(excluded) if excluded is not None else None
        return super().from_ASSERT_NOT(data)

    def from_ASSERT(self, data: Any) -> Any:
        direction, ops = data
        if direction != -1:
            return None  # a lookahead: read as absent
        looked = self.sequence_or_singleton(ops)
        last = looked.elements[-1] if isinstance(looked, Sequence) else looked
        chars = last.overall_character_class() if isinstance(last, Character) else None
        return _RunStart(chars.negate()) if chars is not None and chars.negate() is not None else None

    def from_AT(self, at: Any) -> Any:
        newline = Character.LITERAL(ord("\n")).negate()
        if at is sre_constants.AT_BEGINNING_STRING or (at is sre_constants.AT_BEGINNING and not self._multiline):
            self.use_negative_lookahead()
            return _RunStart(None)
        if at is sre_constants.AT_BEGINNING:
            self.use_negative_lookahead()
            return _RunStart(newline)
        if at is sre_constants.AT_BOUNDARY:
            self.use_negative_lookahead()
            return _RunStart(self.from_IN([(sre_constants.CATEGORY, sre_constants.CATEGORY_WORD)]))
        return super().from_AT(at)


def _first(elem: Any) -> Character | None:
    """The characters `elem` can start with (None: not known)."""
    if isinstance(elem, Character):
        return elem
    if isinstance(elem, Sequence) and elem.elements and elem.elements[0].minimum_length:
        return _first(elem.elements[0])
    if isinstance(elem, InfiniteRepeat | FiniteRepeat):
        return _first(elem.repeat)
    if isinstance(elem, Branch):
        return _union([_first(b) for b in elem.branches])
    return None


def _union(starts: list[Character | None]) -> Character | None:
    union = starts[0] if starts else None
    for start in starts[1:]:
        union = union | start if union is not None and start is not None else None
    return union


def _starts(elements: list[Any]) -> Character | None:
    """The characters `elements` can start with: those of each up to the first that must match something."""
    starts = []
    for elem in elements:
        if isinstance(elem, _RunStart):
            continue
        starts.append(_first(elem))
        if elem.minimum_length:
            return _union(starts)
    return None


def _within(chars: Character | None, excluded: Character | None) -> bool:
    """Every character of `chars` is one `excluded` names (`excluded` None: any; `chars` None: not known)."""
    if excluded is None or excluded.is_any:
        return True
    if chars is None:
        return False
    outside = excluded.negate()
    return outside is None or (chars & outside) is None


def _pieces(seq: Sequence) -> list[tuple[Sequence, _RunStart | None]]:
    """`seq` cut at each run start where what follows can only start with characters the run start excludes: no
    chain of repeats crosses it. Each piece with the run start it begins at."""
    pieces: list[tuple[Sequence, _RunStart | None]] = []
    current: list[Any] = []
    cut: _RunStart | None = None
    elements = seq.elements
    for i, elem in enumerate(elements):
        if isinstance(elem, _RunStart):
            after = elements[i + 1 :]
            if after and (_within(_first(after[0]), elem.before) or _within(_starts(after), elem.before)):
                pieces.append((Sequence(current), cut))
                current, cut = [], elem
            continue
        current.append(elem)
    pieces.append((Sequence(current), cut))
    return pieces


def _keep(found: dict[str, Attack], attack: Attack) -> None:
    if attack.text not in found or found[attack.text].degree < attack.degree:
        found[attack.text] = attack


def _reopened(seq: Sequence) -> list[tuple[str, Sequence]]:
    """For each repeat of `seq` (behind its implicit repeat) whose every element before it can match one of its
    characters: the text those elements match, and the sequence from the repeat on behind the implicit repeat.

    Searched, such a pattern opens a new attempt at each copy of that text (`<!--.*?-->` at each `<!--`), and each
    attempt's repeat runs over all the copies after it: quadratic, whatever the copies are made of."""
    implicit, *elements = seq.elements
    found = []
    for i, elem in enumerate(elements):
        chars = elem.overall_character_class() if isinstance(elem, InfiniteRepeat) and elem.starriness else None
        if chars is None or i == 0:
            continue
        opener = ""
        for before in elements[:i]:
            if before.minimum_length == 0:
                continue
            common = before.overall_character_class() & chars if before.overall_character_class() else None
            if common is None:
                break
            opener += common.example() * before.minimum_length
        else:
            found.append((opener, Sequence([implicit, *elements[i:]])))
    return found


def _anchored(seq: Sequence) -> bool:
    """Tried at the start of the text only (`\\A`, or `^` without MULTILINE, first)."""
    starts = [e for e in seq.elements[1:] if isinstance(e, _RunStart) or e.minimum_length]
    return bool(starts) and isinstance(starts[0], _RunStart) and starts[0].before is None


def _implicit(stars: int) -> InfiniteRepeat:
    return InfiniteRepeat(Character.ANY(), 0, forced_starriness=stars)


def _behind(stars: int, piece: Sequence) -> Sequence:
    return Sequence([_implicit(stars), *piece.elements])


def attacks(pattern: re.Pattern[str], how: str = "finditer") -> list[Attack]:
    """Each superlinear chain of repeats in `pattern`, run as `how` says ("finditer": from every position, as
    `re.sub` and `re.search` do; "match": at the start only), worst first."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # sre_parse, which regexploit reads patterns with
        parsed = _Parser(pattern.flags).parse_sre(pattern.pattern, pattern.flags)
    try:
        return _attacks(parsed, how)
    except Exception as exc:  # noqa: BLE001 - a shape regexploit cannot follow is a finding, not a pass
        return [Attack(0, f"not analysed ({type(exc).__name__} in regexploit)")]


def _attacks(parsed: Any, how: str) -> list[Attack]:
    if parsed is None:
        return []
    elements = parsed.elements if isinstance(parsed, Sequence) else [parsed]
    found: dict[str, Attack] = {}
    for seq in expand_branches(Sequence([_implicit(SEARCH_STARS[how]), *elements])):
        pieces = _pieces(seq)
        # After a run start the pattern is tried once a run: a chain of two repeats there is still quadratic.
        for piece, cut in pieces:
            for redos in find_redos_in_branchless_sequence(piece if cut is None else _behind(1, piece)):
                _keep(found, Attack(redos.starriness - 1, redos.example()))
        # A run start cuts a run of one character, not the copies of a longer opener: each copy is tried again
        # unless what ends a copy is a character the run start excludes.
        for piece, cut in pieces if how == "finditer" and not _anchored(seq) else []:
            for opener, rest_of_it in _reopened(piece if cut is None else _behind(2, piece)):
                for redos in find_redos_in_branchless_sequence(rest_of_it):
                    if cut is not None and _within(redos.repeated_character, cut.before):
                        continue
                    unit = opener + redos.repeated_character.example()
                    _keep(found, Attack(redos.starriness - 1, f"{unit!r} * {3456 // len(unit)}"))
    return sorted(found.values(), key=lambda a: (-a.degree, len(a.text)))
