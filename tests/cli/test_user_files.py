"""Every `kb` command that reads a file a user wrote (`kb eval` and `kb calibrate` a JSONL question set,
`kb links import` a FAQ folder's learned-question files) on the files a team may start with: empty, one
line, all out of scope, all one entry, the wrong format. Each works (exit status 0) or says in one line
what is wrong, naming the file and, where it applies, the line (exit status 2); none ends in a traceback
(an exception escaping `main`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.settings import Settings
from kbcli.cli import main

RESUME = "slime-b0ab398d"  # slime's "How do I resume training?"


def jsonl(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


QUESTIONS = {
    "empty": ("", "no queries in the file", None),
    "one line": (jsonl({"id": "a", "q": "how do I resume training", "expect": [RESUME]}), None, None),
    "all out of scope": (
        jsonl(*({"id": f"o{i}", "q": q, "expect": []} for i, q in enumerate(["上海有什么好吃的", "write a poem"]))),
        None,  # kb eval measures abstention; kb calibrate has nothing to fit the ranking on
        None,
    ),
    "all one entry": (
        jsonl(
            *(
                {"id": f"r{i}", "q": q, "expect": [RESUME]}
                for i, q in enumerate(
                    ["how do I resume training", "如何续训", "resume from a checkpoint", "续训怎么做"]
                )
            )
        ),
        None,
        None,
    ),
    "a JSON array": ('[{"id": "a", "q": "how do I resume training", "expect": []}]\n', "a JSON list", 1),
    "CSV": ("id,q,expect\na,how do I resume training,\n", "not JSON", 1),
    "a string expect": (jsonl({"id": "a", "q": "resume", "expect": RESUME}), "'expect' is", 1),
    "no question": (jsonl({"id": "a", "expect": []}), "no 'q' field", 1),
    "an expect that names no entry": (
        jsonl({"id": "a", "q": "resume", "expect": [RESUME]}, {"id": "b", "q": "x", "expect": ["no-such-entry"]}),
        None,  # kb eval counts it a miss
        None,
    ),
}
# What kb eval warns of (at the file's line) while it counts the question a miss.
EVAL_WARNS = {
    "an expect that names no entry": "2: 'expect' ['no-such-entry'] names no entry of the index; counted as a miss",
}

# What kb calibrate refuses beyond what kb eval does, and where.
CALIBRATE_REFUSES = {
    "all out of scope": ("2 questions, none with an answer: at least 1 answerable question is needed", None),
    "an expect that names no entry": ("'expect' ['no-such-entry'] names no entry of the index", 2),
}


@pytest.fixture
def data_dir(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory of its own (for its insights database) serving the session's index."""
    path = tmp_path / "data"
    path.mkdir()
    (path / "index").symlink_to(settings.index_dir.resolve())
    for name in [k for k in os.environ if k.startswith("KB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KB_DATA_DIR", str(path))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))  # an exception escaping here is the traceback a user would see
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(err: str, path: Path, message: str, line: int | None) -> None:
    where = f"{path}:{line}: " if line else f"{path}"
    assert len(err.splitlines()) == 1 and err.startswith(f"kb: error: {where}"), err
    assert message in err


@pytest.mark.slow
@pytest.mark.parametrize("case", list(QUESTIONS))
@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_a_question_file_works_or_is_one_line(
    command: str, case: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message, line = QUESTIONS[case]
    if command == "calibrate" and case in CALIBRATE_REFUSES:
        message, line = CALIBRATE_REFUSES[case]
    path = tmp_path / "questions.jsonl"
    path.write_text(text, encoding="utf-8")
    output = tmp_path / "calibration.json"
    argv = [command, str(path)] + (["--output", str(output)] if command == "calibrate" else [])
    code, out, err = run(capsys, *argv)
    if message is None:
        warning = EVAL_WARNS.get(case, "") if command == "eval" else ""
        assert code == 0 and "abstained" in out
        assert err == (f"kb: warning: {path}:{warning}\n" if warning else "")
        assert output.exists() == (command == "calibrate")
    else:
        assert code == 2 and out == "" and not output.exists()
        assert_one_line(err, path, message, line)


def test_kb_eval_and_calibrate_name_a_directory_given_as_the_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["eval", str(tmp_path)], ["calibrate", str(tmp_path), "--output", str(tmp_path / "c.json")]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.startswith(f"kb: error: {tmp_path}: cannot be read") and len(err.splitlines()) == 1


ALTERNATES = "slime.alternates.toml"
LEARNED = {
    "empty": ({ALTERNATES: ""}, None, None),
    "one line": ({"not-covered.toml": "[[not_covered]]\n"}, "missing required field 'question'", 1),
    "all out of scope": (
        {
            "not-covered.toml": '[[not_covered]]\nquestion = "上海有什么好吃的"\nlang = "zh"\n\n'
            '[[not_covered]]\nquestion = "write a poem"\nlang = "en"\n'
        },
        None,
        None,
    ),
    "all one entry": (
        {
            ALTERNATES: "".join(
                f'[[alternate]]\nquestion = "{q}"\nlang = "{lang}"\nentry = "{RESUME}"\n\n'
                for q, lang in [("续训", "zh"), ("resume it", "en")]
            )
        },
        None,
        None,
    ),
    "JSON": ({ALTERNATES: '{"alternate": [{"question": "resume it"}]}\n'}, "TOML syntax error", 1),
}


@pytest.mark.parametrize("case", list(LEARNED))
def test_kb_links_import_works_or_is_one_line(
    case: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, message, line = LEARNED[case]
    folder = tmp_path / "faq"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "links", "import", "--sources", str(folder))
    if message is None:
        count = sum(text.count("question =") for text in files.values())
        assert code == 0 and out.startswith(f"{count} of {count} learned questions in {folder} added as links"), err
        assert json.loads(run(capsys, "links", "list", "--json")[1]).__len__() == count
    else:
        assert code == 2 and out == ""
        [path] = [folder / name for name in files]
        assert_one_line(err, path, message, line)
