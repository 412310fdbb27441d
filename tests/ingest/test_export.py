"""The export read back: each format gives the entries, their texts and the marked pairs of entries again."""

from __future__ import annotations

import json

import pytest

from ingest.export import export_rows, write_export
from ingest.sources import read_sources
from kb.duplicates import Duplicate, IntendedPair

ROWS = [
    {
        "question": "'=SUM(A1:A2) shows as text: why?",
        "answer": "'=SUM(A1:A2) is text in a sheet: the `'` keeps it from running.\n\n+ and - too: '+1, '-1",
        "question_zh": "为什么 '=A1 显示为文本？",
        "answer_zh": "'=A1 前的 `'` 让表格把它当作文本。",
    },
    {
        "question": "Where are the docs?",
        "answer": "See https://example.com/docs/start, or (https://example.com/a_b). Code: `https://x.y/z`",
        "question_zh": "文档在哪里？",
        "answer_zh": "见 https://example.com/zh/docs。",
    },
]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".xlsx", ".jsonl"])
def test_quotes_before_a_formula_bare_urls_and_marked_pairs_come_back(tmp_path, suffix):
    source = tmp_path / "source"
    source.mkdir()
    (source / "faq.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), "utf-8")
    before = read_sources(source).entries
    assert before[1].answer.startswith("See <https://example.com/docs/start>, or (<https://example.com/a_b>).")
    pair = Duplicate(before[0].id, before[1].id, 0.9, 0.9, 0.9, ("en",), intended="Both\nanswered: on purpose")
    out = tmp_path / "out"
    out.mkdir()
    write_export(out / f"faq{suffix}", export_rows(before, duplicates=[pair]))
    again = read_sources(out)
    assert [(e.id, e.question, e.answer, [(t.question, t.answer) for t in e.translations]) for e in again.entries] == [
        (e.id, e.question, e.answer, [(t.question, t.answer) for t in e.translations]) for e in before
    ]
    assert [(p.first, p.second, p.why) for p in again.intended] == [
        (before[0].id, before[1].id, "Both answered: on purpose")
    ]


def test_the_export_writes_bare_urls_as_the_author_did_and_quotes_a_quoted_formula(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "faq.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), "utf-8")
    write_export(tmp_path / "faq.csv", export_rows(read_sources(source).entries))
    text = (tmp_path / "faq.csv").read_text("utf-8-sig")
    assert "See https://example.com/docs/start, or (https://example.com/a_b). Code: `https://x.y/z`" in text
    assert "<https://" not in text
    assert "\"''=SUM(A1:A2) is text in a sheet" in text  # one `'` more, which reading takes off


def test_a_bad_intended_duplicates_cell_names_its_row_and_column(tmp_path):
    (tmp_path / "faq.csv").write_text("question,answer,intended_duplicates\nQ1,A1,other-entry\n", "utf-8")
    with pytest.raises(Exception) as info:
        read_sources(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'faq.csv'}:2: row 2, column C ('intended_duplicates'): "
        "expected `entry-id: why` a line, got 'other-entry'"
    )


def test_a_mark_in_a_row_is_a_pair_with_its_place(tmp_path):
    (tmp_path / "faq.csv").write_text("question,answer,有意重复\nQ1,A1,faq-x: kept on purpose\n", "utf-8")
    (entry,) = read_sources(tmp_path).entries
    assert read_sources(tmp_path).intended == [
        IntendedPair(entry.id, "faq-x", "kept on purpose", f"{tmp_path / 'faq.csv'}:2")
    ]
