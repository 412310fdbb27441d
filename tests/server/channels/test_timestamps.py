"""The freshness check every bot's signature shares (server/channels/timestamps.py)."""

from __future__ import annotations

from server.channels.timestamps import off_by, said, whole_number


def test_only_a_short_run_of_ascii_digits_is_read_as_a_timestamp() -> None:
    assert whole_number("1765000000", 12) == 1765000000
    for hostile in ("", "-5", "1e9", "١٢٣", "12 ", "9" * 13, "9" * 100_000):
        assert whole_number(hostile, 12) is None


def test_a_request_is_stale_beyond_the_limit_either_way_and_said_so() -> None:
    assert off_by(1000, 1300, 300) is None and off_by(1300, 1000, 300) is None  # at the limit: fresh
    assert off_by(1000, 1301, 300) == 301 and said(301) == "301 s old"
    assert off_by(1341, 1000, 300) == -341 and said(-341) == "341 s in the future"
