"""The `kb` command as a user runs it: a real process, its output, its exit code."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import kb, kb_process
from tests.support.duplicates_faq import ACROSS, CONVERT, CONVERT_AGAIN, URL, WITHIN, intended, write_team_faqs
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port


@pytest.mark.slow
def test_search_brief_prints_question_source_score_and_link(settings):
    run = kb("search", "how do I resume training in slime", "--brief", data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "1. How do I resume training?"
    assert lines[1].startswith("   slime · 2025-06-30 · score ")
    assert (
        lines[2]
        == "   https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/en/qa.md?plain=1#L34"
    )


@pytest.mark.slow
def test_search_prints_the_time_of_the_search_alone_not_the_loading(settings, monkeypatch):
    """The time printed leaves out opening the index: opening it is made 2 s slower here, and the time printed is
    still at most the run's time less those 2 s (no bound in ms: a loaded machine slows the search too)."""
    from kb.knowledge import KnowledgeBase

    real_open = KnowledgeBase.open

    def slow_open(*args, **kwargs):
        time.sleep(2.0)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(KnowledgeBase, "open", slow_open)
    started = time.perf_counter()
    run = kb("search", "如何续训 slime 断点", "--brief", data_dir=settings.data_dir)
    wall_ms = (time.perf_counter() - started) * 1000
    assert run.returncode == 0, run.stderr
    printed = re.fullmatch(r"\((\d+) ms\)", run.stderr.strip().splitlines()[-1])
    assert printed and int(printed[1]) <= wall_ms - 2000, (run.stderr, wall_ms)


@pytest.mark.slow
def test_search_time_is_a_line_of_its_own_after_the_answer_under_2_and_1(settings):
    """`kb search ... 2>&1 | less`: the answer whole, then the time on its own line (not glued onto a line of it)."""
    # PYTHONUNBUFFERED unset: standard output to a pipe is buffered, as a user's is.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_") and k != "PYTHONUNBUFFERED"}
    run = subprocess.run(
        [sys.executable, "-m", "kbcli.cli", "search", "how do I resume training in slime"],
        cwd=ROOT,
        env={**environment, "KB_DATA_DIR": str(settings.data_dir), "KB_ANSWER_PRECISION": "0.6"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout
    lines = run.stdout.splitlines()
    assert lines[0] == "How do I resume training?", run.stdout
    assert re.fullmatch(r"\(\d+ ms\)", lines[-1]), run.stdout
    assert [line for line in lines[:-1] if "ms)" in line] == []


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_stopped_by_ctrl_c_or_sigterm_exits_0(settings, stop):
    """So `make serve` ends quietly on Ctrl-C, not with `make: *** [serve] Terminated`."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env={**environment, "KB_DATA_DIR": str(settings.data_dir), "KB_ANSWER_PRECISION": "0.6"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal: a test runner in the background may have started with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert wait_for_port(port, process), process.communicate()[1]
        process.send_signal(stop)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "Finished server process" in err, err
    assert process.returncode == 0, err


@pytest.mark.slow
def test_search_hl_picks_the_version_shown_and_says_when_it_is_a_translation(settings):
    run = kb(
        "search", "how do I resume training in slime", "--hl", "zh", "-k", "1", "--brief", data_dir=settings.data_dir
    )
    assert run.stdout.splitlines()[0] == "1. 如何续训？"
    run = kb("search", "Unable to pre-compile async_io", "-k", "1", "--brief", data_dir=settings.data_dir)
    lines = run.stdout.splitlines()
    assert lines[0] == "1. Unable to pre-compile async_io"
    assert lines[1] == (
        "   (Translated from the Chinese original by this knowledge base's maintainers. Original: "
        "https://github.com/LLM-Frame-Group/Target-Daliy/blob/9cb966b1dd94baa08436bf70d02b808a14f7f596/"
        "week3-error-collection.md?plain=1#L16)"
    )
    run = kb("search", "Unable to pre-compile async_io", "-k", "1", "--brief", "--hl", "zh", data_dir=settings.data_dir)
    assert run.stdout.splitlines()[1].startswith("   DeepSpeed · 2023-06-20 · score ")


@pytest.mark.slow
def test_search_json_has_the_api_fields(settings):
    run = kb("search", "续训", "--json", data_dir=settings.data_dir)
    body = json.loads(run.stdout)
    assert body["query"] == "续训" and body["answered"] is True
    assert body["hl"] == "zh"
    from server.schemas import HitOut, SourceOut

    # The API's hit, but for what only a server has: the rendered answer and the entry's page there.
    assert set(body["hits"][0]) == set(HitOut.model_fields) - {"answer_html", "permalink"}
    assert set(body["hits"][0]["source"]) == set(SourceOut.model_fields)
    assert body["shown"] >= 1
    assert body["hits"][0]["question"] == "如何续训？"


@pytest.mark.slow
def test_eval_prints_figures_by_language(settings):
    run = kb("eval", str(ROOT / "tests" / "data" / "dev.jsonl"), "--json", data_dir=settings.data_dir)
    report = json.loads(run.stdout)
    assert set(report["by_lang"]) == {"en", "zh"}
    stored = json.loads((ROOT / "tests" / "data" / "eval_report.json").read_text(encoding="utf-8"))["dev"]
    assert report["out_of_scope"] == stored["out_of_scope"]


@pytest.mark.slow
def test_eval_warns_of_an_expect_naming_no_entry_and_counts_it_a_miss(settings, tmp_path):
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"id": "a", "q": "多个 reward model 的训练流程", "expect": ["多个reward模型"]},
        {"id": "b", "q": "how do I resume training", "expect": ["no-such-entry"]},
    ]
    queries.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    run = kb("eval", str(queries), "--json", data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"kb: warning: {queries}:2: 'expect' ['no-such-entry'] names no entry of the index; counted as a miss"
    ]
    assert json.loads(run.stdout)["overall"]["recall_at_1"] == 0.5


@pytest.mark.slow
def test_eval_explain_shows_each_miss_with_its_signals(settings):
    run = kb("eval", str(ROOT / "tests" / "data" / "holdout.jsonl"), "--explain", data_dir=settings.data_dir)
    assert run.returncode == 0
    stored = json.loads((ROOT / "tests" / "data" / "eval_report.json").read_text(encoding="utf-8"))["holdout"]
    assert f"out of scope: {stored['out_of_scope']['abstained']}/20 abstained" in run.stdout
    misses = [line for line in run.stdout.splitlines() if line.startswith("ho-")]
    assert misses, "the holdout set still has misses to explain"
    assert "cos " in run.stdout and " bg " in run.stdout
    # Each channel's declared point: GitHub's comment mode (0.9) and suggest mode (0.7), beside the default.
    assert "  github comment mode at precision 0.9: answers " in run.stdout
    assert "  github suggest mode at precision 0.7: answers " in run.stdout


@pytest.mark.slow
def test_eval_reads_a_whole_issue_as_the_bot_does_and_prints_each_question(settings):
    from kb.issue_question import question_of

    path = ROOT / "tests" / "data" / "whole_issues.jsonl"
    issues = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    run = kb("eval", str(path), "--questions", data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["id"] for line in lines] == [issue["id"] for issue in issues]
    assert [line["question"] for line in lines] == [question_of(i["title"], i["body"]) for i in issues]
    # the trace's error, not its command: what the bot searches with
    assert lines[2]["question"].endswith("AssertionError: Unable to pre-compile async_io")
    for line in lines:
        assert set(line) == {"id", "question", "first", "confidence", "state", "right", "answers"}
        assert set(line["answers"]) == {"default (KB_ANSWER_PRECISION)", "github comment mode", "github suggest mode"}
        # a draft is written wherever a comment would be: suggest mode's point is the lower
        assert line["answers"]["github suggest mode"] >= line["answers"]["github comment mode"]
    figures = kb("eval", str(path), data_dir=settings.data_dir).stdout
    assert f"{len(issues)} of {len(issues)} questions are whole issues, read as a tracker's bot reads them" in figures
    assert "  github comment mode at precision 0.9: answers " in figures
    points = json.loads(kb("eval", str(path), "--json", data_dir=settings.data_dir).stdout)["points"]
    assert (points["github comment mode"]["point"], points["github suggest mode"]["point"]) == (0.9, 0.7)
    assert points["github comment mode"]["answered"] <= points["github suggest mode"]["answered"]


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", ""), "kb: error: the query is empty"),
        (("search", "oom", "--tag", "nope"), "kb: error: --tag: unknown tag 'nope'; known: attention, batch-size, "),
        (("search", "oom", "--source", "nowhere"), "kb: error: --source: unknown source 'nowhere'; known: chatlearn, "),
    ],
)
def test_a_bad_search_is_told_in_the_commands_own_words(settings, args, message):
    run = kb(*args, data_dir=settings.data_dir)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert run.stderr.startswith(message)
    assert "q:" not in run.stderr and "tag:" not in run.stderr.replace("--tag:", "")


def test_bad_setting_is_named(tmp_path):
    run = kb("search", "oom", data_dir=tmp_path, KB_TOP_K="lots")
    assert (run.returncode, run.stderr.strip()) == (2, "kb: error: setting KB_TOP_K='lots': expected a whole number")


@pytest.mark.parametrize("command", ["ingest", "search", "eval", "serve", "export"])
def test_every_command_has_help(tmp_path, command):
    run = kb(command, "--help", data_dir=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith(f"usage: kb {command}")


def test_every_command_module_is_assembled_into_the_parser_in_its_place():
    """A module of kbcli/ that adds a command is in COMMANDS (one left out would be a command no one can run),
    and `kb --help` lists the commands in COMMANDS' order, the channels' own (`kb mcp`, `kb github`) after `kb sync`."""
    import argparse
    import importlib

    from kbcli.cli import COMMANDS, all_commands, build_parser

    modules = sorted(p.stem for p in (ROOT / "kbcli").glob("*.py"))
    adding = [name for name in modules if hasattr(importlib.import_module(f"kbcli.{name}"), "add_parser")]
    assert sorted(command.__name__.removeprefix("kbcli.") for command in COMMANDS) == adding
    listed = []
    for command in all_commands():
        sub = argparse.ArgumentParser().add_subparsers()
        command.add_parser(sub)
        listed += list(sub.choices)
    [subcommands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(subcommands.choices) == listed
    assert listed[:3] == ["ingest", "translate", "search"] and listed[-3:] == ["link", "links", "tune"]
    after = listed.index("sync") + 1
    assert listed[after : after + 2] == ["mcp", "github"]  # the channels' own, in the registry's order


@pytest.mark.slow
def test_kb_help_in_a_process_of_its_own(tmp_path):
    """The command as a user starts it (`python -m kbcli.cli`): its smoke test."""
    run = kb_process("--help", data_dir=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("usage: kb ")


@pytest.mark.slow
def test_serve_refuses_a_corrupt_index_with_one_line(tmp_path, settings):
    data = tmp_path / "data"
    (data / "index").mkdir(parents=True)
    (data / "index" / "meta.json").write_text("{not json", encoding="utf-8")
    run = kb("serve", "--port", "0", data_dir=data)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().startswith(f"kb: error: index {data / 'index'}: meta.json is not a kb index manifest")


@pytest.mark.slow
def test_search_prints_the_best_answer_rendered_for_a_terminal(settings):
    run = kb("search", "sglang illegal memory access", data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Sglang shows an “an illegal memory access was encountered” error."
    assert lines[1].startswith("slime · 2025-06-30 · https://github.com/THUDM/slime/blob/")
    answer = "\n".join(lines[2:])
    assert "Consider reducing the value of --sglang-mem-fraction-static." in answer.replace("\n", " ")
    assert "`" not in answer  # Markdown rendered, not shown as source
    assert any("--sglang-mem-fraction-static" in line for line in lines)  # the identifier on one line, whole


@pytest.mark.slow
def test_search_keeps_code_blocks_verbatim_and_identifiers_whole(settings):
    run = kb("search", "Unable to pre-compile async_io", data_dir=settings.data_dir)
    lines = run.stdout.splitlines()
    assert "set DS_BUILD_OPS=1   # for win - Set-Item Env:\\DS_BUILD_OPS 0" in lines  # spacing kept
    assert (
        "[WARNING] If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS "
        "environment variables to where it can be found." in lines
    )  # longer than 80 columns, not wrapped
    assert any("SPARSE_ATTN" in line for line in lines if not line.startswith("set "))


@pytest.mark.slow
def test_search_reads_a_pasted_trace_from_standard_input(settings):
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/sglang/srt/managers/scheduler.py", line 1920, in run_scheduler\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    # every first hit given (precision 0.25): this reads the trace
    run = kb("search", "-", "--brief", data_dir=settings.data_dir, stdin=trace, KB_ANSWER_PRECISION="0.25")
    assert run.returncode == 0, run.stderr
    assert "illegal memory access" in run.stdout.splitlines()[0]


@pytest.mark.slow
def test_links_are_percent_encoded_for_terminals(settings):
    run = kb("search", "如何开启 Efficient memory sharing 功能", "--brief", "-k", "1", data_dir=settings.data_dir)
    link = run.stdout.splitlines()[-1].strip()
    assert link.startswith("https://github.com/alibaba/ChatLearn/") and link.isascii() and " " not in link
    assert "#%E5%A6%82%E4%BD%95" in link  # 如何


@pytest.mark.slow
def test_no_answer_offers_three_nearest(settings):
    run = kb("search", "asdfqwerzxcv", "-k", "10", data_dir=settings.data_dir)
    lines = run.stdout.splitlines()
    assert lines[0] == "The FAQ has no confident answer to this. Nearest entries, which may not answer it:"
    assert [line[:3] for line in lines if line[:1].isdigit()] == ["1. ", "2. ", "3. "]


@pytest.mark.slow
def test_eval_shows_progress_on_a_terminal_only(settings):
    import pty

    queries = str(ROOT / "tests" / "data" / "dev.jsonl")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KB_")}, "KB_DATA_DIR": str(settings.data_dir)}
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "eval", queries, "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    out, _ = process.communicate(timeout=300)
    os.close(leader)
    assert process.returncode == 0 and json.loads(out)["out_of_scope"]["queries"] == 5
    assert b"eval" in drawn and b"64/64" in drawn
    piped = kb("eval", queries, "--json", data_dir=settings.data_dir)
    assert piped.returncode == 0 and "64/64" not in piped.stderr


@pytest.fixture
def data_dir(tmp_path, settings):
    """A data directory holding the session's embedding cache, and no index yet."""
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    return tmp_path / "data"


def own_faq(folder: Path) -> Path:
    folder.mkdir()
    (folder / "team-faq.md").write_text(
        "# Team FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
        "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only.\n",
        encoding="utf-8",
    )
    return folder


@pytest.mark.slow
def test_ingest_says_what_the_index_holds_and_what_it_replaces(tmp_path, data_dir):
    first = kb("ingest", data_dir=data_dir)
    assert first.returncode == 0, first.stderr
    assert "the index holds 6 sources, from " in first.stdout
    assert ["slime", "13", "entries", "en+zh", "slime", "Q&A"] in [line.split() for line in first.stdout.splitlines()]
    assert "replaces" not in first.stdout  # there was no index before
    assert "2 near-duplicate pairs marked as intended in sources.toml" in first.stdout.splitlines()
    assert "near-duplicate entries:" not in first.stdout  # the shipped FAQs' two pairs are marked
    mine = own_faq(tmp_path / "mine")
    run = kb("ingest", "--sources", str(mine), data_dir=data_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert f"the index holds 1 source, from {mine}:" in lines
    assert ["team-faq", "2", "entries", "en", "Team", "FAQ"] in [line.split() for line in lines]
    assert (
        "it replaces an index of chatlearn-v1 (12), roll (11), slime (13), chatlearn (6), training-env (17), roll-npu (16)"
        in lines
    )
    assert "no longer in the index: chatlearn-v1, roll, slime, chatlearn, training-env, roll-npu" in lines
    assert "(to keep the shipped FAQs beside yours: kb ingest --with-shipped --sources DIR)" in lines


@pytest.mark.slow
def test_ingest_names_each_near_duplicate_pair_by_both_entries_places(tmp_path, data_dir):
    folder = write_team_faqs(tmp_path / "team", intended(*WITHIN))
    run = kb("ingest", "--sources", str(folder), data_dir=data_dir)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    at = lines.index(
        "near-duplicate entries: 1 pair so alike that a question for one may get the other "
        "(merge them, or mark a pair in sources.toml as [[intended_duplicates]]):"
    )
    assert re.fullmatch(
        rf"  0\.\d\d  {ACROSS[0]}  zh-faq\.md:3  {CONVERT}  {re.escape(URL)}#megatron-\S+", lines[at + 1]
    )
    assert lines[at + 2] == f"        {ACROSS[1]}  ops.md:3  {CONVERT_AGAIN}"  # no url: its file and line
    assert "1 near-duplicate pair marked as intended in sources.toml" in lines


@pytest.mark.slow
def test_ingest_of_several_sources_indexes_them_all(tmp_path, data_dir):
    mine = own_faq(tmp_path / "mine")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "ops.md").write_text(
        "# Ops\n\n## How do I restart a node?\n\nRun `ops restart NODE`.\n", encoding="utf-8"
    )
    # In processes of their own, as a user runs them: the command's smoke test (the rest run in this process).
    run = kb_process("ingest", "--sources", str(mine), "--sources", str(theirs), data_dir=data_dir)
    assert run.returncode == 0, run.stderr
    assert f"the index holds 2 sources, from {mine}, {theirs}:" in run.stdout
    assert re.search(r"^  ops +1 entry  ", run.stdout, re.M) and "1 entries" not in run.stdout, run.stdout
    assert re.search(r"^  team-faq +2 entries  ", run.stdout, re.M), run.stdout
    assert "ops.md" in kb_process("search", "restart a node", "--brief", data_dir=data_dir).stdout
    run = kb("ingest", "--with-shipped", "--sources", str(mine), data_dir=data_dir)
    assert run.returncode == 0, run.stderr
    assert "the index holds 7 sources" in run.stdout and "it replaces an index of team-faq (2), ops (1)" in run.stdout
    found = kb("search", "slime 如何续训", "--brief", "-k", "1", data_dir=data_dir).stdout
    assert found.startswith("1. 如何续训？")
    assert "team-faq.md:7" in kb("search", "where are the shared checkpoints", "--brief", data_dir=data_dir).stdout


@pytest.mark.slow
def test_ingest_reports_every_bad_file_and_keeps_the_index(tmp_path, data_dir):
    mine = own_faq(tmp_path / "mine")
    assert kb("ingest", "--sources", str(mine), data_dir=data_dir).returncode == 0
    (mine / "a-empty.md").write_text("", encoding="utf-8")
    (mine / "b-no-questions.md").write_text("# Notes\n\nNothing asked here.\n", encoding="utf-8")
    (mine / "c-binary.md").write_bytes("## Q?\n\nA\n".encode() + b"\xff\xfe\n")
    run = kb("ingest", "--sources", str(mine), data_dir=data_dir)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        f"kb: error: {mine / 'a-empty.md'}: file is empty",
        f"kb: error: {mine / 'b-no-questions.md'}: no entries found: expected '## question' headings (entries = 'headings')",
        f"kb: error: {mine / 'c-binary.md'}:4: not UTF-8: byte b'\\xff' cannot be decoded",
    ]
    assert "How do I get GPU quota?" in kb("search", "GPU quota", "--brief", data_dir=data_dir).stdout


def test_ingest_sources_given_a_file_says_it_is_a_file(tmp_path):
    faq = own_faq(tmp_path / "mine") / "team-faq.md"
    run = kb("ingest", "--sources", str(faq), data_dir=tmp_path / "data")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"kb: error: {faq}: is a file; the sources are a directory of FAQ Markdown (for this file: {faq.parent})"
    ]


def test_search_shows_the_answer_that_may_answer_under_its_line_then_the_others(settings):
    run = kb("search", "how do I resume training in slime?", data_dir=settings.data_dir, KB_ANSWER_PRECISION="0.8")
    assert run.returncode == 0, run.stderr
    opening, rest = run.stdout.split("\n", 1)
    assert opening.startswith("The first entry may answer this (confidence 0.") and "not certain" in opening
    said, others = rest.split("\nOther entries:\n", 1)
    assert "How do I resume training?" in said and "Simply set the" in said and "--load" in said
    assert others.startswith("2. ") and "How do I resume training?" not in others
