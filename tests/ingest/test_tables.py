"""Reading Q&A files into rows: CSV (with Excel's byte-order mark), TSV, XLSX (every sheet or one), JSONL;
each row knows its sheet, its row as a spreadsheet numbers it, and the line it starts on."""

from __future__ import annotations

import openpyxl
import pytest

from ingest.tables import Formula, column_letter, quoted, read_table
from kb.errors import SourceError
from tests.support.workbooks import SHEET_START, workbook_with_sheet_xml, zip_bomb


def values(table):
    return [(r.header.sheet, r.number, r.line, r.values) for r in table.rows]


def test_csv_rows_keep_their_row_and_the_line_they_start_on(tmp_path):
    path = tmp_path / "faq.csv"
    path.write_bytes('\ufeff问题,答案\r\n"如何续训？","第一行\r\n第二行"\r\n\r\nQ2,A2\r\n'.encode())
    table = read_table(path)
    assert table.headers[0].names == ("问题", "答案")  # the BOM Excel writes is not part of the first header
    # the blank line is row 3 (left out); Q2 is row 4, on line 5, as row 2 spans two lines
    assert values(table) == [("", 2, 2, ("如何续训？", "第一行\n第二行")), ("", 4, 5, ("Q2", "A2"))]


def test_tsv_and_short_rows(tmp_path):
    path = tmp_path / "faq.tsv"
    path.write_text("question\tanswer\ttags\nQ1\tA, with a comma\n", encoding="utf-8")
    assert values(read_table(path)) == [("", 2, 2, ("Q1", "A, with a comma", None))]


def test_a_value_beyond_the_header_is_an_error_naming_row_and_column(tmp_path):
    path = tmp_path / "faq.csv"
    path.write_text("question,answer\nQ1,A1\nQ2,use a,b\n", encoding="utf-8")
    table = read_table(path)
    assert [r.number for r in table.rows] == [2]
    assert [str(e) for e in table.errors] == [
        f"{path}:3: row 3: a value in column C, which has no header (a cell split in two by a separator it holds?)"
    ]


def test_a_gbk_csv_is_an_error_naming_row_and_column_and_how_to_save_it(tmp_path):
    path = tmp_path / "faq.csv"
    path.write_bytes("question,answer\nQ1,A1\nQ2,".encode() + "显存不足".encode("gbk") + b"\n")
    with pytest.raises(SourceError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}:3: row 3, column B ('answer'): not UTF-8 (byte b'\\xcf' cannot be decoded); "
        "save it as UTF-8 (in Excel: Save As, 'CSV UTF-8')"
    )


def test_a_workbook_every_sheet_or_the_one_named_formulas_kept_as_formulas(tmp_path):
    path = tmp_path / "faq.xlsx"
    book = openpyxl.Workbook()
    first = book.active
    first.title = "FAQ"
    first.append([None])  # an empty first row: the header is the first that is not empty
    first.append(["question", "answer", "version"])
    first.append(["Q1", '=CONCAT("A", "1")', 2.0])
    other = book.create_sheet("More")
    other.append(["问题", "答案"])
    other.append(["问题一", "答案一"])
    book.save(path)
    table = read_table(path)
    assert [h.row for h in table.headers] == [2, 1]
    assert values(table) == [
        ("FAQ", 3, None, ("Q1", Formula('=CONCAT("A", "1")'), "2")),
        ("More", 2, None, ("问题一", "答案一")),
    ]
    assert [r.header.sheet for r in read_table(path, "More").rows] == ["More"]
    with pytest.raises(SourceError, match=r"faq.xlsx: no sheet 'Nope'; its sheets are 'FAQ', 'More'"):
        read_table(path, "Nope")


def test_a_file_that_is_not_a_workbook_is_named(tmp_path):
    path = tmp_path / "faq.xlsx"
    path.write_text("question,answer\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"faq.xlsx: cannot be read as an XLSX workbook"):
        read_table(path)


def test_jsonl_a_line_a_row_and_a_broken_line_is_named(tmp_path):
    path = tmp_path / "faq.jsonl"
    path.write_text(
        '{"question": "Q1", "answer": "A1"}\n\n{"question": "Q2", "answer": \n["a list"]\n'
        '{"question": "Q3", "question": "again"}\n{"q": "Q4", "a": "A4", "tags": ["x", "y"]}\n',
        encoding="utf-8",
    )
    table = read_table(path)
    assert values(table) == [("", 1, 1, ("Q1", "A1")), ("", 6, 6, ("Q4", "A4", ["x", "y"]))]
    assert [str(e).split(" (")[0] for e in table.errors] == [
        f"{path}:3: not a JSON object",
        f"{path}:4: a JSON list, not an object; one object a line",
        f"{path}:5: not a JSON object",
    ]
    assert "the key 'question' is given twice" in str(table.errors[2])


def test_quoted_cells_are_read_back_as_written():
    assert quoted("=1+1") == "'=1+1" and quoted("- item") == "'- item" and quoted("plain") == "plain"
    assert [column_letter(i) for i in (0, 25, 26, 701, 702)] == ["A", "Z", "AA", "ZZ", "AAA"]


def test_a_quoted_csv_cell_loses_its_quote(tmp_path):
    path = tmp_path / "faq.csv"
    path.write_text("question,answer\nQ1,'- item\nQ2,'plain\n", encoding="utf-8")
    assert [r.values[1] for r in read_table(path).rows] == ["- item", "'plain"]


# --- hostile files: each bounded, each one line naming the file ----------------------------------


def test_a_workbook_that_unzips_to_more_than_the_limit_is_refused_before_it_is_opened(tmp_path):
    from ingest.tables import MAX_WORKBOOK_BYTES

    path = zip_bomb(tmp_path / "bomb.xlsx", MAX_WORKBOOK_BYTES + 2**20)
    assert path.stat().st_size < 2 * 2**20  # a megabyte or so, 257 MB once unzipped
    with pytest.raises(SourceError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}: expands to 257 MB when unzipped; a workbook may hold at most 256 MB (split it, or save it as CSV)"
    )


def test_a_sheet_that_declares_a_million_rows_a_thousand_wide_stops_at_the_cell_limit(tmp_path):
    """openpyxl fills every row out to the width the sheet declares, and the rows between out with empty ones:
    a few hundred bytes would give billions of cells."""

    def declared(sheet) -> None:
        sheet.write(
            SHEET_START + b'<dimension ref="A1:ALL1048576"/><sheetData>'
            b'<row r="1"><c r="A1" t="inlineStr"><is><t>question</t></is></c></row>'
            b'<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>Q</t></is></c></row></sheetData></worksheet>'
        )

    path = tmp_path / "wide.xlsx"
    workbook_with_sheet_xml(path, declared)
    with pytest.raises(SourceError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}: sheet 'FAQ', row 2001: more than 2,000,000 cells, the most a Q&A file may hold; split it into files"
    )


def test_a_million_row_csv_stops_at_the_row_limit(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("question,answer\n" + "".join(f"Q{i},A{i}\n" for i in range(1_000_000)), encoding="utf-8")
    with pytest.raises(SourceError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}: row 100001: more than 100,000 rows, the most a Q&A file may hold; split it into files"
    )


def test_a_csv_of_wide_rows_stops_at_the_cell_limit(tmp_path):
    path = tmp_path / "wide.tsv"
    path.write_text("question\tanswer\n" + ("Q\tA" + "\t" * 998 + "\n") * 2_001, encoding="utf-8")
    with pytest.raises(SourceError, match=r"wide.tsv: row 2001: more than 2,000,000 cells"):
        read_table(path)


def test_a_jsonl_line_nested_deep_is_named_and_the_other_lines_read(tmp_path):
    from ingest.tables import MAX_JSON_DEPTH

    path = tmp_path / "faq.jsonl"
    nested = '{"question": "Q2", "answer": "A2", "tags": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}"
    lines = ['{"question": "Q1", "answer": "A1"}', "[" * 100_000 + "]" * 100_000, nested]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = read_table(path)
    assert [str(e) for e in table.errors] == [
        f"{path}:{n}: JSON nested more than 16 deep; a line holds one object of text, lists and flags" for n in (2, 3)
    ]
    assert values(table) == [("", 1, 1, ("Q1", "A1"))]
