"""The channel registry: a new channel is its package and one registry line (a test-only channel shows it), every
registered channel has what the app, /insights, /metrics and the docs need, and one that is off loads nothing."""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
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
    """`Channel.commands` names the module whose `add_parser` the `kb` parser calls: `kb ask` exists once the
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


CORE = ("server/settings.py", "server/error_handler.py", "server/middleware.py", "server/metrics.py")


def _packaged() -> list[str]:
    """The names of the channels that have a package of their own (the site's own three have none)."""
    return [c.name for c in CHANNELS if c.module.startswith(f"server.channels.{c.name}.")]


def _identifiers(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
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


def test_no_channel_is_named_in_the_core_or_in_the_library() -> None:
    """A channel's edges are in its package: the settings, the error handler, the middleware and the metrics name
    none of them (not even in a comment), and neither the library's code nor its string table does."""
    names = _packaged()
    assert {"slack", "feishu", "dingtalk", "mcp", "openai", "github"} <= set(names)
    word = re.compile("|".join(names) + "|lark", re.I)
    for path in CORE:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert [m.group(0) for m in word.finditer(text)] == [], path
    for path in sorted((ROOT / "kb").rglob("*.py")):
        named = [n for n in _identifiers(ast.parse(path.read_text(encoding="utf-8"))) if word.search(n)]
        assert named == [], path
    from kb.wording import strings

    assert [key for key in strings() if word.search(key)] == []
