"""Highlighting outside text is bounded: every language Pygments knows but the few of `LEXERS` is plain text, and
each of those few, read a line at a time, highlights the largest hostile block in well under a second. The figures
are bench/bench_hostile_patterns.py's."""

from __future__ import annotations

import pytest
from pygments.lexers import get_all_lexers

from server.rendering.highlight import LEXERS, MAX_CODE, highlight_code, language
from tests.support.hostile_lexers import slowest

BOUND = 2.0  # seconds, generous against a noisy machine: the target is 0.25 s
ALIASES = sorted({alias for _, aliases, _, _ in get_all_lexers() for alias in aliases})


def test_every_other_language_pygments_knows_is_plain_text() -> None:
    """A fence naming any of Pygments' ~600 languages never reaches its lexer unless the language is in `LEXERS`:
    `mcschema`'s loops forever on `<!--`, `csharp`'s takes 35 s on 20,000 characters."""
    assert len(ALIASES) > 500
    highlighted = {alias for alias in ALIASES if language(alias, "<!--\n")}
    assert highlighted <= set(LEXERS)
    for alias in ("mcschema", "csharp", "cpp", "autohotkey"):
        assert highlight_code("<!--\n", alias) == "&lt;!--\n"


def test_a_block_over_the_limit_is_plain_text() -> None:
    code = "export A=1\n" * (MAX_CODE // 11 + 1)
    assert "<span" not in highlight_code(code, "bash")
    assert '<span class="tok-nb">export</span>' in highlight_code(code[:MAX_CODE], "bash")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(LEXERS.values())))
def test_each_highlighted_language_is_fast_on_hostile_blocks(name: str) -> None:
    took, shape = slowest(name)
    assert took < BOUND, f"{name}: {took:.2f} s on {shape}"
