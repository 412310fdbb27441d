"""Hostile workbooks built in a test's directory: a sheet's XML written straight into the zip."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO, Callable

import openpyxl

SHEET_START = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'


def workbook_with_sheet_xml(path: Path, write_sheet: Callable[[IO[bytes]], None]) -> Path:
    """A workbook (one sheet 'FAQ') whose sheet XML is written by `write_sheet(file)`, streamed into the zip."""
    plain = path.with_suffix(".plain.xlsx")
    book = openpyxl.Workbook()
    book.create_sheet("FAQ")
    book.remove(book.worksheets[0])
    book.save(plain)
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            if info.filename == "xl/worksheets/sheet1.xml":
                with out.open(info.filename, "w") as sheet:
                    write_sheet(sheet)
            else:
                out.writestr(info, source.read(info))
    plain.unlink()
    return path


def zip_bomb(path: Path, expanded: int) -> Path:
    """A workbook of a megabyte or so whose sheet, one cell of 'a's, unzips to about `expanded` bytes."""

    def one_huge_cell(sheet: IO[bytes]) -> None:
        sheet.write(SHEET_START + b'<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>')
        chunk = b"a" * 2**20
        for _ in range(expanded // len(chunk)):
            sheet.write(chunk)
        sheet.write(b"</t></is></c></row></sheetData></worksheet>")

    return workbook_with_sheet_xml(path, one_huge_cell)
