"""Comparing what a hostile upstream sends with the served entries: the work is bounded, and reported as it goes."""

from __future__ import annotations

import random
import time

from ingest.changes import compare
from kb.entries import Entry, entry_id


def entries(prefix: str, answers: list[str]) -> list[Entry]:
    return [
        Entry(
            id=entry_id("team", f"{prefix} question {n}?"),
            question=f"{prefix} question {n}?",
            answer=answer,
            source="team",
            source_title="Team FAQ",
            source_version="",
            source_url="",
            framework="",
            section="",
            url="",
            lang="en",
        )
        for n, answer in enumerate(answers)
    ]


def test_a_thousand_entries_all_replaced_are_weighed_in_bounded_time_with_progress() -> None:
    rng = random.Random(55)
    words = ["nccl", "timeout", "rank", "gpu", "memory", "batch", "loss", "grad", "fsdp", "vllm", "ray", "step"]
    answers = [" ".join(rng.choice(words) for _ in range(20)) for _ in range(1_000)]
    told: list[tuple[int, int]] = []
    started = time.perf_counter()
    changes = compare("team", entries("old", answers), entries("new", answers), lambda d, t: told.append((d, t)))
    assert time.perf_counter() - started < 120  # a million pairs unbounded (a generous bound on a busy machine)
    assert told[0] == (0, 1_000) and told[-1] == (1_000, 1_000) and len(told) == 11
    assert len(changes.reworded) == 1_000 and not changes.new and not changes.removed  # each found at its place


def test_answers_of_one_repeated_character_stop_at_the_time_limit() -> None:
    """difflib takes about half a second for one pair of 1,000 'a's: 5 MB answers would never end."""
    old, new = entries("old", ["a" * 200_000] * 40), entries("new", ["a" * 200_000 + "b"] * 40)
    started = time.perf_counter()
    changes = compare("team", old, new, seconds=1.0)
    assert time.perf_counter() - started < 30  # the limit, and the one pair being weighed when it passed
    assert changes.unweighed > 0
    assert len(changes.reworded) + len(changes.removed) == 40


def test_a_small_change_reports_no_progress() -> None:
    answers = [f"answer {n} " * 10 for n in range(20)]
    told: list[tuple[int, int]] = []
    changes = compare("team", entries("old", answers), entries("new", answers), lambda d, t: told.append((d, t)))
    assert len(changes.reworded) == 20 and told == []
