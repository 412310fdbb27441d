"""The `kb` command as a user runs it: a real process, its output, its exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def kb(*args: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(KB_DATA_DIR=str(data_dir), **env)
    return subprocess.run(
        [sys.executable, "-m", "kb.cli", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300
    )


def test_search_prints_question_source_score_and_link(settings):
    run = kb("search", "how do I resume training in slime", data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "1. How do I resume training?"
    assert lines[1].startswith("   slime · 2025-06-30 · score ")
    assert lines[2] == "   https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/en/qa.md?plain=1#L34"


def test_search_hl_picks_the_version_shown_and_says_when_there_is_none(settings):
    run = kb("search", "how do I resume training in slime", "--hl", "zh", "-k", "1", data_dir=settings.data_dir)
    assert run.stdout.splitlines()[0] == "1. 如何续训？"
    run = kb("search", "Unable to pre-compile async_io", "-k", "1", data_dir=settings.data_dir)
    lines = run.stdout.splitlines()
    assert lines[0] == "1. Unable to pre-compile async_io"
    assert lines[1] == "   (This entry has no English version; it is shown in Chinese.)"


def test_search_json_has_the_api_fields(settings):
    run = kb("search", "续训", "--json", data_dir=settings.data_dir)
    body = json.loads(run.stdout)
    assert body["query"] == "续训" and body["answered"] is True
    assert body["hl"] == "zh"
    assert set(body["hits"][0]) == {
        "id", "question", "answer", "score", "source", "url", "section", "tags", "lang", "languages",
    }
    assert body["hits"][0]["question"] == "如何续训？"


def test_eval_prints_figures_by_language(settings):
    run = kb("eval", str(ROOT / "tests" / "data" / "dev.jsonl"), "--json", data_dir=settings.data_dir)
    report = json.loads(run.stdout)
    assert set(report["by_lang"]) == {"en", "zh"}
    assert report["out_of_scope"] == {"queries": 5, "abstained": 5}


def test_eval_explain_shows_each_miss_with_its_signals(settings):
    run = kb("eval", str(ROOT / "tests" / "data" / "dev.jsonl"), "--explain", data_dir=settings.data_dir)
    assert run.returncode == 0
    assert "out of scope: 5/5 abstained" in run.stdout
    misses = [line for line in run.stdout.splitlines() if line.startswith("dev-")]
    assert misses, "the development set still has misses to explain"
    assert "cos " in run.stdout and " bg " in run.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", "oom"), "no index here yet; run `kb ingest`"),
        (("ingest", "--sources", "/no/such/folder"), "/no/such/folder"),
        (("eval", "/no/such/file.jsonl"), "/no/such/file.jsonl: no such query file"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(tmp_path, args, message):
    run = kb(*args, data_dir=tmp_path / "empty")
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("kb: error: ") and message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_bad_setting_is_named(tmp_path):
    run = kb("search", "oom", data_dir=tmp_path, KB_TOP_K="lots")
    assert (run.returncode, run.stderr.strip()) == (2, "kb: error: setting KB_TOP_K='lots': expected a whole number")


@pytest.mark.parametrize("command", ["ingest", "search", "eval", "serve"])
def test_every_command_has_help(tmp_path, command):
    run = kb(command, "--help", data_dir=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith(f"usage: kb {command}")


def test_serve_refuses_a_corrupt_index_with_one_line(tmp_path, settings):
    data = tmp_path / "data"
    (data / "index").mkdir(parents=True)
    (data / "index" / "meta.json").write_text("{not json", encoding="utf-8")
    run = kb("serve", "--port", "0", data_dir=data)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().startswith(f"kb: error: index {data / 'index'}: meta.json is not a kb index manifest")
