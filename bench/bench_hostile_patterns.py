"""Every regular expression of the packages on hostile text: how many there are, and the slowest; then the lexers
that highlight code blocks (server/rendering/highlight.py's `LEXERS`), each on hostile blocks at its largest size.

The patterns are counted from the code (tests/support/hostile_patterns.py reads kb/, ingest/, server/ and kbcli/);
each is timed on hostile texts (runs of each kind of character, delimiters never closed, alternations of both) of
the size its row in tests/quality/pattern_inventory.py gives (65,536 characters unless its surface cuts the text
first), as tests/quality/test_hostile_patterns.py does. Target: each under 0.1 s. Each is also analysed for
backtracking (tests/support/redos.py): the count of those found superlinear, with and without a reason in their row.
Then each call into a library that reads outside text (tests/quality/library_inventory.py), timed the same way.

    .venv/bin/python bench/bench_hostile_patterns.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main  # noqa: E402

sys.path.insert(0, str(ROOT))

from server.rendering.highlight import LEXERS  # noqa: E402
from tests.quality import library_inventory  # noqa: E402
from tests.quality.pattern_inventory import ROWS  # noqa: E402
from tests.support import library_calls  # noqa: E402
from tests.support.hostile_lexers import slowest as slowest_block  # noqa: E402
from tests.support.hostile_patterns import found, patterns_of, worst  # noqa: E402
from tests.support.redos import attacks  # noqa: E402

SECTION = "hostile patterns"
TARGET = 0.1  # seconds per pattern
LEXER_TARGET = 0.25  # seconds per hostile code block, highlighted a line at a time


def run(quick: bool = False) -> list[Row]:
    items = found()
    rows = {(r.file, r.key): r for r in ROWS}
    timings = []
    flagged, unexplained = set(), set()
    for item in items:
        row = rows[(item.file, item.key)]
        chars = row.chars // 4 if quick else row.chars
        for pattern in patterns_of(item, row.make):
            if attacks(pattern, row.how):
                flagged.add(f"{item.file}:{item.line}")
                if not row.redos:
                    unexplained.add(f"{item.file}:{item.line}")
            took, shape = worst(pattern, chars, 1.0, row.how, row.prepare)
            timings.append((took, f"{item.file}:{item.line}", shape))
    timings.sort(reverse=True)
    slowest = timings[0]
    over = [t for t in timings if t[0] >= TARGET]
    result = [
        Row(
            "patterns in the code (counted) / in the inventory",
            f"{len(items)} / {len(ROWS)}",
            "equal",
            len(items) == len(ROWS),
        ),
        Row(
            "slowest pattern on hostile text",
            f"{slowest[0] * 1000:.1f} ms ({slowest[1]}, {slowest[2]})",
            f"< {TARGET:g} s",
            slowest[0] < TARGET,
        ),
        Row("patterns over the target", str(len(over)), "0", not over),
        Row(
            "superlinear by analysis (regexploit): without a reason in its row / with one",
            f"{len(unexplained)} / {len(flagged - unexplained)}",
            "0 without",
            not unexplained,
        ),
    ]
    result += [Row(f"  {where} on {shape}", f"{took * 1000:.1f} ms") for took, where, shape in timings[:5]]
    lexers = sorted(((*slowest_block(name), name) for name in sorted(set(LEXERS.values()))), reverse=True)
    took, shape, name = lexers[0]
    result.append(
        Row(
            f"slowest highlighted language on a hostile block ({len(lexers)} languages)",
            f"{took * 1000:.1f} ms ({name}, {shape})",
            f"< {LEXER_TARGET:g} s",
            took < LEXER_TARGET,
        )
    )
    return result + libraries(quick)


def libraries(quick: bool) -> list[Row]:
    """Each library call over outside text on its hostile texts, as tests/quality/test_library_calls.py times it:
    its time at its surface's size (estimated linearly from the size it is timed at), against its budget."""
    calls = library_calls.found()
    rows = library_inventory.ROWS
    result = [Row("library calls in the code (counted) / in the inventory", f"{len(calls)} / {len(rows)}", "equal")]
    for row in rows:
        if row.run is None:
            continue
        at = (row.timed_at or row.chars) // (4 if quick else 1)
        budget = row.budget if row.budget is not None else library_inventory.MARKDOWN_BUDGET * row.chars / at
        took, shape = library_calls.worst(row.run, at, budget * at / row.chars)
        estimate = took * row.chars / at
        target = f"< {row.budget:g} s" if row.budget is not None else "KB_SYNC_TIMEOUT"
        result.append(
            Row(f"  {row.file} {row.call} at {row.chars:,}", f"{estimate:.2f} s ({shape})", target, estimate < budget)
        )
    return result


if __name__ == "__main__":
    main(run, __doc__)
