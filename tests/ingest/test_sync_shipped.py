"""The shipped FAQs synced from local repositories holding their pinned files give exactly today's entries and ids."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from ingest.changes import plain
from ingest.manifest import load_manifest
from ingest.sources import read_sources
from ingest.sync import sync
from ingest.upstream import edit_manifest
from kb.index import read_index
from kb.settings import SHIPPED_SOURCES, Settings
from tests.support.git_repos import Upstream

pytestmark = pytest.mark.slow

_BLOB = re.compile(r"https://github\.com/([^/]+/[^/]+)/blob/[^/]+/(.+)$")


def upstreams_of_shipped(tmp_path: Path) -> Path:
    """A copy of the shipped sources whose every source names a local repository (one per GitHub repository
    the pinned urls name) holding its file, and its translation's, at the path the url gives."""
    sources = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, sources)
    text = (sources / "sources.toml").read_text(encoding="utf-8")
    repos: dict[str, Upstream] = {}
    for source in load_manifest(sources):
        repo, link_path = _BLOB.match(source.url).groups()  # type: ignore[union-attr]
        path = unquote(link_path)  # the file's path in the repository: "User Guides", not "User%20Guides"
        upstream = repos.get(repo) or repos.setdefault(repo, Upstream(tmp_path / "upstream" / repo))
        files = {path: (sources / source.file).read_text(encoding="utf-8")}
        other = source.translation
        translated = _BLOB.match(other.url) if other is not None and other.url else None
        if other is not None and translated is not None:
            files[unquote(translated[2])] = (sources / other.file).read_text(encoding="utf-8")
        commit = upstream.commit(f"{source.name} as pinned", files)
        text = edit_manifest(text, source.name, {"repo": upstream.url, "path": path, "ref": commit})
        if translated is not None:
            text = edit_manifest(text, source.name, {"path": unquote(translated[2]), "ref": commit}, translation=True)
    (sources / "sources.toml").write_text(text, encoding="utf-8")
    return sources


def test_the_shipped_faqs_synced_from_their_pinned_files_are_todays_entries(tmp_path, settings):
    sources = upstreams_of_shipped(tmp_path)
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    report = sync(ours)
    assert report is not None and report.outcome == "built"
    assert len(report.pins) == 6
    today = read_sources(SHIPPED_SOURCES).entries
    synced = read_index(ours.index_dir).entries
    assert [e.id for e in synced] == [e.id for e in today]
    assert len(synced) == 75

    def text(entries):
        return [(v.question, plain(v.answer), v.section, v.lang, v.line) for e in entries for v in e.versions()] + [
            e.tags for e in entries
        ]

    assert text(synced) == text(today)
    # With no build yet, the sync compares with the folder's files: the same text, only the pins moved.
    assert not any(report.changes)
    again = sync(ours)
    assert again is not None and again.outcome == "unchanged"


def test_the_shipped_sources_name_their_upstream_at_their_pins() -> None:
    """Each shipped source's `repo`, `path` and `ref` (and its translation's) are those of its pinned link, so a
    sync of a copy of the folder reads the very files the links pin (and writes the same links)."""
    from ingest.upstream import load_upstreams, moved_url

    found = {u.name: u for u in load_upstreams(SHIPPED_SOURCES)}
    sources = load_manifest(SHIPPED_SOURCES)
    assert sorted(found) == sorted(s.name for s in sources)
    for source in sources:
        u = found[source.name]
        assert moved_url(source.url, u.repo, u.ref, u.path) == source.url
        if u.translation_path:
            assert source.translation is not None
            assert moved_url(source.translation.url, u.repo, u.translation_ref, u.translation_path) == (
                source.translation.url
            )
        else:
            assert u.translated_by == "maintainers"  # the maintainers' translation is theirs, not upstream's
