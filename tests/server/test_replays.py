"""The message ids a chat bot remembers (server/replays.py): one delivered twice is answered once, for a while."""

from __future__ import annotations

from server.replays import Replays
from tests.support.clock import Clock


def test_an_id_is_new_once_within_the_window_and_new_again_after_it() -> None:
    clock = Clock()
    seen = Replays(window=300, clock=clock)
    assert seen.first("ev-1") and not seen.first("ev-1") and seen.first("ev-2")
    clock.now += 299
    assert not seen.first("ev-1")
    clock.now += 2  # ev-1 was first seen 301 s ago
    assert seen.first("ev-1") and len(seen) == 1  # ev-2 forgotten too; ev-1 remembered afresh


def test_at_most_max_ids_are_kept_the_oldest_forgotten_first() -> None:
    seen = Replays(window=3600, max_ids=3, clock=Clock())
    assert all(seen.first(f"ev-{n}") for n in range(5))
    assert len(seen) == 3
    assert not seen.first("ev-4") and seen.first("ev-0")
