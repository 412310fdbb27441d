"""The hostile code blocks each highlighted language is timed on (`server.rendering.highlight.LEXERS`).

A lexer sees a block one line at a time, so two kinds of shape: the hostile texts of every pattern
(tests/support/hostile_patterns.py: runs of each kind of character, delimiters never closed, alternations), and
the same units as lines of the longest length highlighted, repeated to the block's limit.
"""

from __future__ import annotations

import time
from functools import lru_cache

from server.rendering.highlight import MAX_CODE, MAX_LINE, highlight_code
from tests.support.hostile_patterns import ALTERNATIONS, OPENED, RUNS, hostile_texts


@lru_cache(maxsize=1)
def hostile_blocks() -> dict[str, str]:
    """Each hostile block, at most `MAX_CODE` characters, by name."""
    blocks = {shape: text[:MAX_CODE] for shape, text in hostile_texts(MAX_CODE).items()}
    for unit in [*RUNS, *OPENED, *ALTERNATIONS]:
        line = (unit * (MAX_LINE // len(unit) + 1))[: MAX_LINE - 1].replace("\n", " ") + "\n"
        blocks[f"lines of {unit!r}"] = (line * (MAX_CODE // len(line) + 1))[:MAX_CODE]
    return blocks


def slowest(language: str) -> tuple[float, str]:
    """The longest `highlight_code` takes on a hostile block fenced as `language`, and that block's name."""
    worst = (0.0, "")
    for shape, block in hostile_blocks().items():
        started = time.perf_counter()
        highlight_code(block, language)
        worst = max(worst, (time.perf_counter() - started, shape))
    return worst
