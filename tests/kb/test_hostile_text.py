"""Every reduction of pasted text is linear in it: the worst shapes found, at 45 and 100 KB, each reduce in
well under a second (a run of dots in a 45 KB trace had taken 35 s, in noise stripping alone)."""

from __future__ import annotations

import re
import time
from typing import Callable

import pytest

from kb import noise, stacktrace, text
from kb.search import searched_text
from kb.stacktrace import fits, looks_like_trace, reduce_trace
from kb.text import checked_query, tokenize
from tests.support.hostile_text import hostile_texts

pytestmark = pytest.mark.slow

BOUND = 2.0  # seconds: generous; the reductions take tens of milliseconds at 100 KB

REDUCTIONS: dict[str, Callable[[str], object]] = {
    "strip_noise": noise.strip_noise,
    "looks_like_trace": looks_like_trace,
    "reduce_trace": reduce_trace,
    "fits": lambda t: fits(t, 2000),
    "tokenize": tokenize,
    "searched_text": searched_text,
}


def timed(reduce: Callable[[str], object], pasted: str) -> float:
    started = time.perf_counter()
    reduce(pasted)
    return time.perf_counter() - started


@pytest.mark.parametrize("chars", [45_000, 100_000])
@pytest.mark.parametrize("shape", list(hostile_texts(1000)))
def test_each_worst_shape_reduces_in_well_under_a_second(shape: str, chars: int) -> None:
    pasted = hostile_texts(chars)[shape]
    assert chars * 0.95 <= len(pasted) <= chars * 1.05
    slow = {name: round(t, 2) for name, reduce in REDUCTIONS.items() if (t := timed(reduce, pasted)) >= BOUND}
    assert slow == {}


def test_a_45_kb_trace_with_a_run_of_dots_is_taken_and_reduced_to_its_error() -> None:
    pasted = hostile_texts(45_000)["dots"]
    assert searched_text(checked_query(pasted, 2000, "q", "query")) == "\n".join(
        [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate GiB",
            "return forward_call(*args, **kwargs)",
            "_call_impl",
        ]
    )


PATTERNS = [
    (module.__name__, name, pattern)
    for module in (noise, stacktrace, text)
    for name, value in vars(module).items()
    for pattern in (value if isinstance(value, list) else [value])
    for pattern in (pattern[0] if isinstance(pattern, tuple) else pattern,)
    if isinstance(pattern, re.Pattern)
]
RUNS = " .,:;[]()-_/\\\"'!~\t\n0aAx。，！"


@pytest.mark.parametrize(("module", "name", "pattern"), PATTERNS, ids=[f"{m}.{n}" for m, n, _ in PATTERNS])
def test_no_pattern_backtracks_over_a_run_of_one_character(module: str, name: str, pattern: re.Pattern[str]) -> None:
    """Each pattern of the modules that reduce user text, run through 20,000 of any one character between
    two others, takes linear time: a pattern with overlapping quantifiers takes seconds on one of them."""
    assert len(PATTERNS) >= 15
    slow = {}
    for char in RUNS:
        pasted = "1" + char * 20_000 + "y"
        started = time.perf_counter()
        pattern.sub("", pasted)
        if (took := time.perf_counter() - started) > 0.2:
            slow[char] = round(took, 2)
    assert slow == {}
