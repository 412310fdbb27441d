"""Q&A files as sources: rows in, entries out (both languages, alternates, tags, ids, links), and every
malformed input an error naming its file, sheet, row and column, the previous index still serving."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest

from ingest import build_index
from ingest.manifest import load_manifest
from ingest.sources import read_sources
from kb.entries import entry_id
from kb.errors import SourceError
from kb.index import read_index
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from kb.written import WrittenAnswer


def write_csv(path: Path, rows: list[list[str]], delimiter: str = ",") -> Path:
    with open(path, "w", encoding="utf-8-sig", newline="") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)
    return path


def write_xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def manifest(folder: Path, text: str) -> None:
    (folder / "sources.toml").write_text(text, encoding="utf-8")


def parsed(folder: Path):
    return read_sources(folder)


TEAM = [
    ["问题", "答案", "相似问题", "标签", "英文问题", "英文答案", "分类", "备注"],
    ["如何续训？", "加上 `--load ckpt/`。\n见 [文档](docs/resume.md)", "断点续训\n恢复训练", "checkpoint", "How do I resume?",
     "Add `--load ckpt/`.", "训练", "ask Li"],
    ["How do I get GPU quota?", "Ask in #infra.", "gpu quota | quota for gpus", "", "", "", "", ""],
]  # fmt: skip


def test_rows_become_entries_in_both_languages_with_alternates_tags_and_links(tmp_path):
    write_csv(tmp_path / "team.csv", TEAM)
    manifest(
        tmp_path,
        '[[source]]\nname = "team"\nfile = "team.csv"\ntitle = { zh = "团队问答", en = "Team Q&A" }\n'
        'framework = "Team"\nlang = "zh"\nurl = "https://github.com/acme/docs/blob/4f2a9c1/team.csv"\n',
    )
    found = parsed(tmp_path)
    first, second = found.entries
    url = "https://github.com/acme/docs/blob/4f2a9c1/team.csv"
    assert (first.id, first.lang, first.question, first.section) == (
        entry_id("team", "如何续训？"),
        "zh",
        "如何续训？",
        "训练",
    )
    assert first.answer == "加上 `--load ckpt/`。\n见 [文档](https://github.com/acme/docs/blob/4f2a9c1/docs/resume.md)"
    assert (first.url, first.line, first.file) == (f"{url}#L2", 2, "team.csv")  # GitHub anchors a CSV's rendered row
    (english,) = first.translations
    assert (english.lang, english.question, english.answer, english.url) == (
        "en", "How do I resume?", "Add `--load ckpt/`.", f"{url}#L2",
    )  # fmt: skip
    assert first.tags[:2] == ("team", "checkpoint") and first.source_title_in("en") == "Team Q&A"
    # row 2 spans lines 2 to 4 (its answer and alternates have line breaks): row 3 starts on line 5
    assert (second.lang, second.translations, second.line, second.url) == ("en", (), 5, f"{url}#L5")
    assert [(q.question, q.lang, q.entry) for q in found.learned] == [
        ("断点续训", "zh", first.id),
        ("恢复训练", "zh", first.id),
        ("gpu quota", "en", second.id),
        ("quota for gpus", "en", second.id),
    ]
    assert found.warnings == [f"{tmp_path / 'team.csv'}: not a Q&A column, ignored: column H ('备注')"]


def test_ids_stay_when_rows_are_reordered_and_an_id_column_is_honoured(tmp_path):
    write_csv(tmp_path / "faq.csv", [TEAM[0][:2], TEAM[1][:2], TEAM[2][:2]])
    ids = [e.id for e in parsed(tmp_path).entries]
    write_csv(tmp_path / "faq.csv", [TEAM[0][:2], TEAM[2][:2], TEAM[1][:2]])
    assert [e.id for e in parsed(tmp_path).entries] == ids[::-1]
    write_csv(tmp_path / "faq.csv", [["id", "q", "a"], ["resume-1", "How to resume?", "`--load`"], ["", "Q", "A"]])
    assert [e.id for e in parsed(tmp_path).entries] == ["resume-1", entry_id("faq", "Q")]


def test_fastgpt_q_a_indexes_and_a_language_column(tmp_path):
    write_csv(
        tmp_path / "fastgpt.csv", [["q", "a", "indexes", "language"], ["OOM 怎么办？", "减小 batch", "显存不足", "zh"]]
    )
    (entry,) = parsed(tmp_path).entries
    assert (entry.question, entry.answer, entry.lang, entry.source) == ("OOM 怎么办？", "减小 batch", "zh", "fastgpt")


def test_a_source_column_makes_sources_of_their_own(tmp_path):
    rows = [
        ["source", "framework", "source_title", "source_title_en", "lang", "question", "answer"],
        ["infra", "Infra", "基础设施", "Infra FAQ", "zh", "怎么申请 GPU？", "找 #infra。"],
        ["onboarding", "", "", "", "en", "Where is the VPN guide?", "In the wiki."],
        ["infra", "", "", "", "en", "How to reset my password?", "Use the portal."],
    ]
    write_csv(tmp_path / "all.csv", rows)
    entries = parsed(tmp_path).entries
    assert [(e.source, e.framework, e.source_title_in("zh"), e.source_title_in("en")) for e in entries] == [
        ("infra", "Infra", "基础设施", "Infra FAQ"),
        ("onboarding", "", "onboarding", "onboarding"),
        ("infra", "Infra", "基础设施", "Infra FAQ"),
    ]
    assert entries[0].id == entry_id("infra", "怎么申请 GPU？") and entries[1].tags[0] == "onboarding"


def test_a_scope_column_scopes_its_source_and_two_rows_giving_two_scopes_are_an_error(tmp_path):
    rows = [
        ["source", "scope", "lang", "question", "answer"],
        ["npu", "NPU，昇腾", "zh", "NPU 显存不足", "调小 batch。"],
        ["npu", "", "en", "Slow vLLM on NPU", "Set the triton backend."],
        ["gpu", "", "en", "OOM with vLLM", "Lower gpu_memory_utilization."],
    ]
    write_csv(tmp_path / "all.csv", rows)
    assert [e.scope for e in parsed(tmp_path).entries] == [("NPU", "昇腾"), ("NPU", "昇腾"), ()]
    (tmp_path / "all.jsonl").write_text(
        json.dumps({"source": "npu", "scope": ["NPU", "Ascend"], "question": "Q", "answer": "A"}) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "all.csv").unlink()
    assert [e.scope for e in parsed(tmp_path).entries] == [("NPU", "Ascend")]
    rows[2][1] = "CANN"
    write_csv(tmp_path / "all.csv", rows)
    (tmp_path / "all.jsonl").unlink()
    with pytest.raises(SourceError, match=r"row 3.*scope of source 'npu' is 'NPU, 昇腾' on row 2: a source has one"):
        parsed(tmp_path)


def test_a_workbook_row_links_to_the_workbook_and_every_sheet_is_read(tmp_path):
    write_xlsx(
        tmp_path / "faq.xlsx",
        {"训练": [["问题", "答案"], ["如何续训？", "加 --load"]], "Notes": [["just notes"]], "Serving": [["question", "answer", "url"], ["Why 502?", "Restart.", "https://wiki/x"]]},
    )  # fmt: skip
    manifest(
        tmp_path,
        '[[source]]\nname = "faq"\nfile = "faq.xlsx"\ntitle = "FAQ"\nlang = "zh"\nurl = "https://x.org/faq.xlsx"\n',
    )
    found = parsed(tmp_path)
    assert [(e.question, e.url, e.line) for e in found.entries] == [
        ("如何续训？", "https://x.org/faq.xlsx", 2),
        ("Why 502?", "https://wiki/x", 2),
    ]
    assert found.warnings == [f"{tmp_path / 'faq.xlsx'}: sheet 'Notes' has no question or answer column: left out"]
    manifest(tmp_path, '[[source]]\nname = "faq"\nfile = "faq.xlsx"\ntitle = "FAQ"\nlang = "zh"\nsheet = "Serving"\n')
    assert [e.question for e in parsed(tmp_path).entries] == ["Why 502?"]


def test_not_covered_rows_are_learned_questions_not_entries(tmp_path):
    rows = [["question", "answer", "not_covered"], ["How do I train on NPUs?", "", "yes"], ["Q", "A", ""]]
    write_csv(tmp_path / "faq.csv", rows)
    found = parsed(tmp_path)
    assert [e.question for e in found.entries] == ["Q"]
    assert [(q.question, q.entry) for q in found.learned] == [("How do I train on NPUs?", None)]


# Each malformed input: the file, and what its one error says (file, sheet, row and column).
MALFORMED = {
    "no question column": (
        "faq.csv",
        [["问", "answer"], ["Q", "A"]][0:0] + [["title", "answer"], ["Q", "A"]],
        "faq.csv:1: row 1: no question column (one of: question, q, 问题, 标准问题, 问; or question_zh, question_en)",
    ),
    "no answer column": ("faq.xlsx", [["question", "notes"], ["Q", "A"]], "faq.xlsx: sheet 'FAQ', row 1: no answer column"),
    "an empty answer": (
        "faq.csv",
        [["问题", "答案"], ["Q1", "A1"], ["Q2", "  "]],
        "faq.csv:3: row 3, column B ('答案'): the answer is empty",
    ),
    "an unknown lang": (
        "faq.xlsx",
        [["question", "answer", "lang"], ["Q1", "A1", "fr"]],
        "faq.xlsx: sheet 'FAQ', row 2, column C ('lang'): unknown lang 'fr' (expected zh or en)",
    ),
    "a duplicate header": (
        "faq.csv",
        [["question", "answer", "问题"], ["Q1", "A1", "Q1"]],
        "faq.csv:1: row 1, column C ('问题'): the question column again, as column A ('question') is",
    ),
    "a formula where text belongs": (
        "faq.xlsx",
        [["question", "answer"], ["Q1", "=A2"]],
        "faq.xlsx: sheet 'FAQ', row 2, column B ('answer'): a formula (=A2) where text belongs: paste it as values",
    ),
    "a second language half given": (
        "faq.tsv",
        [["question", "answer", "question_en", "answer_en"], ["问题一", "答案一", "Question one", ""]],
        "faq.tsv:2: row 2, column D ('answer_en'): answer_en is empty, but question_en is not",
    ),
    "a duplicate question": (
        "faq.csv",
        [["question", "answer"], ["Q1", "A1"], ["Q1", "A2"]],
        "faq.csv:3: row 3, column A ('question'): question 'Q1' has the same id faq-",
    ),
    "a source described two ways": (
        "faq.csv",
        [["framework", "question", "answer"], ["Megatron", "Q1", "A1"], ["vLLM", "Q2", "A2"]],
        "faq.csv:3: row 3, column A ('framework'): the framework of source 'faq' is 'Megatron' on row 2: a source has one",
    ),
    "a JSONL line that is not JSON": ("faq.jsonl", ['{"question": "Q1", "answer": "A1"}', '{"question": "Q2",'], "faq.jsonl:2: not a JSON object"),
    "a JSONL empty answer": ("faq.jsonl", ['{"question": "Q1", "answer": ""}'], "faq.jsonl:1: field 'answer': the answer is empty"),
}  # fmt: skip


def write_any(path: Path, rows) -> None:
    if path.suffix == ".xlsx":
        write_xlsx(path, {"FAQ": rows})
    elif path.suffix == ".jsonl":
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    else:
        write_csv(path, rows, "\t" if path.suffix == ".tsv" else ",")


@pytest.mark.parametrize("case", list(MALFORMED))
def test_each_malformed_input_names_its_row_and_column(tmp_path, case):
    name, rows, message = MALFORMED[case]
    write_any(tmp_path / name, rows)
    with pytest.raises(SourceError) as info:
        parsed(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}/{message}")


def test_a_gbk_file_names_its_row_and_column(tmp_path):
    (tmp_path / "faq.csv").write_bytes("问题,答案\n".encode("gbk"))
    with pytest.raises(SourceError) as info:
        parsed(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'faq.csv'}:1: row 1, column A: not UTF-8 (byte b'\\xce' cannot be decoded); "
        "save it as UTF-8 (in Excel: Save As, 'CSV UTF-8')"
    )


def test_every_bad_cell_of_every_file_is_reported_at_once(tmp_path):
    rows = [
        ["question", "answer", "lang", "reviewed"],
        ["Q1", "", "en", ""],
        ["Q2", "A2", "de", "maybe"],
        ["Q3", "A3", "", ""],
    ]
    write_csv(tmp_path / "a.csv", rows)
    (tmp_path / "b.jsonl").write_text('{"question": "Q", "answer": "A", "tags": {"x": 1}}\n', encoding="utf-8")
    with pytest.raises(SourceError) as info:
        parsed(tmp_path)
    assert str(info.value).splitlines() == [
        f"{tmp_path / 'a.csv'}:2: row 2, column B ('answer'): the answer is empty",
        f"{tmp_path / 'a.csv'}:3: row 3, column C ('lang'): unknown lang 'de' (expected zh or en)",
        f"{tmp_path / 'a.csv'}:3: row 3, column D ('reviewed'): 'maybe' is not yes or no (true/false, 1/0, 是/否)",
        f"{tmp_path / 'b.jsonl'}:1: field 'tags': expected text, got dict {{'x': 1}}",
    ]


def test_a_row_may_not_take_the_name_of_another_files_source(tmp_path):
    (tmp_path / "ops.md").write_text("# Ops\n\n## How do I restart a node?\n\nRun `ops restart`.\n", encoding="utf-8")
    write_csv(tmp_path / "more.csv", [["source", "question", "answer"], ["ops", "Q", "A"]])
    with pytest.raises(SourceError, match=r"ops.md: source name 'ops' is also that of .*more.csv"):
        parsed(tmp_path)


def test_the_manifest_checks_sheet_and_translation_of_a_qa_file(tmp_path):
    write_csv(tmp_path / "faq.csv", TEAM[:2])
    head = '[[source]]\nname = "faq"\nfile = "faq.csv"\ntitle = "FAQ"\nlang = "zh"\n'
    manifest(tmp_path, head + 'sheet = "FAQ"\n')
    with pytest.raises(SourceError, match=r"sources.toml:6: source 'faq': sheet 'FAQ': 'faq.csv' is not a workbook"):
        load_manifest(tmp_path)
    manifest(tmp_path, head + '[source.translation]\nfile = "faq.csv"\nlang = "en"\n')
    with pytest.raises(SourceError, match=r"its other language goes in its own columns \(question_en, answer_en"):
        load_manifest(tmp_path)


@pytest.fixture
def workspace(tmp_path, settings):
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    (tmp_path / "faqs").mkdir()
    return Settings(data_dir=tmp_path / "data", sources_dir=tmp_path / "faqs")


def test_a_bad_spreadsheet_fails_the_ingest_and_the_previous_index_keeps_serving(workspace):
    path = write_xlsx(workspace.sources_dir / "team.xlsx", {"FAQ": TEAM})
    report = build_index(workspace)
    assert (report.entries, report.alternates) == (2, 4)
    assert any("column H ('备注')" in w for w in report.warnings)
    before = read_index(workspace.index_dir).meta
    write_xlsx(path, {"FAQ": TEAM + [["Q3", "=B2"]]})
    with pytest.raises(SourceError, match=r"team.xlsx: sheet 'FAQ', row 4, column B \('答案'\): a formula"):
        build_index(workspace)
    assert read_index(workspace.index_dir).meta == before
    kb = KnowledgeBase.open(workspace)
    assert kb.search_blocking("恢复训练").hits[0].entry.question == "如何续训？"  # an alternate finds its entry
    assert kb.search_blocking("gpu quota").hits[0].entry.question == "How do I get GPU quota?"


def test_jsonl_lists_and_flags(tmp_path):
    line = {"question": "Q", "answer": "A", "alternates": ["Q again", "Q | once more"], "tags": ["x"],
            "question_zh": "问", "answer_zh": "答", "translated_by_zh": "machine", "reviewed_zh": True}  # fmt: skip
    (tmp_path / "faq.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    found = parsed(tmp_path)
    (entry,) = found.entries
    assert (entry.lang, entry.tags[:2], entry.translations[0].translated_by, entry.translations[0].reviewed) == (
        "en", ("faq", "x"), "machine", True,
    )  # fmt: skip
    assert [q.question for q in found.learned] == ["Q again", "Q | once more"]


def test_kb_translate_says_a_qa_file_keeps_its_other_language_in_columns(tmp_path):
    from ingest.translate import TranslateError, translate

    write_csv(tmp_path / "faq.csv", TEAM[:2])
    with pytest.raises(TranslateError, match=r"faq.csv is a Q&A file: it keeps the other language in its own columns"):
        translate(Settings(data_dir=tmp_path / "data"), "faq", "en", tmp_path)


def test_a_hostile_file_fails_the_ingest_in_one_line_and_the_previous_index_keeps_serving(workspace):
    from ingest.tables import MAX_WORKBOOK_BYTES
    from tests.support.workbooks import zip_bomb

    write_xlsx(workspace.sources_dir / "team.xlsx", {"FAQ": TEAM})
    build_index(workspace)
    before = read_index(workspace.index_dir).meta
    bomb = zip_bomb(workspace.sources_dir / "bomb.xlsx", MAX_WORKBOOK_BYTES + 2**20)
    with pytest.raises(SourceError) as info:
        build_index(workspace)
    assert str(info.value) == (
        f"{bomb}: expands to 257 MB when unzipped; a workbook may hold at most 256 MB (split it, or save it as CSV)"
    )
    bomb.unlink()
    deep = workspace.sources_dir / "deep.jsonl"
    deep.write_text('{"question": "Q", "answer": "A"}\n' + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(SourceError) as info:
        build_index(workspace)
    assert (
        str(info.value) == f"{deep}:2: JSON nested more than 16 deep; a line holds one object of text, lists and flags"
    )
    assert read_index(workspace.index_dir).meta == before
    kb = KnowledgeBase.open(workspace)
    assert kb.search_blocking("恢复训练").hits[0].entry.question == "如何续训？"


def test_an_accepted_drafts_written_answer_reads_without_a_warning_its_link_the_thread(tmp_path: Path) -> None:
    """The written answers' file after an Accept on /insights (`harvested`: the threads it answers) is read by every
    `kb ingest` and `kb sync` with no warning about its own field, the entry's link marked as the tracker thread."""
    from ingest.sources import written_source
    from ingest.table_faq import parse_table
    from kb.harvest import Draft, ThreadQuestion
    from kb.harvest.accepted import answer_of
    from kb.written import WrittenFile, entry_of

    thread = "https://github.com/THUDM/slime/issues/7"
    draft = Draft(
        "THUDM/slime", 7, thread, "issue", "How do I run slime on Ascend NPUs?", "Use `--device npu`.", {},
        alternates=(ThreadQuestion("slime on NPU", "https://github.com/THUDM/slime/issues/9", 9),),
    )  # fmt: skip
    path = tmp_path / "written.jsonl"
    written = WrittenFile(path)
    accepted = written.save(answer_of(draft, {}))
    written.save(replace_question(answer_of(draft, {}), "Where is the manual?", "written-0000beef"))  # by hand
    found = parse_table(path, written_source(path))
    assert found.warnings == []
    by_id = {e.id: e for e in found.entries}
    assert by_id[accepted.id].url == thread and by_id[accepted.id].thread
    assert not by_id["written-0000beef"].thread  # an answer written by hand has no thread
    assert entry_of(accepted, 1, "written.jsonl").thread  # as the server builds it between ingests


def replace_question(answer: WrittenAnswer, question: str, answer_id: str) -> WrittenAnswer:
    """A written answer as one written by hand on the page: another id and question, no thread."""
    return replace(answer, id=answer_id, questions={"en": question}, extra={})
