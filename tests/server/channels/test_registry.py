"""The channel registry: a new channel is its package and one registry line (a test-only channel shows it), every
registered channel has what the app, /insights, /metrics and the docs need, and one that is off loads nothing."""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.channels import CHANNELS, registry
from server.routes.channel_colours import channel_css
from tests.docs.test_links import anchors
from tests.support.ask_channel import registered
from tests.support.paths import ROOT

RESUME_EN = "how do I resume training in slime?"


def test_a_channel_registered_in_one_line_is_mounted_recorded_and_drawn(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel = registered(monkeypatch)
    with TestClient(create_app(settings.with_(admin_token="secret", rate_limit="1/hour"))) as client:
        answer = client.get("/ask/", params={"q": RESUME_EN})
        searched = client.get("/api/search", params={"q": RESUME_EN}).json()
        assert searched["answered"] and answer.status_code == 200
        assert answer.text == searched["hits"][0]["answer"]
        for _ in range(3):  # a platform's channel is not counted by the browser rate limit (1 an hour here)
            assert client.get("/ask/", params={"q": RESUME_EN}).status_code == 200
        missing = client.get("/ask/nothing-here")
        assert missing.status_code == 404 and missing.json()["ok"] is False  # its errors are JSON
        metrics = client.get("/metrics").text
        assert 'kb_questions_total{channel="ask",kind="search",outcome="answered"}' in metrics
        css = client.get("/channels.css")
    assert css.status_code == 200 and f".series-ask {{ fill: {channel.colour};" in css.text


def test_a_channel_that_is_off_answers_404_naming_its_settings_and_imports_nothing(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(monkeypatch)
    sys.modules.pop("tests.support.ask_channel.routes", None)
    with TestClient(create_app(settings.with_(admin_token=""))) as client:
        off = client.post("/ask/anything")
    assert off.status_code == 404 and off.json()["error"] == "the plain-text channel is off: set KB_ADMIN_TOKEN"
    assert "tests.support.ask_channel.routes" not in sys.modules


def test_an_app_with_no_channel_configured_imports_no_platform_sdk() -> None:
    script = (
        "import sys, json\n"
        "from server.app import create_app\n"
        "from server.settings import ServerSettings\n"
        "create_app(ServerSettings.from_env({}))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'lark_oapi')"
        " or m.startswith(('server.channels.slack.', 'server.channels.feishu.', 'server.channels.dingtalk.',"
        " 'server.channels.mcp.')) and not m.endswith('.settings'))))\n"
    )  # a channel's settings are part of its declaration, which the settings compose: only `kb.settings` below
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(loaded.stdout) == []


@pytest.mark.parametrize("channel", CHANNELS, ids=lambda c: c.name)
def test_every_channel_has_a_label_in_both_languages_a_colour_and_a_docs_section(channel: Any) -> None:
    assert channel.label("en").strip() and channel.label("zh").strip()
    assert f".series-{channel.name} {{ fill: {channel.colour};" in channel_css()
    assert f".series-{channel.name} {{ fill: {channel.colour_dark};" in channel_css()
    page, _, anchor = channel.docs.partition("#")
    assert (ROOT / page).is_file() and anchor in anchors(ROOT / page), channel.docs


def test_the_channels_colours_tell_them_apart() -> None:
    assert len({c.colour for c in CHANNELS}) == len(CHANNELS)
    assert len({c.colour_dark for c in CHANNELS}) == len(CHANNELS)
    assert len(set(registry.names())) == len(CHANNELS)


def test_a_question_from_a_channel_the_registry_does_not_have_counts_as_other(settings: Any) -> None:
    from kb.events import Searched
    from kb.hits import SearchResult
    from server.metrics import Metrics

    metrics = Metrics()
    metrics.hear(Searched(SearchResult("q", ()), "nowhere", 0.0, None, None))
    exposition = metrics.exposition().decode()
    assert 'channel="other"' in exposition and "nowhere" not in exposition


def test_a_channels_own_command_is_added_to_the_kb_command(
    settings: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The channel's plugin's `add_parser` is called by the `kb` parser: `kb ask` exists once the
    test-only channel is registered, and finds the entry the search finds."""
    from kbcli.cli import build_parser, main

    def commands() -> set[str]:
        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
        return set(sub.choices)

    assert "ask" not in commands()
    registered(monkeypatch)
    assert "ask" in commands()
    for name, value in (("KB_DATA_DIR", str(settings.data_dir)), ("KB_RATE_LIMIT", "off")):
        monkeypatch.setenv(name, value)
    assert main(["ask", RESUME_EN]) == 0
    printed = capsys.readouterr().out.strip()
    with TestClient(create_app(settings)) as client:
        assert printed == client.get("/api/search", params={"q": RESUME_EN}).json()["hits"][0]["id"]


# Read whole, comments included: the settings, the error handler, the middleware and the metrics name no channel.
STRICT = ("server/settings.py", "server/error_handler.py", "server/middleware.py", "server/metrics.py")
# Each core module's code that names a channel, and why it stays: (module, the name as found, lower-cased): reason.
NAMED: dict[tuple[str, str], str] = {
    ("kb/folds.py", "github"): "the folds group the labelled questions by repository, read from their URLs, which are "
    "GitHub threads: the data's shape, not a channel's",
    ("kb/hyperlinks.py", "github"): "TRACKER_HOSTS: the host of the tracker threads the harvest drafts from, which an "
    "entry's links are told apart by; the library cannot import the tracker to ask it",
    ("kb/harvest/threads.py", "github"): "the thread format the harvest reads (gh's JSON, the REST API's issues) and "
    "the bots it leaves out: the format's own names, read here because kb/ never imports trackers/",
    ("kb/harvest/rules.py", "github"): "links to a pull request, issue or commit of the tracker do not make an answer "
    "a documentation link: the tracker's URL shape, which the rules read from the thread's text",
    ("kb/harvest/notes.py", "github"): "a reference to a fix (a pull request's URL or #N) in a thread's text: the "
    "tracker's URL shape, as the rules read it",
    ("kb/harvest/drafts.py", "github"): "a draft's repository and pull request, read from the thread's URLs",
    ("kb/harvest/condense.py", "github"): "the prompt tells the model what it reads, a GitHub issue thread; "
    "rewording it changes every draft the harvest writes",
    ("kb/settings.py", "github"): "KB_HARVEST_ASSOCIATIONS's help: its values are GitHub's author associations",
    ("kb/settings.py", "openai"): "an OpenAI-compatible endpoint names the API the LLM speaks, not the channel",
    ("kb/insights/deliveries.py", "github"): "the table github_deliveries, as migration 10 created it: renaming a "
    "table is a migration of its own",
    ("kb/insights/migrations.py", "github"): "the migrations as they were applied to every database (tables "
    "github_deliveries, and the GitHub rows of pending_answers and of claims): a migration is never rewritten",
    ("kb/insights/migrations.py", "slack"): "the migrations as they were applied to every database (the columns "
    "slack_team and slack_channel, renamed by migration 5): a migration is never rewritten",
}


def _packaged() -> list[str]:
    """The names of the channels that have a package of their own (the site's own three have none)."""
    return [c.name for c in CHANNELS if type(c.plugin).__module__ == f"server.channels.{c.name}"]


def _core() -> list[str]:
    """The channel-neutral modules: the library (kb/), the server outside its channels' packages, and the `kb`
    command (kbcli/)."""
    paths = [*(ROOT / "kb").rglob("*.py"), *(ROOT / "kbcli").rglob("*.py")]
    paths += [p for p in (ROOT / "server").rglob("*.py") if "channels" not in p.relative_to(ROOT / "server").parts]
    return sorted(p.relative_to(ROOT).as_posix() for p in paths if "__pycache__" not in p.parts)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and its functions: prose, which may name a channel as
    an example."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _code(tree: ast.AST) -> Iterator[str]:
    """The names and the strings (SQL, URLs, patterns, messages) of a module's code, its docstrings left out."""
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield node.value
        elif isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def named_channels(paths: list[str], word: re.Pattern[str]) -> set[tuple[str, str]]:
    """(module, channel name lower-cased) for each channel name in the code of the modules at `paths`."""
    found = set()
    for path in paths:
        for text in _code(ast.parse((ROOT / path).read_text(encoding="utf-8"), path)):
            found |= {(path, m.group(0).lower()) for m in word.finditer(text)}
    return found


def test_no_channel_is_named_in_the_core_or_in_the_library() -> None:
    """A channel's edges are in its package: no core module's code names one, in a name, a string or its SQL, but
    those in NAMED, each with its reason (an entry no longer needed fails too); the settings, the error handler,
    the middleware and the metrics name none even in a comment, and the library's string table none."""
    names = _packaged()
    assert {"slack", "feishu", "dingtalk", "mcp", "openai", "github"} <= set(names)
    word = re.compile("|".join(names) + "|lark", re.I)
    core = _core()
    assert len(core) > 150 and "server/harvesting.py" in core and "kb/insights/claims.py" in core
    found = named_channels(core, word)
    assert sorted(found - set(NAMED)) == [], "a channel named in the core"
    assert sorted(set(NAMED) - found) == [], "no longer named: remove its entry"
    for path in STRICT:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert [m.group(0) for m in word.finditer(text)] == [], path
    from kb.wording import strings

    assert [key for key in strings() if word.search(key)] == []


def test_a_channel_named_in_a_string_or_in_sql_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table named for a channel in SQL, or its URL in a string, is found; a docstring naming one as an example
    is prose and is not."""
    source = '''"""Deliveries, as the Feishu bot sends them."""\nSQL = "SELECT key FROM slack_seen"\nURL = f"https://{HOST}/github"\n'''
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "seen.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = named_channels(["kb/seen.py"], re.compile("slack|github|feishu", re.I))
    assert found == {("kb/seen.py", "slack"), ("kb/seen.py", "github")}


def test_a_registered_package_that_declares_no_channel_is_named() -> None:
    with pytest.raises(ValueError, match=r"channel package tests\.support: .* declares no CHANNEL"):
        registry.declared(("server.channels.web", "tests.support"))
    assert [c.name for c in registry.declared(("server.channels.web", "server.channels.mcp"))] == [
        "web",
        "widget",
        "api",
        "mcp",
    ]
