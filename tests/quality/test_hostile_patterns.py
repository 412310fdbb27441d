"""Every regular expression of the packages is counted from the code, analysed for backtracking (regexploit's model,
read as Python runs a pattern: tests/support/redos.py) and timed on hostile text of the largest size its surface
accepts (runs of each kind of character, delimiters never closed, alternations of both): a pattern without its row
in tests/quality/pattern_inventory.py, one the analysis finds superlinear without its row saying why it holds, or
one that backtracks on the hostile texts, fails here. The figures are bench/bench_hostile_patterns.py's."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.quality.pattern_inventory import ROWS, Row
from tests.support.hostile_patterns import Found, found, patterns_of, worst
from tests.support.redos import attacks

BOUND = 1.0  # seconds, generous against a noisy machine: the target is 0.1 s, and each takes milliseconds
FOUND = found()


def test_the_inventory_has_a_row_for_every_pattern_in_the_code() -> None:
    in_code = Counter((f.file, f.key) for f in FOUND)
    listed = Counter((r.file, r.key) for r in ROWS)
    assert {"without a row": sorted(in_code - listed), "rows without a pattern": sorted(listed - in_code)} == {
        "without a row": [],
        "rows without a pattern": [],
    }
    assert len(FOUND) >= 100


def _row(item: Found) -> Row:
    return next(r for r in ROWS if (r.file, r.key) == (item.file, item.key))


@pytest.mark.slow
@pytest.mark.parametrize("item", FOUND, ids=[f"{f.file}:{f.line}" for f in FOUND])
def test_no_pattern_backtracks_on_hostile_text(item: Found) -> None:
    row = _row(item)
    slow = {}
    for pattern in patterns_of(item, row.make):
        took, shape = worst(pattern, row.chars, BOUND, row.how, row.prepare)
        if took >= BOUND:
            slow[pattern.pattern[:80]] = (shape, round(took, 2))
    assert slow == {}


@pytest.mark.parametrize("item", FOUND, ids=[f"{f.file}:{f.line}" for f in FOUND])
def test_no_pattern_is_superlinear_by_analysis(item: Found) -> None:
    row = _row(item)
    findings = {}
    for pattern in patterns_of(item, row.make):
        if found_here := attacks(pattern, row.how):
            findings[pattern.pattern[:80]] = [str(a) for a in found_here[:2]]
    where = f"{item.file}:{item.line}"
    if row.redos:
        assert findings, f"{where}: the analysis finds nothing superlinear now: its row's `redos` can go"
    else:
        assert findings == {}, (
            f"{where}: superlinear ({findings}): rewrite it, or say in its row's `redos` why it holds"
        )
