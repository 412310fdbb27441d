"""Every call into a third-party library that reads text is counted from the code (tests/support/library_calls.py)
and has its row in tests/quality/library_inventory.py; each that reads outside text is timed on hostile text of the
largest size its surface accepts, and fails past its budget. The figures are bench/bench_hostile_patterns.py's."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.quality.library_inventory import MARKDOWN_BUDGET, ROWS, Row
from tests.support.library_calls import found, worst

FOUND = found()


def test_the_inventory_has_a_row_for_every_library_call_in_the_code() -> None:
    in_code = Counter((c.file, c.call) for c in FOUND)
    listed = Counter((r.file, r.call) for r in ROWS)
    assert {"without a row": sorted(in_code - listed), "rows without a call": sorted(listed - in_code)} == {
        "without a row": [],
        "rows without a call": [],
    }


TIMED = [r for r in ROWS if r.run is not None]


@pytest.mark.slow
@pytest.mark.parametrize("row", TIMED, ids=[f"{r.file}:{r.call}:{n}" for n, r in enumerate(TIMED)])
def test_no_library_call_over_outside_text_passes_its_budget(row: Row) -> None:
    assert row.run is not None
    at = row.timed_at or row.chars
    if row.budget is None:  # an upstream file: the sync's deadline bounds it; linear, and under a budget at `at`
        took, shape = worst(row.run, at, MARKDOWN_BUDGET)
        assert took < MARKDOWN_BUDGET, f"{row.file} {row.call}: {took:.2f} s on {shape} at {at:,} characters"
        return
    took, shape = worst(row.run, at, row.budget * at / row.chars)
    estimate = took * row.chars / at
    assert estimate < row.budget, f"{row.file} {row.call}: {estimate:.2f} s on {shape} at {row.chars:,} characters"
