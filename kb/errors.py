"""The exceptions the knowledge base raises; each message names what was wrong."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "KBError",
    "SettingsError",
    "SourceError",
    "IndexError_",
    "IndexMissingError",
    "EntryNotFound",
    "QueryError",
]


class KBError(Exception):
    """Base class: anything the `kb` command or the server reports as one clear line."""


class SettingsError(KBError):
    """A `KB_` setting has a value that cannot be used."""

    def __init__(self, name: str, value: str, expected: str):
        self.name, self.value, self.expected = name, value, expected
        super().__init__(f"setting {name}={value!r}: expected {expected}")


class SourceError(KBError):
    """A source document or the sources manifest cannot be ingested."""

    def __init__(self, path: Path | str, message: str, line: int | None = None):
        self.path, self.line, self.message = Path(path), line, message
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}")


class IndexError_(KBError):
    """The index directory is missing, corrupt, foreign, or built by another model."""

    def __init__(self, path: Path | str, message: str):
        self.path, self.message = Path(path), message
        super().__init__(f"index {path}: {message}")


class IndexMissingError(IndexError_):
    """There is no index at the path yet (run `kb ingest`)."""


class EntryNotFound(KBError):
    """No entry has the given id."""

    def __init__(self, entry_id: str):
        self.entry_id = entry_id
        super().__init__(f"no entry with id {entry_id!r}")


class QueryError(KBError):
    """A query cannot be searched (empty, too long, bad filter)."""

    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")
