"""GitHub heading anchors: the `#fragment` GitHub gives a heading, so entries can deep-link."""

from __future__ import annotations

__all__ = ["github_anchor"]


def _slug(text: str) -> str:
    # Letters (Chinese included), digits, `_`, `-` and spaces survive; every other
    # character, ASCII or full-width punctuation alike, is deleted. Spaces are not
    # collapsed, so `a > b` becomes `a--b`, as on GitHub.
    kept = [c for c in text.strip().lower() if c.isalnum() or c in "_- "]
    return "".join(kept).replace(" ", "-")


def github_anchor(text: str, seen: dict[str, int] | None = None) -> str:
    """The anchor (without `#`) GitHub makes for a heading whose rendered text is `text`.

    `seen` counts the anchors already handed out on the page, in document order:
    pass the same dict for every heading of a page and repeats get `-1`, `-2`, ...
    """
    base = _slug(text)
    if seen is None:
        return base
    anchor = base
    while anchor in seen:
        seen[base] = seen.get(base, 0) + 1
        anchor = f"{base}-{seen[base]}"
    seen.setdefault(anchor, 0)
    return anchor
