"""The docs' generated sections (tools/gendocs.py) say what the code says: the module map, the `kb` command's
reference, the settings tables, the metrics table and the channel list are written from the code, and a section
that is out of date fails here with the command that rewrites it."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import ROOT

COMMAND = "python tools/gendocs.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gendocs", ROOT / "tools" / "gendocs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gendocs = _load()
module_map = importlib.import_module("tools.module_map")  # on the path gendocs puts the checkout on


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gendocs.py"), *args], capture_output=True, text=True, cwd=ROOT
    )


def pages_copy(tmp_path: Path) -> Path:
    """The pages with generated sections, copied under `tmp_path` as a checkout holds them."""
    for page in {page for page, _ in gendocs.SECTIONS.values()}:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    return tmp_path


def test_every_generated_section_is_up_to_date() -> None:
    stale = gendocs.stale()
    assert not stale, "out of date:\n" + "\n".join(stale) + f"\nrun `{COMMAND}` and commit the pages it rewrites"


def test_the_check_names_the_stale_section_and_the_command_that_rewrites_it(tmp_path: Path) -> None:
    root = pages_copy(tmp_path)
    settings_page = root / "docs" / "settings.md"
    text = settings_page.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `KB_ADMIN_TOKEN`"))
    settings_page.write_text(text.replace(row + "\n", ""), encoding="utf-8")  # a setting whose row was lost

    checked = run("--check", "--root", str(root))
    assert checked.returncode == 1
    assert checked.stderr.splitlines() == [
        "out of date: docs/settings.md: section `settings-server`",
        f"run `{COMMAND}` and commit the pages it rewrites",
    ]
    assert settings_page.read_text(encoding="utf-8") != text  # --check wrote nothing

    rewritten = run("--root", str(root))
    assert rewritten.returncode == 0 and rewritten.stdout == "rewrote docs/settings.md\n"
    assert settings_page.read_text(encoding="utf-8") == text
    assert run("--check", "--root", str(root)).returncode == 0
    assert run("--root", str(root)).stdout == ""  # a second run changes nothing: the output is stable


def test_a_page_that_lost_its_markers_is_named(tmp_path: Path) -> None:
    root = pages_copy(tmp_path)
    page = root / "docs" / "deployment.md"
    page.write_text(page.read_text(encoding="utf-8").replace("<!-- generated: metrics", "<!-- metrics"), "utf-8")
    checked = run("--check", "--root", str(root))
    assert checked.returncode == 2
    assert checked.stderr == "gendocs: error: docs/deployment.md: no `<!-- generated: metrics -->` marker line\n"


def test_text_outside_the_sections_is_kept() -> None:
    page = "intro\n<!-- generated: cli (python tools/gendocs.py) -->\nold\n<!-- end generated -->\nafter\n"
    assert gendocs.rewrite(page, "cli", "new\n", "docs/x.md") == (
        "intro\n<!-- generated: cli (python tools/gendocs.py) -->\nnew\n\n<!-- end generated -->\nafter\n"
    )
    with pytest.raises(gendocs.GenerationError, match="the section `cli` has no `<!-- end generated -->`"):
        gendocs.rewrite("<!-- generated: cli -->\nold\n", "cli", "new", "docs/x.md")


def test_a_new_module_appears_in_the_map_and_one_without_a_docstring_is_named(tmp_path: Path) -> None:
    (tmp_path / "kb" / "shelf").mkdir(parents=True)
    (tmp_path / "kb" / "__init__.py").write_text('"""The library."""\n')
    (tmp_path / "kb" / "shelf" / "__init__.py").write_text('"""Shelves: where\nthings go. Then more.\n\nMore."""\n')
    (tmp_path / "kb" / "zeta.py").write_text('"""Zeta | the last."""\n')
    (tmp_path / "kb" / "alpha.py").write_text("'''Alpha.'''\nimport torch\n")  # read, never imported
    assert module_map.module_rows("kb", tmp_path) == [
        ("kb/", "The library."),
        ("kb/alpha.py", "Alpha."),
        ("kb/shelf/", "Shelves: where things go."),
        ("kb/zeta.py", "Zeta | the last."),
    ]
    (tmp_path / "kb" / "bare.py").write_text("x = 1\n")
    with pytest.raises(gendocs.GenerationError, match=r"^kb/bare\.py: no docstring"):
        module_map.module_rows("kb", tmp_path)


def test_the_map_lists_every_module_of_the_four_packages() -> None:
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("<!-- generated: modules", 1)[1]
    for package in ("kb", "ingest", "server", "kbcli"):
        for path in (ROOT / package).rglob("*.py"):
            name = path.relative_to(ROOT).as_posix().removesuffix("__init__.py")
            assert f"| `{name}` |" in section, name
    for named in ("kb/confidence.py", "server/votes.py", "server/channels/github/command.py"):
        assert f"| `{named}` |" in section


def test_every_argument_of_the_kb_command_has_help() -> None:
    """The reference has no empty cell: each command, subcommand and argument says what it is."""
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "|  |" not in reference
    for command in ("kb ingest", "kb serve", "kb links remove", "kb github answer", "kb sync"):
        assert f"`{command}`" in reference


def test_the_metrics_declared_are_those_read_from_the_code() -> None:
    names = [name for name, _, _, _ in gendocs.metric_rows(ROOT / "server" / "metrics.py")]
    assert names == sorted(set(names)) and {"kb_search_seconds", "kb_http_requests", "kb_index_info"} <= set(names)


def test_the_exempt_paths_are_those_the_rate_limit_leaves_out() -> None:
    from server.error_handler import rate_exempt

    assert gendocs.exempt_paths() == rate_exempt()


def test_generating_loads_no_model_and_no_web_server() -> None:
    """It imports the parser, the settings and the registry: no torch, no index, no FastAPI app."""
    script = (
        "import json, runpy, sys\n"
        f"gendocs = runpy.run_path({str(ROOT / 'tools' / 'gendocs.py')!r})\n"
        "for name, (page, make) in gendocs['SECTIONS'].items():\n"
        "    make()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'sentence_transformers', 'faiss', 'uvicorn', 'fastapi') or m in ('kb.knowledge', 'kb.embedding'))))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(loaded.stdout) == []


def test_the_fields_a_channel_declares_are_each_explained_once() -> None:
    """docs/adding-a-channel.md's table of `Channel`'s fields names each field of the dataclass, and no other."""
    from dataclasses import fields

    from server.channels.channel import Channel

    page = (ROOT / "docs" / "adding-a-channel.md").read_text(encoding="utf-8")
    section = page.split("## What a channel declares", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]
    named = [name for row in rows for name in row.strip("| ").replace("`", "").split(", ")]
    assert sorted(named) == sorted(f.name for f in fields(Channel))
