"""The source readers: a format is its module and one line of `READERS` (a test-only reStructuredText reader shows
it, through `kb ingest` to a search), every reader is named in the docs, and a reader's errors name file and line."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ingest import readers
from ingest.sources import read_sources
from kb.errors import SourceError
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from kb.staleness import index_is_stale
from tests.support import rst_reader
from tests.support.cli import kb
from tests.support.paths import ROOT

FAQ = (
    "How do I resume training from a checkpoint?\n"
    "-------------------------------------------\n\n"
    "Pass ``--load`` with the checkpoint folder; the optimizer state is read from it.\n\n"
    "Why does the reward stay flat?\n"
    "==============================\n\n"
    "Check that the reward model's tokenizer is the policy's.\n"
)


def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with the test-only reader's line added, for the rest of the test."""
    monkeypatch.setattr(readers, "READERS", (*readers.READERS, "tests.support.rst_reader"))


def test_a_format_registered_in_one_line_is_ingested_searched_and_watched(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(monkeypatch)
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "training.rst").write_text(FAQ, encoding="utf-8")
    data = tmp_path / "data"
    shutil.copytree(settings.cache_dir, data / "cache")
    run = kb("ingest", "--sources", str(folder), data_dir=data)
    assert run.returncode == 0, run.stderr
    workspace = Settings(data_dir=data, sources_dir=folder)
    hit = KnowledgeBase.open(workspace).search_blocking("resume training from a checkpoint").hits[0]
    assert (hit.entry.question, hit.entry.source, hit.entry.line) == (
        "How do I resume training from a checkpoint?",
        "training",
        1,
    )
    assert hit.entry.answer.startswith("Pass ``--load``") and hit.entry.tags
    assert not index_is_stale(workspace)
    (folder / "training.rst").write_text(FAQ.replace("flat", "at zero"), encoding="utf-8")
    assert index_is_stale(workspace)  # an edit of a file of the new format makes the index stale


def test_a_readers_fault_names_the_file_and_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registered(monkeypatch)
    (tmp_path / "faq.rst").write_text("Intro\n\nA question?\n---\n\nAn answer.\n", encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        read_sources(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'faq.rst'}:4: the underline of 'A question?' is shorter than the title"


def test_without_its_line_a_format_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "faq.rst").write_text(FAQ, encoding="utf-8")
    with pytest.raises(SourceError, match=r"no sources\.toml and no \*\.md files"):
        read_sources(tmp_path)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.py") if "__pycache__" not in p.parts}


def test_adding_a_format_is_its_module_and_one_registry_line(tmp_path: Path) -> None:
    """A copy of the ingest package with the test-only reader added as a user would add one: its module in
    ingest/readers/ and its line in READERS; nothing else changes, and the copy reads the new format."""
    shutil.copytree(ROOT / "ingest", tmp_path / "ingest", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "ingest" / "readers" / "rst.py").write_text(
        (ROOT / "tests" / "support" / "rst_reader.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    registry = tmp_path / "ingest" / "readers" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    last = '    "ingest.readers.written",\n'
    registry.write_text(text.replace(last, last + '    "ingest.readers.rst",\n'), encoding="utf-8")

    before, after = _tree(ROOT / "ingest"), _tree(tmp_path / "ingest")
    changed = sorted(name for name in after if before.get(name) != after[name])
    assert changed == ["readers/__init__.py", "readers/rst.py"] and set(before) <= set(after)
    lines = difflib.ndiff(text.splitlines(), registry.read_text(encoding="utf-8").splitlines())
    assert [line for line in lines if line[:1] in "+-"] == ['+     "ingest.readers.rst",']

    folder = tmp_path / "faqs"
    folder.mkdir()
    (folder / "training.rst").write_text(FAQ, encoding="utf-8")
    script = (
        "import json, sys, ingest\n"
        "from ingest.sources import read_sources\n"
        "print(json.dumps([ingest.__file__] + [e.question for e in read_sources(sys.argv[1]).entries]))\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-c", script, str(folder)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [
        str(tmp_path / "ingest" / "__init__.py"),
        "How do I resume training from a checkpoint?",
        "Why does the reward stay flat?",
    ]


def test_every_reader_is_a_reader_with_its_own_suffixes_each_named_in_the_docs() -> None:
    found = readers.readers()
    assert [r.name for r in found] == ["Markdown document", "Q&A file", "written answers' file"]
    suffixes = [s for r in found for s in r.suffixes]
    assert len(suffixes) == len(set(suffixes)) and all(s == s.lower() and s.startswith(".") for s in suffixes)
    guide = (ROOT / "docs" / "your-faqs.md").read_text(encoding="utf-8")
    assert all(f"`{s}`" in guide for s in suffixes), [s for s in suffixes if f"`{s}`" not in guide]


def test_a_module_in_the_registry_without_a_reader_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "READERS", (*readers.READERS, "tests.support.paths"))
    with pytest.raises(Exception, match=r"tests\.support\.paths: its READER is not a source reader"):
        readers.readers()


def test_a_manifest_file_of_no_known_suffix_is_read_as_markdown_as_before() -> None:
    assert readers.reader_for("notes.txt") is readers.readers()[0]
    assert readers.reader_for("team.CSV").name == "Q&A file"
    assert rst_reader.READER.suffixes == (".rst",)
