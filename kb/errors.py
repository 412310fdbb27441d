"""The exceptions the knowledge base raises; each message names what was wrong."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "KBError",
    "SettingsError",
    "SourceError",
    "SourceErrors",
    "IndexUnreadable",
    "IndexMissing",
    "BuildRefused",
    "IndexMoved",
    "EntryNotFound",
    "QueryError",
    "AnswerRefused",
    "LLMFailed",
    "InsightsUnavailable",
    "InsightsOff",
    "InsightsUnreachable",
    "LinkNotFound",
    "CalibrationError",
    "TooFewQuestions",
    "JudgeFailed",
    "SyncFailed",
    "SHOWN",
    "shown",
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


class SourceErrors(SourceError):
    """Several files cannot be ingested: one line for each, naming its file and line."""

    def __init__(self, errors: list[SourceError]):
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.path, first.message, first.line)
        self.args = ("\n".join(str(e) for e in self.errors),)

    def __str__(self) -> str:
        return str(self.args[0])

    @staticmethod
    def raise_any(errors: list[SourceError]) -> None:
        """Raise the one error, or SourceErrors for several (each of them, flattened); none: nothing."""
        flat = [e for error in errors for e in (error.errors if isinstance(error, SourceErrors) else [error])]
        flat.sort(key=lambda e: (str(e.path), e.line or 0))
        if len(flat) > 1:
            raise SourceErrors(flat)
        if flat:
            raise flat[0]


class IndexUnreadable(KBError):
    """The index directory cannot be used: missing, corrupt, foreign, or built by another model."""

    def __init__(self, path: Path | str, message: str):
        self.path, self.message = Path(path), message
        super().__init__(f"index {path}: {message}")


class IndexMissing(IndexUnreadable):
    """There is no index at the path yet (run `kb ingest`)."""


class BuildRefused(KBError):
    """A new build could not be loaded; the one served before still is."""


class SyncFailed(KBError):
    """`kb sync` could not read a source's upstream repository (unreachable, no such ref or path): nothing changed."""

    def __init__(self, source: str, message: str):
        self.source, self.message = source, message
        super().__init__(f"source {source!r}: {message}; nothing changed")


SHOWN = 60  # characters of a value an error message echoes


def shown(value: str, limit: int = SHOWN) -> str:
    """`value` as an error message names it: quoted, and cut to its first `limit` characters (a client may send
    100 KB where an id belongs)."""
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}… ({len(value)} characters)"


class IndexMoved(KBError):
    """A build made from the current one was not swapped in: another build took its place meanwhile."""

    def __init__(self, index_dir: Path | str, expected: Path | str, found: Path | str):
        self.index_dir, self.expected, self.found = index_dir, expected, found
        super().__init__(f"{index_dir}: now points at {found}, not {expected}; build from it again")


class EntryNotFound(KBError):
    """No entry has the given id."""

    def __init__(self, entry_id: str):
        self.entry_id = entry_id
        super().__init__(f"no entry with id {shown(entry_id)}")


class QueryError(KBError):
    """A query cannot be searched (empty, too long, bad filter)."""

    def __init__(self, field: str, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}")


class AnswerRefused(QueryError):
    """An answer written on the insights page that cannot be saved: the form's `field` and why, as
    `reason` (a key the page translates, `written_error_<reason>`) with its `values`."""

    def __init__(self, field: str, reason: str, message: str, **values: object):
        self.reason, self.values = reason, values
        super().__init__(field, message)


class LLMFailed(KBError):
    """The LLM endpoint failed, timed out, or gave no usable answer."""

    def __init__(self, url: str, message: str):
        self.url, self.message = url, message
        super().__init__(f"LLM at {url}: {message}")


class InsightsUnavailable(KBError):
    """The insights database cannot be opened, upgraded or written."""

    def __init__(self, path: Path | str, message: str):
        # A file's path, or a PostgreSQL URL (without its password) kept as written.
        self.path, self.message = (path if "://" in str(path) else Path(path)), message
        super().__init__(f"insights database {path}: {message}")


class InsightsOff(KBError):
    """No insights database could be opened: nothing is recorded, and links are off."""


class InsightsUnreachable(KBError):
    """The insights database server cannot be reached now."""


class LinkNotFound(KBError):
    """No link has the given id."""

    def __init__(self, link_id: int):
        self.link_id = link_id
        super().__init__(f"no link #{link_id}")


class CalibrationError(KBError):
    """The calibration cannot be used with the settings: it needs a judge that is not configured, or the reverse."""

    def __init__(self, path: Path | str, message: str):
        self.path, self.message = Path(path), message
        super().__init__(f"calibration {path}: {message}")


class TooFewQuestions(KBError):
    """The labelled questions given to `kb calibrate` cannot fit something: says what is missing and what to add."""

    def __init__(self, have: str, need: str, remedy: str):
        self.have, self.need, self.remedy = have, need, remedy
        super().__init__(f"{have}: {need}; {remedy}")


class JudgeFailed(KBError):
    """The second-stage judge gave no usable verdict; `kind` is one of `JudgeFailed.KINDS`."""

    KINDS = ("invalid", "out_of_range", "timeout", "error")

    def __init__(self, kind: str, message: str):
        self.kind, self.message = kind, message
        super().__init__(f"judge: {message}")
