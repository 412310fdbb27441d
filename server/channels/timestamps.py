"""How far a signed request's timestamp is from now: the one freshness check of every bot's signature (Slack,
Feishu, DingTalk), each channel saying the outcome in its own words.

A request signed more than a few minutes from now is refused whichever way: old, it may be a replay; ahead, this
server's clock (or the sender's) is wrong. A timestamp is read only when it is a short run of ASCII digits, so a
hostile header never becomes a huge integer.
"""

from __future__ import annotations

__all__ = ["whole_number", "off_by", "said"]


def whole_number(text: str, max_digits: int) -> int | None:
    """`text` as a whole number, or None when it is not a run of at most `max_digits` ASCII digits."""
    if not (text.isascii() and text.isdigit()) or len(text) > max_digits:
        return None
    return int(text)


def off_by(sent: float, now: float, max_age: float) -> float | None:
    """How old a request sent at `sent` is at `now` (seconds; negative: ahead of now) when that is more than `max_age`
    either way; None when it is fresh."""
    age = now - sent
    return age if abs(age) > max_age else None


def said(age: float) -> str:
    """An age as a refusal says it: "312 s old", "40 s in the future"."""
    return f"{age:.0f} s old" if age > 0 else f"{-age:.0f} s in the future"
