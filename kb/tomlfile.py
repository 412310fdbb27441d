"""TOML data files read and checked against a pydantic model, each fault one line naming the file, the field and what is wrong.

A fault reads `{file}:{line}: {where}: {what}`: `where` is the table (`source 'slime'`,
`[[term]] #3`, `source 'team', [source.translation]`), `what` names the field
(`missing required field 'lang'`, `unknown field 'licence'`, `field 'version' must be a
string, got 1.0`). The line is that of the field, or of its table when the field is
missing; TOML syntax errors carry tomllib's own line and column.

Tables are written here too: `toml_table` gives a table's lines, each value a TOML basic
string, `true`/`false` or an array of strings (`kb translate` writes the manifest's
`[source.translation]` tables with it).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo

from .errors import SourceError

__all__ = [
    "DataModel",
    "TomlFile",
    "load_toml",
    "line_of",
    "nonempty",
    "one_of",
    "iso_date",
    "TomlValue",
    "toml_string",
    "toml_value",
    "toml_table",
]

Loc = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)

# A table's header: its name's words and the spaces between them alternate, so a run of spaces is read once.
_HEADER = re.compile(r"\s*(\[\[?)\s*([\w.\-\"']+(?:[ \t]+[\w.\-\"']+)*)\s*\]\]?\s*(?:#.*)?$")
_KINDS = {
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
}


class DataModel(BaseModel):
    """A table of a data file: no fields beyond those declared, no conversion between types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# Field checks the data files share, for `field_validator(...)(check)`.


def nonempty(value: str, info: ValidationInfo) -> str:
    if not value.strip():
        raise ValueError(f"field {info.field_name!r} is empty")
    return value


def one_of(*allowed: str) -> Callable[[str, ValidationInfo], str]:
    """A check that the field is one of `allowed`."""

    def check(value: str, info: ValidationInfo) -> str:
        if value not in allowed:
            raise ValueError(f"unknown {info.field_name} {value!r} (expected one of {', '.join(map(repr, allowed))})")
        return value

    return check


def iso_date(value: str, info: ValidationInfo) -> str:
    """Empty, or a date like 2026-01-31."""
    if value and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError(f"{info.field_name} must be a date like 2026-01-31, got {value!r}")
    return value


def _table_name(raw: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in raw.split("."))


def _headers(lines: list[str]) -> list[tuple[int, str, bool]]:
    """(line index, dotted name, is an array of tables) for each `[table]` and `[[table]]` header."""
    found = []
    for number, line in enumerate(lines):
        match = _HEADER.match(line)
        if match:
            found.append((number, _table_name(match[2]), match[1] == "[["))
    return found


def line_of(text: str, loc: Loc) -> int | None:
    """The 1-based line of `loc` (keys and 0-based indexes of arrays of tables) in the TOML `text`:
    the line of its key, else of the deepest table of it that is found; None if none is."""
    lines = text.splitlines()
    headers = _headers(lines)
    table: list[str] = []
    start, end, found = -1, len(lines), None  # the current table: its header line (-1: the root) and end

    def table_end(after: int, path: str) -> int:
        return next((n for n, name, _ in headers if n > after and not name.startswith(path + ".")), end)

    i = 0
    while i < len(loc) and isinstance(loc[i], str):
        key = str(loc[i])
        path = ".".join([*table, key])
        index = loc[i + 1] if i + 1 < len(loc) and isinstance(loc[i + 1], int) else None
        same = [n for n, name, array in headers if name == path and start < n < end and array == (index is not None)]
        if isinstance(index, int) and index < len(same):
            start, end, found, i = same[index], table_end(same[index], path), same[index] + 1, i + 2
        elif index is None and same:
            start, end, found, i = same[0], table_end(same[0], path), same[0] + 1, i + 1
        else:
            own_end = next((n for n, _, _ in headers if n > start), end)
            assign = re.compile(rf"\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
            return next((n + 1 for n in range(start + 1, own_end) if assign.match(lines[n])), found)
        table.append(key)
    return found


def _where(loc: Loc, data: Any) -> str:
    """The tables along `loc` as a reader finds them: `source 'demo'` (an array's table with a
    `name` or `id`), `[[term]] #3` (one without), `[source.translation]` (a table in a table)."""
    parts: list[str] = []
    names: list[str] = []
    for i, key in enumerate(loc):
        if isinstance(key, int):
            node = _at(data, loc[: i + 1])
            label = node.get("name", node.get("id")) if isinstance(node, dict) else None
            parts[-1] = f"{names[-1]} {label!r}" if isinstance(label, str) else f"[[{'.'.join(names)}]] #{key + 1}"
            continue
        names.append(key)
        if i + 1 < len(loc) and isinstance(loc[i + 1], int):
            parts.append("")
        else:
            parts.append(f"[{'.'.join(names)}]")
    return ", ".join(parts)


def _at(data: Any, loc: Loc) -> Any:
    """The value at `loc` in the parsed data; None where there is none."""
    for key in loc:
        if isinstance(data, dict) and isinstance(key, str):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and key < len(data):
            data = data[key]
        else:
            return None
    return data


def _split(loc: Loc, data: Any, kind: str) -> tuple[Loc, str, str]:
    """`loc` as (its table, its field, the item of a list field: ` item 3` or "")."""
    whole = not loc or isinstance(loc[-1], int)  # an array's table, not a field given as an inline table
    if (
        whole and isinstance(_at(data, loc), dict) and kind in ("value_error", "assertion_error")
    ):  # a check of the whole table
        return loc, "", ""
    item = ""
    while loc and isinstance(loc[-1], int):
        item, loc = f" item {loc[-1] + 1}{item}", loc[:-1]
    return (loc[:-1], str(loc[-1]), item) if loc else ((), "", item)


def _what(error: Any, field: str, item: str) -> str:
    kind = error["type"]
    if kind == "missing":
        return f"missing required field {field!r}"
    if kind == "extra_forbidden":
        return f"unknown field {field!r}"
    if kind in ("value_error", "assertion_error") and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])  # our own validators name the field themselves
    subject = f"field {field!r}{item}" if field else f"item{item}" if item else "the file"
    if kind in _KINDS:
        return f"{subject} must be {_KINDS[kind]}, got {error['input']!r}"
    message = str(error["msg"])
    return f"{subject}: {message[:1].lower()}{message[1:]}"


@dataclass(frozen=True)
class TomlFile(Generic[M]):
    """A data file read and checked: its text, its parsed data, and the model built from it."""

    path: Path
    text: str
    data: dict[str, Any]
    model: M

    def error(self, message: str, table: Loc = (), field: str = "") -> SourceError:
        """A fault found after validation (a file that does not exist, a name used twice), in the same style."""
        return _error(self.path, self.text, self.data, message, table, field)

    def line(self, loc: Loc) -> int | None:
        """The line of `loc` in the file (see `line_of`)."""
        return line_of(self.text, loc)


def _error(path: Path, text: str, data: Any, message: str, table: Loc, field: str) -> SourceError:
    where = _where(table, data)
    line = line_of(text, (*table, field) if field else table)
    return SourceError(path, f"{where}: {message}" if where else message, line)


# The most dotted parts a key may have: Python's TOML reader takes time quadratic in them (5.6 s for a key of
# 16,384 parts), and a data file's keys have a few.
MAX_KEY_PARTS = 64


def long_key(text: str) -> tuple[int, int]:
    """(line, parts) of the first key (before a line's `=`, or a table's header) of more than MAX_KEY_PARTS
    dotted parts; (0, 0) when there is none."""
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.partition("=")[0].count(".") + 1
        if parts > MAX_KEY_PARTS:
            return number, parts
    return 0, 0


def load_toml(path: Path, model: type[M], what: str) -> TomlFile[M]:
    """Read `path` (a TOML file described to readers as `what`) and validate it against `model`;
    any fault is a SourceError naming the file, its line when known, the field and the fault."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(path, f"not UTF-8: {exc.reason}") from None
    except OSError as exc:
        raise SourceError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    at, parts = long_key(text)
    if parts:
        raise SourceError(path, f"a key of {parts:,} dotted parts, a data file's keys have at most {MAX_KEY_PARTS}", at)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found[1]) if found else None
        shown = text.splitlines()[line - 1].strip()[:80] if line and line <= len(text.splitlines()) else ""
        raise SourceError(path, f"TOML syntax error: {exc}" + (f" in `{shown}`" if shown else ""), line) from None
    try:
        return TomlFile(path, text, data, model.model_validate(data))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        table, field, item = _split(tuple(first["loc"]), data, first["type"])
        message = _what(first, field, item)
        raise _error(path, text, data, message, table, field) from None


# ---------------------------------------------------------------------------- writing

TomlValue = str | bool | Sequence[str]

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: TomlValue) -> str:
    """`value` as TOML: a basic string, `true` or `false`, or an array of basic strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    return "[" + ", ".join(toml_string(v) for v in value) + "]"


def toml_table(header: str, fields: Sequence[tuple[str, TomlValue]]) -> list[str]:
    """A table's lines: its header (`[[source]]`, `[source.translation]`), then `key = value` for each field."""
    return [header, *(f"{key} = {toml_value(value)}" for key, value in fields)]
