"""`kb sync` from real local Git repositories: what it reports, what it builds, and what it leaves alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ingest.sync import report_lines, sync
from kb.entries import entry_id
from kb.errors import SourceError, SyncFailed
from kb.index import read_index
from kb.settings import Settings
from kb.syncs import build_record, last_sync, moved_ids
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq

pytestmark = pytest.mark.slow

INSTALL, HANG, RESUME, OOM = TEAM_FAQ


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    repo = Upstream(tmp_path / "upstream")
    repo.commit("The team FAQ", {"docs/faq.md": team_faq()})
    return repo


@pytest.fixture
def workspace(tmp_path: Path, settings: Settings, upstream: Upstream) -> Settings:
    """A data directory seeded with the session's embedding cache, and a sources folder whose one source
    names `upstream` (its file a stale copy of the FAQ until the first sync)."""
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    (sources / "team.md").write_text(team_faq({INSTALL: TEAM_FAQ[INSTALL]}), encoding="utf-8")
    return Settings(data_dir=tmp_path / "data", sources_dir=sources)


def ids(settings: Settings) -> list[str]:
    return [e.id for e in read_index(settings.index_dir).entries]


def team(question: str) -> str:
    return entry_id("team", question)


def test_first_sync_pins_the_commit_and_a_second_builds_nothing(workspace, upstream):
    head = upstream.git("rev-parse", "HEAD")
    first = sync(workspace)
    assert first is not None and first.outcome == "built"
    assert ids(workspace) == [team(q) for q in TEAM_FAQ]
    entry = read_index(workspace.index_dir).entries[0]
    assert entry.source_version == f"2026-01-02 ({head[:7]})"
    assert entry.url == f"https://git.example.org/team/faq/blob/{head}/docs/faq.md#how-do-i-install-the-trainer"
    assert (workspace.sources_dir / "team.md").read_text(encoding="utf-8") == team_faq()
    build = workspace.index_dir.resolve()
    second = sync(workspace)
    assert second is not None and second.outcome == "unchanged"
    assert workspace.index_dir.resolve() == build
    last = last_sync(workspace.data_dir)
    assert last is not None and (last.outcome, last.commits) == ("unchanged", {"team": head})


def test_the_report_lists_new_changed_reworded_moved_and_removed_entries(workspace, upstream):
    sync(workspace)
    before = upstream.git("rev-parse", "HEAD")
    reworded = "The trainer hangs at step 0, why?"
    edited = TEAM_FAQ[OOM] + " ZeRO stage 3 also helps."
    added = "Which GPUs are supported?"
    upstream.commit(
        "Reword the hang, edit the OOM answer, move resume first, drop install, add GPUs",
        {
            "docs/faq.md": team_faq(
                {
                    RESUME: TEAM_FAQ[RESUME],
                    reworded: TEAM_FAQ[HANG],
                    OOM: edited,
                    added: "Any NVIDIA GPU with compute capability 8.0 or newer (A100, H100, L40S).",
                }
            )
        },
    )
    report = sync(workspace)
    assert report is not None and report.outcome == "built"
    (changes,) = report.changes
    assert [e.id for e in changes.new] == [team(added)]
    assert [(old.id, new.answer) for old, new in changes.changed] == [(team(OOM), edited)]
    assert [e.id for e in changes.removed] == [team(INSTALL)]
    assert [(r.old.id, r.new.id) for r in changes.reworded] == [(team(HANG), team(reworded))]
    assert changes.reworded[0].answer == 1.0
    lines = report_lines(report)
    assert f"team: main at {before[:7]} -> {upstream.git('rev-parse', 'HEAD')[:7]} (2026-01-02 " in lines[0]
    assert f"  reworded  {team(HANG)} -> {team(reworded)}  {HANG!r} -> {reworded!r}" in lines
    assert ids(workspace) == [team(RESUME), team(reworded), team(OOM), team(added)]
    assert moved_ids(workspace.index_dir.resolve()) == {team(HANG): team(reworded)}
    history = build_record(workspace.index_dir.resolve())["history"]
    assert [h["pins"]["team"]["commit"] for h in history] == [before]


def test_a_renamed_file_is_followed_and_its_path_moved_in_the_manifest(workspace, upstream):
    sync(workspace)
    (upstream.folder / "docs" / "guide").mkdir()
    upstream.git("mv", "docs/faq.md", "docs/guide/faq.md")
    upstream.git("commit", "--quiet", "-m", "Move the FAQ under the guide")
    report = sync(workspace)
    assert report is not None and report.renamed == {"team": ("docs/faq.md", "docs/guide/faq.md")}
    assert not any(report.changes)
    text = (workspace.sources_dir / "sources.toml").read_text(encoding="utf-8")
    assert 'path = "docs/guide/faq.md"' in text
    assert read_index(workspace.index_dir).entries[0].url.endswith("/docs/guide/faq.md#how-do-i-install-the-trainer")


def test_a_force_pushed_branch_and_a_tag_are_read_as_they_are_now(workspace, upstream):
    sync(workspace)
    upstream.commit("Add a question", {"docs/faq.md": team_faq(TEAM_FAQ | {"Is Windows supported?": "No: Linux."})})
    sync(workspace)
    assert len(ids(workspace)) == 5
    upstream.git("reset", "--quiet", "--hard", "HEAD~1")  # the branch is rewritten: the question is gone
    upstream.commit("Another wording", {"docs/faq.md": team_faq(TEAM_FAQ | {"Does it run on Windows?": "No."})})
    upstream.git("tag", "v1.0")
    report = sync(workspace)
    assert report is not None
    assert [e.question for c in report.changes for e in c.new] == ["Does it run on Windows?"]
    assert [e.question for c in report.changes for e in c.removed] == ["Is Windows supported?"]
    text = (workspace.sources_dir / "sources.toml").read_text(encoding="utf-8").replace('ref = "main"', 'ref = "v1.0"')
    (workspace.sources_dir / "sources.toml").write_text(text, encoding="utf-8")
    tagged = sync(workspace)
    assert tagged is not None and tagged.outcome == "unchanged"  # the tag names the commit the branch does


def test_an_unreachable_repository_changes_nothing_and_says_why(workspace, tmp_path):
    sync(workspace)
    build, files = workspace.index_dir.resolve(), (workspace.sources_dir / "team.md").read_text(encoding="utf-8")
    toml = workspace.sources_dir / "sources.toml"
    toml.write_text(manifest((tmp_path / "gone").as_uri()), encoding="utf-8")
    with pytest.raises(SyncFailed, match=r"source 'team': git fetch file://.*gone: .*; nothing changed"):
        sync(workspace)
    assert workspace.index_dir.resolve() == build
    assert (workspace.sources_dir / "team.md").read_text(encoding="utf-8") == files
    last = last_sync(workspace.data_dir)
    assert last is not None and last.outcome == "failed" and "gone" in last.reason


def test_a_file_that_no_longer_parses_changes_nothing(workspace, upstream):
    sync(workspace)
    build = workspace.index_dir.resolve()
    upstream.commit("Turn the FAQ into prose", {"docs/faq.md": "# Team FAQ\n\nNo questions here any more.\n"})
    with pytest.raises(SourceError, match="team.md"):
        sync(workspace)
    assert workspace.index_dir.resolve() == build
    assert (workspace.sources_dir / "team.md").read_text(encoding="utf-8") == team_faq()


def test_a_missing_path_and_an_unknown_ref_are_named(workspace, upstream):
    toml = workspace.sources_dir / "sources.toml"
    toml.write_text(manifest(upstream.url, path="docs/nope.md"), encoding="utf-8")
    with pytest.raises(SyncFailed, match=r"has no file 'docs/nope.md' at [0-9a-f]{7}; nothing changed"):
        sync(workspace)
    toml.write_text(manifest(upstream.url, ref="release"), encoding="utf-8")
    with pytest.raises(SyncFailed, match=r"ref 'release' is no branch, tag or commit of file://"):
        sync(workspace)
    assert not workspace.index_dir.exists()


def test_a_dry_run_reports_and_builds_nothing(workspace, upstream):
    report = sync(workspace, dry_run=True)
    assert report is not None and report.outcome == "dry run"
    assert [e.id for c in report.changes for e in c.new] == [team(q) for q in TEAM_FAQ][1:]
    assert not workspace.index_dir.exists()
    assert (workspace.sources_dir / "team.md").read_text(encoding="utf-8") == team_faq({INSTALL: TEAM_FAQ[INSTALL]})
