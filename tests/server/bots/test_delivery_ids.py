"""The message ids a chat bot remembers (server/bots/delivery_ids.py): one delivered twice is answered once, for a while."""

from __future__ import annotations

from server.bots.delivery_ids import DeliveryIds
from tests.support.clock import Clock


def test_an_id_is_new_once_within_the_window_and_new_again_after_it() -> None:
    clock = Clock()
    seen = DeliveryIds(window=300, clock=clock)
    assert seen.first("ev-1") and not seen.first("ev-1") and seen.first("ev-2")
    clock.now += 299
    assert not seen.first("ev-1")
    clock.now += 2  # ev-1 was first seen 301 s ago
    assert seen.first("ev-1") and len(seen) == 1  # ev-2 forgotten too; ev-1 remembered afresh


def test_at_most_max_ids_are_kept_the_oldest_forgotten_first() -> None:
    seen = DeliveryIds(window=3600, max_ids=3, clock=Clock())
    assert all(seen.first(f"ev-{n}") for n in range(5))
    assert len(seen) == 3
    assert not seen.first("ev-4") and seen.first("ev-0")


def test_what_is_kept_of_an_id_is_fixed_in_size() -> None:
    """A replayed signature with a different 200 KB id each time: each costs a small hash, not the id."""
    seen = DeliveryIds(window=3600, max_ids=100, clock=Clock())
    ids = [f"{n:06d}" + "x" * 200_000 for n in range(150)]
    assert all(seen.first(message_id) for message_id in ids)
    assert len(seen) == 100 and not seen.first(ids[-1])
    assert {len(key) for key in seen._seen} == {16}
