"""Q&A files read into rows: CSV, TSV, XLSX and JSONL, each row with its cells by header and
where it is (sheet, row, line), so that every fault can name its cell.

- CSV and TSV: UTF-8, with or without the byte-order mark Excel writes; the first row that is
  not empty is the header. A cell `'=…` (or `'+`, `'-`, `'@`, or `''=…`) is read without its first
  `'`, which only keeps a spreadsheet from running it as a formula (`kb export` writes it so). A row is numbered as a spreadsheet numbers it (the header is row
  1), and keeps the line of the file it starts on (a cell may span lines).
- XLSX (openpyxl, read-only): every sheet, or the one named; in each, the first row that is not
  empty is the header. A formula is kept as a `Formula`, never computed: the caller says it
  does not belong.
- JSONL: one JSON object a line, its keys the headers; a line is a row.

Rows whose cells are all empty are left out. Nothing here knows what a column means.

What a file may hold is bounded, so a hostile one ends the ingest with one line naming it rather
than filling memory: `MAX_ROWS` rows and `MAX_CELLS` cells a file (a workbook's sheets together,
empty ones counted), `MAX_WORKBOOK_BYTES` uncompressed in a workbook's zip (its declared sizes
are checked before openpyxl opens it; zipfile reads no more than they declare), and JSON nested
at most `MAX_JSON_DEPTH` deep on a JSONL line.
"""

from __future__ import annotations

import codecs
import csv
import datetime
import io
import json
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from kb.errors import SourceError

__all__ = [
    "MAX_ROWS",
    "MAX_CELLS",
    "MAX_WORKBOOK_BYTES",
    "MAX_JSON_DEPTH",
    "TABLE_SUFFIXES",
    "Formula",
    "Header",
    "Row",
    "Table",
    "read_table",
    "is_table",
    "column_letter",
    "quoted",
]

TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".jsonl")
UTF8_ADVICE = "save it as UTF-8 (in Excel: Save As, 'CSV UTF-8')"
MAX_ROWS = 100_000  # rows of one Q&A file, its sheets together: ten times the largest FAQ measured (bench_tables)
MAX_CELLS = 2_000_000  # cells of one Q&A file, empty ones counted (openpyxl fills a row out to the sheet's width)
MAX_WORKBOOK_BYTES = 256 * 2**20  # what a workbook's files may expand to
MAX_JSON_DEPTH = 16  # nesting of one JSONL line: an entry is an object of text, lists of text and flags
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula at the start of a CSV cell


def quoted(text: str) -> str:
    """A CSV cell a spreadsheet would run as a formula, after a `'` (which reading the file takes off again);
    a cell that starts with `'`s before one (`'=A1`) gets one more, so that it reads back whole."""
    return "'" + text if text.lstrip("'").startswith(_FORMULA_START) else text


def _unquoted(text: str) -> str:
    return text[1:] if text[:1] == "'" and text.lstrip("'").startswith(_FORMULA_START) else text


def is_table(path: Path | str) -> bool:
    """Whether the file is a Q&A file (by its suffix), not a Markdown document."""
    return Path(path).suffix.lower() in TABLE_SUFFIXES


@dataclass(frozen=True)
class Formula:
    """A workbook cell that holds a formula (`=A2&B2`), which no text of an entry may be."""

    text: str


@dataclass(frozen=True)
class Header:
    """The header row of a sheet (or the keys of one JSONL line): its names and where it is."""

    path: Path
    sheet: str  # the worksheet's name; "" but in a workbook
    names: tuple[str, ...]
    labels: tuple[str, ...]  # each column as a reader finds it: "C" in a sheet, the key in JSONL
    row: int
    line: int | None  # the line of a text file (None in a workbook)

    @property
    def jsonl(self) -> bool:
        return self.labels == self.names and self.path.suffix.lower() == ".jsonl"

    def column(self, index: int) -> str:
        """A column as a message names it: "column C ('answer')", or in JSONL "field 'answer'"."""
        name = self.names[index]
        return f"field {name!r}" if self.jsonl else f"column {self.labels[index]} ({name!r})"

    def error(
        self, message: str, row: int | None = None, line: int | None = None, column: int | None = None
    ) -> SourceError:
        """A fault at `column` (an index into `names`) of row `row` (default: the header's own), naming them."""
        row, line = (self.row, self.line) if row is None else (row, line)
        parts = [f"sheet {self.sheet!r}"] if self.sheet else []
        if not self.jsonl:
            parts.append(f"row {row}")
        if column is not None:
            parts.append(self.column(column))
        where = ", ".join(parts)
        return SourceError(self.path, f"{where}: {message}" if where else message, line)


@dataclass(frozen=True)
class Row:
    """One row that is not empty: a value for each header column (str, or in JSONL also a list,
    a bool, a number or None; a `Formula` in a workbook)."""

    header: Header
    number: int  # as a spreadsheet numbers it; in JSONL, the line
    line: int | None
    values: tuple[object, ...]

    def error(self, message: str, column: int | None = None) -> SourceError:
        return self.header.error(message, self.number, self.line, column)


@dataclass
class Table:
    """What a Q&A file holds: its rows, the header of each sheet, and what could not be read."""

    path: Path
    headers: list[Header] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    read: tuple[int, int] = (0, 0)  # rows and cells read so far, empty ones counted

    def count(self, sheet: str, row: int, cells: int) -> None:
        """Count a row of `cells` cells read; a SourceError naming the file, sheet and row past MAX_ROWS or MAX_CELLS."""
        rows, total = self.read[0] + 1, self.read[1] + cells
        self.read = (rows, total)
        if rows > MAX_ROWS or total > MAX_CELLS:
            where = (f"sheet {sheet!r}, " if sheet else "") + f"row {row}"
            what = f"{MAX_ROWS:,} rows" if rows > MAX_ROWS else f"{MAX_CELLS:,} cells"
            raise SourceError(
                self.path, f"{where}: more than {what}, the most a Q&A file may hold; split it into files"
            )


def column_letter(index: int) -> str:
    """The spreadsheet's name of a 0-based column: 0 -> "A", 26 -> "AA"."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _grid(table: Table, sheet: str, records: Iterable[tuple[int, int | None, list[object]]]) -> None:
    """The rows of one sheet of cells (each record: row number, line, cells), the first that is not empty its header."""
    header: Header | None = None
    for number, line, cells in records:
        table.count(sheet, number, len(cells))
        if all(_empty(c) for c in cells):
            continue
        if header is None:
            while cells and _empty(cells[-1]):
                cells.pop()
            names = tuple("" if c is None else str(c).strip() for c in cells)
            labels = tuple(column_letter(i) for i in range(len(names)))
            header = Header(table.path, sheet, names, labels, number, line)
            table.headers.append(header)
            for i, cell in enumerate(cells):
                if isinstance(cell, Formula):
                    table.errors.append(header.error(f"a formula ({cell.text}) where a header belongs", column=i))
            continue
        width = len(header.names)
        extra = next((i for i in range(width, len(cells)) if not _empty(cells[i])), None)
        if extra is not None:
            table.errors.append(
                header.error(
                    f"a value in column {column_letter(extra)}, which has no header "
                    "(a cell split in two by a separator it holds?)",
                    number,
                    line,
                )
            )
            continue
        values = tuple(cells[:width]) + (None,) * (width - len(cells))
        table.rows.append(Row(header, number, line, values))


def _decoded(path: Path, data: bytes, delimiter: str) -> str:
    """The text of a CSV or TSV file; a byte that is not UTF-8 is an error naming its row and column."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        records = list(csv.reader(io.StringIO(before, newline=""), delimiter=delimiter))
        if not records or before.endswith(("\n", "\r")):
            records.append([""])  # the byte starts a row
        row, column = len(records), len(records[-1]) - 1
        name = str(records[0][column]).strip() if row > 1 and column < len(records[0]) else ""
        cell = f"column {column_letter(column)}" + (f" ({name!r})" if name else "")
        bad = data[exc.start : exc.start + 1]
        line = data[: exc.start].count(b"\n") + 1
        message = f"row {row}, {cell}: not UTF-8 (byte {bad!r} cannot be decoded); {UTF8_ADVICE}"
        raise SourceError(path, message, line) from None


def _read_delimited(table: Table, delimiter: str) -> None:
    path = table.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from exc
    text = _decoded(path, data, delimiter)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)

    def records() -> Iterator[tuple[int, int | None, list[object]]]:
        start, number = 1, 0
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise SourceError(
                    path, f"row {number + 1}: cannot be read as {path.suffix[1:].upper()} ({exc})", start
                ) from None
            number += 1
            yield number, start, [_unquoted(c.replace("\r\n", "\n")) for c in cells]
            start = reader.line_num + 1

    _grid(table, "", records())


def _cell(cell: Any) -> object:
    """A workbook cell's value as text (numbers and dates written as a reader sees them), or a Formula."""
    value = cell.value
    if value is None:
        return None
    if cell.data_type == "f":
        return Formula(str(getattr(value, "text", value)))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return str(value).replace("\r\n", "\n")


def _check_expanded_size(path: Path) -> None:
    """A SourceError when the files of the workbook's zip declare more than MAX_WORKBOOK_BYTES in all
    (a few megabytes can expand to gigabytes); anything that is no zip is left to openpyxl to name."""
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    if expanded > MAX_WORKBOOK_BYTES:
        raise SourceError(
            path,
            f"expands to {expanded / 2**20:,.0f} MB when unzipped; a workbook may hold at most "
            f"{MAX_WORKBOOK_BYTES / 2**20:,.0f} MB (split it, or save it as CSV)",
        )


def _read_workbook(table: Table, sheet: str) -> None:
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    path = table.path
    _check_expanded_size(path)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            book = load_workbook(path, read_only=True, data_only=False)
        except (InvalidFileException, OSError, KeyError, ValueError) as exc:
            raise SourceError(path, f"cannot be read as an XLSX workbook ({type(exc).__name__}: {exc})") from None
        except Exception as exc:  # a zip that is not a workbook: zipfile.BadZipFile and its kin
            raise SourceError(path, f"cannot be read as an XLSX workbook ({type(exc).__name__}: {exc})") from None
        try:
            names = book.sheetnames
            if sheet and sheet not in names:
                raise SourceError(path, f"no sheet {sheet!r}; its sheets are {', '.join(map(repr, names))}")
            for name in [sheet] if sheet else names:
                rows = book[name].iter_rows(min_row=1)
                try:
                    _grid(table, name, ((n, None, [_cell(c) for c in cells]) for n, cells in enumerate(rows, 1)))
                finally:
                    rows.close()  # the sheet's file, left open by a limit reached
        finally:
            book.close()
    table.warnings += [f"{path}: {w.message}" for w in said]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        raise ValueError(f"the key {twice!r} is given twice")
    return dict(pairs)


def _read_jsonl(table: Table) -> None:
    path = table.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from exc
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 1]
            table.errors.append(SourceError(path, f"not UTF-8 (byte {bad!r} cannot be decoded); {UTF8_ADVICE}", number))
            continue
        too_deep = False
        try:
            found = json.loads(line, object_pairs_hook=_pairs)
        except ValueError as exc:
            table.errors.append(
                SourceError(path, f"not a JSON object ({exc}); a JSONL file holds one object a line", number)
            )
            continue
        except RecursionError:  # nested past what the parser follows
            too_deep = True
        if too_deep or _depth(found) > MAX_JSON_DEPTH:
            message = f"JSON nested more than {MAX_JSON_DEPTH} deep; a line holds one object of text, lists and flags"
            table.errors.append(SourceError(path, message, number))
            continue
        if not isinstance(found, dict):
            table.errors.append(
                SourceError(path, f"a JSON {type(found).__name__}, not an object; one object a line", number)
            )
            continue
        table.count("", number, len(found))
        names = tuple(str(k).strip() for k in found)
        header = Header(path, "", names, names, number, number)
        values = tuple(found.values())
        if not all(_empty(v) for v in values):
            table.rows.append(Row(header, number, number, values))


def _depth(value: object) -> int:
    """How deep lists and objects nest in a parsed JSON value (1 for an object of text), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)]
    return deepest


def read_table(path: Path, sheet: str = "") -> Table:
    """The rows of the Q&A file at `path` (of a workbook: of every sheet, or of `sheet`).

    A file that cannot be read at all (not UTF-8, not a workbook, no such sheet) is a SourceError
    raised here; a row that cannot be read is one of `Table.errors`, and the other rows are kept."""
    table = Table(Path(path))
    suffix = table.path.suffix.lower()
    if suffix == ".xlsx":
        _read_workbook(table, sheet)
    elif suffix == ".jsonl":
        _read_jsonl(table)
    else:
        _read_delimited(table, "\t" if suffix == ".tsv" else ",")
    return table
