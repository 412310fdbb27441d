"""A source document's text: read as UTF-8, with `\\r\\n` and `\\r` line endings made `\\n`."""

from __future__ import annotations

from pathlib import Path

from kb.errors import SourceError

__all__ = ["read_text"]


def read_text(path: Path) -> str:
    """The text of `path`; a SourceError names the line of the first byte that is not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1]
        raise SourceError(path, f"not UTF-8: byte {bad!r} cannot be decoded", line) from exc
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
