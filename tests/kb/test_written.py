"""The written answers' file (kb/written.py): what a maintainer may write, the rows it keeps, the entries a build
holds for them (the same as `kb ingest` parses from the file), and the snippet for an upstream FAQ file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ingest.markdown_faq import parse_source
from ingest.sources import read_sources
from kb.entries import Source
from kb.errors import AnswerRefused, SourceError
from kb.written import MAX_ANSWER, MAX_QUESTION, AnswerChanged, WrittenFile, snippet, written_answer

FAQS = {"roll": ("ROLL", {"zh": "ROLL 问答", "en": "ROLL Q&A"})}


def both() -> object:
    return written_answer(
        {"zh": "如何在昇腾 NPU 上训练？", "en": "How do I train on Ascend NPUs?"},
        {"zh": "设置 `device=npu`，见 https://example.com/npu", "en": "Set `device=npu`.\n\n```bash\nroll train\n```"},
        "npu, 硬件",
        "roll",
        FAQS,
    )


def test_the_file_holds_rows_kb_ingest_reads_into_the_same_entries(tmp_path: Path) -> None:
    file = WrittenFile(tmp_path / "written.jsonl")
    first = file.save(both())  # type: ignore[arg-type]
    second = file.save(written_answer({"en": "What is a  rollout\n worker?"}, {"en": "The process that generates."}))
    rows = [json.loads(line) for line in file.path.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {
        "id": first.id,
        "source": "roll-written",
        "lang": "zh",
        "question": "如何在昇腾 NPU 上训练？",
        "answer": "设置 `device=npu`，见 https://example.com/npu",
        "question_en": "How do I train on Ascend NPUs?",
        "answer_en": "Set `device=npu`.\n\n```bash\nroll train\n```",
        "tags": "npu, 硬件",
        "framework": "ROLL",
        "source_title": "ROLL 问答（维护者撰写）",
        "source_title_en": "ROLL Q&A (written by the maintainers)",
    }
    assert (
        rows[1]["source"] == "written"
        and rows[1]["lang"] == "en"
        and rows[1]["question"] == "What is a rollout worker?"
    )
    assert first.id.startswith("written-") and second.id.startswith("written-") and first.id != second.id

    built = file.entries()
    parsed = read_sources([], file.path)  # the written file alone, as `kb ingest` reads it
    assert parsed.entries == built and parsed.warnings == []
    assert built[0].tags[:3] == ("roll", "npu", "硬件") and built[0].framework == "ROLL"
    assert built[0].answer.endswith("<https://example.com/npu>")  # bare URLs made autolinks, as ingest does
    assert built[0].localized("en").question == "How do I train on Ascend NPUs?"
    assert built[1].tags[0] == "written" and built[1].file == "written.jsonl" and built[1].line == 2


def test_an_edit_keeps_the_id_and_a_removal_leaves_the_others(tmp_path: Path) -> None:
    file = WrittenFile(tmp_path / "written.jsonl")
    answer = file.save(both())  # type: ignore[arg-type]
    other = file.save(written_answer({"en": "Q two?"}, {"en": "A two."}))
    rows = file.path.read_text(encoding="utf-8").splitlines()
    kept = json.loads(rows[0]) | {"reviewer": "lin"}  # a field someone added by hand stays
    file.path.write_text("\n".join([json.dumps(kept, ensure_ascii=False), rows[1]]) + "\n", encoding="utf-8")
    edited = written_answer({"en": "How do I train on NPUs?"}, {"en": "Set device."}, answer_id=answer.id)
    file.save(edited)
    assert [a.id for a in file.read()] == [answer.id, other.id]
    assert file.get(answer.id).questions == {"en": "How do I train on NPUs?"}  # type: ignore[union-attr]
    assert json.loads(file.path.read_text(encoding="utf-8").splitlines()[0])["reviewer"] == "lin"
    assert file.remove(answer.id).id == answer.id  # type: ignore[union-attr]
    assert [a.id for a in file.read()] == [other.id]
    assert file.remove("written-00000000") is None


@pytest.mark.parametrize(
    ("questions", "answers", "tags", "faq", "field", "reason"),
    [
        ({}, {}, "", "", "question_zh", "nothing"),
        ({"zh": "   "}, {"zh": "  "}, "", "", "question_zh", "nothing"),
        ({"en": "How?"}, {"en": " \n "}, "", "", "answer_en", "no_answer"),
        ({"zh": ""}, {"zh": "答案"}, "", "", "question_zh", "no_question"),
        ({"en": "x" * (MAX_QUESTION + 1)}, {"en": "a"}, "", "", "question_en", "too_long"),
        ({"zh": "问"}, {"zh": "答" * (MAX_ANSWER + 1)}, "", "", "answer_zh", "too_long"),
        ({"en": "How?"}, {"en": "So."}, "t," * 300, "", "tags", "too_long"),
        ({"en": "How?"}, {"en": "So."}, "", "nope", "faq", "faq"),
    ],
)
def test_what_cannot_be_saved_is_refused_naming_the_field(
    questions: dict[str, str], answers: dict[str, str], tags: str, faq: str, field: str, reason: str
) -> None:
    with pytest.raises(AnswerRefused) as refused:
        written_answer(questions, answers, tags, faq, FAQS)
    assert (refused.value.field, refused.value.reason) == (field, reason)
    assert str(refused.value).startswith(f"{field}: ")


def test_a_line_that_is_not_an_answer_is_named(tmp_path: Path) -> None:
    path = tmp_path / "written.jsonl"
    path.write_text('{"id": "written-1", "question": "q", "answer": "a"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(SourceError) as failed:
        WrittenFile(path).read()
    assert str(failed.value).startswith(f"{path}:2: not a written answer")


@pytest.mark.parametrize("layout", ["headings", "list"])
def test_the_snippet_is_an_entry_of_an_upstream_faq_file(tmp_path: Path, layout: str) -> None:
    answer = both()
    for lang in ("zh", "en"):
        text = snippet(answer, lang, layout)  # type: ignore[arg-type]
        document = tmp_path / f"faq.{lang}.{layout}.md"
        document.write_text(f"# FAQ\n\n{text}", encoding="utf-8")
        source = Source("faq", document.name, "FAQ", "", lang, "", "", entries=layout)
        [entry] = parse_source(document, source)
        assert entry.question == answer.questions[lang]  # type: ignore[attr-defined]
        assert entry.answer.replace("<https://example.com/npu>", "https://example.com/npu") == answer.answers[lang]  # type: ignore[attr-defined]
    assert (
        snippet(answer, "en") == "## How do I train on Ascend NPUs?\n\nSet `device=npu`.\n\n```bash\nroll train\n```\n"
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", ["headings", "list"])
def test_a_heading_in_an_answer_stays_in_its_entry_in_the_snippet(tmp_path: Path, layout: str) -> None:
    answer = written_answer(
        {"en": "How do I resume?"}, {"en": "Use `--load`.\n\n## Step two\n\n```bash\n## a comment\n```"}
    )
    document = tmp_path / "faq.md"
    document.write_text(f"# FAQ\n\n{snippet(answer, 'en', layout)}", encoding="utf-8")
    source = Source("faq", document.name, "FAQ", "", "en", "", "", entries=layout)
    [entry] = parse_source(document, source)
    assert entry.question == "How do I resume?"
    assert entry.answer == "Use `--load`.\n\n**Step two**\n\n```bash\n## a comment\n```"


def test_a_written_file_a_manifest_lists_is_read_once(tmp_path: Path) -> None:
    """A deployment may keep the written answers in its own FAQ folder: the folder's default manifest lists
    the file, and the build reads it as that source, not twice."""
    file = WrittenFile(tmp_path / "written.jsonl")
    answer = file.save(written_answer({"en": "How do I get a GPU?"}, {"en": "Ask in #infra."}))
    parsed = read_sources([tmp_path], file.path)
    assert [e.id for e in parsed.entries] == [answer.id]
    assert read_sources([], tmp_path / "none.jsonl").entries == []  # no file yet: no entries, no error
    file.remove(answer.id)
    assert file.path.read_text(encoding="utf-8") == "" and read_sources([], file.path).entries == []


SAVE_MANY = """
import sys, time
from dataclasses import replace
from pathlib import Path
from kb.written import WrittenFile, written_answer
file = WrittenFile(Path(sys.argv[1]))
Path(sys.argv[1] + ".ready-" + sys.argv[2]).touch()
while not Path(sys.argv[1] + ".go").exists():  # all start together
    time.sleep(0.001)
for i in range(15):
    file.save(written_answer({"en": f"Question {sys.argv[2]}-{i}?"}, {"en": "Answer."}))
"""


def test_two_processes_saving_at_once_lose_no_answer(tmp_path: Path) -> None:
    """A server's workers are processes sharing the file: each change is made under a lock file, none is lost."""
    import subprocess
    import sys
    import time

    from tests.support.paths import ROOT

    path = tmp_path / "written.jsonl"
    runs = [subprocess.Popen([sys.executable, "-c", SAVE_MANY, str(path), name], cwd=ROOT) for name in ("a", "b", "c")]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("written.jsonl.ready-*"))) < 3:  # each has started and waits for the word
        assert time.monotonic() < deadline and all(run.poll() is None for run in runs)
        time.sleep(0.01)
    (tmp_path / "written.jsonl.go").touch()
    assert [run.wait(timeout=120) for run in runs] == [0, 0, 0]
    questions = sorted(a.questions["en"] for a in WrittenFile(path).read())
    assert questions == sorted(f"Question {name}-{i}?" for name in "abc" for i in range(15))


def test_an_answer_from_the_tracker_links_its_thread_as_kb_ingest_reads_it(tmp_path: Path) -> None:
    """An answer accepted from a harvested thread keeps the thread as its link, in both languages, the same
    whether the server builds it or `kb ingest` parses the file."""
    file = WrittenFile(tmp_path / "written.jsonl")
    thread = "https://github.com/THUDM/slime/issues/39"
    answer = replace(both(), extra={"url": thread, "harvested": [thread]})  # type: ignore[arg-type]
    file.save(answer)
    built = file.entries()
    parsed = read_sources([], file.path)
    assert parsed.entries == built
    assert built[0].url == thread and built[0].localized("en").url == thread


def test_a_save_over_another_version_than_its_form_was_opened_on_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "written.jsonl"
    first, second = WrittenFile(path), WrittenFile(path)  # two servers' (or two tabs') view of one file
    opened = first.save(written_answer({"en": "Q?"}, {"en": "A."}))
    version = first.get(opened.id).version  # type: ignore[union-attr]
    theirs = written_answer({"en": "Q?"}, {"en": "A, theirs."}, answer_id=opened.id)
    ours = written_answer({"en": "Q?"}, {"en": "A, ours."}, tags="npu", answer_id=opened.id)
    first.save(theirs, version)
    with pytest.raises(AnswerChanged, match=rf"written answer '{opened.id}': not saved, it was saved by someone else"):
        second.save(ours, version)
    [kept] = second.read()
    assert kept == theirs and kept.version != version
    try:
        second.save(ours, version)
    except AnswerChanged as changed:
        assert changed.current == theirs  # what the form shows beside the text being saved
    second.save(ours, kept.version)  # merged over the version shown
    assert [a.answers["en"] for a in first.read()] == ["A, ours."]
    latest = first.read()[0].version
    first.remove(opened.id)
    with pytest.raises(AnswerChanged, match="it was removed after the form was opened") as removed:
        second.save(ours, latest)
    assert removed.value.current is None and first.read() == []


def test_the_version_changes_with_every_field_of_the_row() -> None:
    answer = written_answer({"en": "Q?"}, {"en": "A."}, answer_id="written-00000001")
    changes = [
        replace(answer, questions={"en": "Q2?"}),
        replace(answer, answers={"en": "A2."}),
        replace(answer, tags=("npu",)),
        replace(answer, framework="slime"),
        replace(answer, extra={"url": "https://github.com/THUDM/slime/issues/1"}),
    ]
    assert len({answer.version, *(c.version for c in changes)}) == len(changes) + 1
    assert answer.version == written_answer({"en": "Q?"}, {"en": "A."}, answer_id="written-00000001").version
