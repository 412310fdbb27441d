"""The ingest pipeline: embeds only what changed, and a failed ingest leaves the old index serving."""

from __future__ import annotations

import shutil
import time

import pytest

from ingest import build_index, index_is_stale, parse_sources
from kb.errors import SourceError
from kb.index import read_index
from kb.knowledge import KnowledgeBase
from kb.settings import SHIPPED_SOURCES, Settings


@pytest.fixture
def workspace(tmp_path, settings):
    """A data directory seeded with the session's embedding cache, and a copy of the sources."""
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, sources)
    return Settings(data_dir=tmp_path / "data", sources_dir=sources)


@pytest.mark.slow
def test_reingest_of_unchanged_sources_embeds_nothing_and_keeps_ids(workspace):
    first = build_index(workspace)
    ids = [e.id for e in read_index(workspace.index_dir).entries]
    again = build_index(workspace)
    assert (again.entries, again.embedded) == (75, 0)
    assert [e.id for e in read_index(workspace.index_dir).entries] == ids
    assert first.meta.sources_hash == again.meta.sources_hash
    assert not index_is_stale(workspace)


@pytest.mark.slow
def test_changed_source_makes_the_index_stale_and_embeds_only_the_change(workspace):
    build_index(workspace)
    notes = workspace.sources_dir / "training-env.md"
    notes.write_text(notes.read_text(encoding="utf-8") + "\n1. **新加的问题？**\n\n   新的回答。\n", encoding="utf-8")
    english = workspace.sources_dir / "training-env.en.md"
    english.write_text(
        english.read_text(encoding="utf-8") + "\n1. **A new question?**\n\n   A new answer.\n", encoding="utf-8"
    )
    assert index_is_stale(workspace)
    report = build_index(workspace)
    assert (report.entries, report.passages, report.embedded) == (76, 152, 2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "slime.md: file is empty"),
        ("# 只有标题\n\n没有任何问题。\n".encode(), "slime.md: no entries found"),
        ("1. **问题**\n\n   回答\n".encode() + b"\xff\xfe broken\n", "slime.md:4: not UTF-8"),
    ],
)
def test_broken_source_is_named_and_the_old_index_keeps_serving(workspace, content, message):
    build_index(workspace)
    before = read_index(workspace.index_dir).meta
    (workspace.sources_dir / "slime.md").write_bytes(content)
    with pytest.raises(SourceError) as info:
        build_index(workspace)
    assert message in str(info.value)
    assert read_index(workspace.index_dir).meta == before
    assert KnowledgeBase.open(workspace).search_blocking("如何续训").hits[0].entry.question == "如何续训？"


def test_missing_sources_directory_is_named(tmp_path):
    with pytest.raises(SourceError, match="nowhere"):
        build_index(Settings(data_dir=tmp_path, sources_dir=tmp_path / "nowhere"))


@pytest.mark.slow
def test_a_folder_of_plain_markdown_needs_no_manifest(tmp_path, settings):
    folder = tmp_path / "my-faq"
    folder.mkdir()
    (folder / "team-faq.md").write_text(
        "# Team FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
        "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only.\n",
        encoding="utf-8",
    )
    workspace = Settings(data_dir=tmp_path / "data", sources_dir=folder)
    report = build_index(workspace)
    assert report.entries == 2
    kb = KnowledgeBase.open(workspace)
    hit = kb.search_blocking("where can I find the shared checkpoints").hits[0]
    assert (hit.entry.question, hit.entry.source) == ("Where are the shared checkpoints?", "team-faq")


@pytest.mark.slow
@pytest.mark.parametrize("word", ["a" * 200_000, "-" * 200_000, "a." * 100_000, "--" + "a-" * 100_000])
def test_a_source_with_a_200000_character_word_is_parsed_and_tagged_in_seconds(tmp_path, word):
    folder = tmp_path / "my-faq"
    folder.mkdir()
    text = f"# Team FAQ\n\n## What is this word?\n\n{word}\n\nThen `num_gpus` OOM.\n"
    (folder / "team-faq.md").write_text(text, encoding="utf-8")
    started = time.monotonic()
    [entry] = parse_sources(folder)
    assert time.monotonic() - started < 30  # the tag patterns had taken minutes; a loaded machine takes a few seconds
    assert entry.answer.endswith("Then `num_gpus` OOM.") and {"oom", "resources"} <= set(entry.tags)
