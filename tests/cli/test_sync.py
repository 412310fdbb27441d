"""`kb sync` as a user runs it: a real process, a real local Git repository, its own data directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb.entries import entry_id
from kb.settings import SHIPPED_SOURCES, Settings
from tests.support.cli import kb
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq, team_workspace

pytestmark = pytest.mark.slow

HANG = list(TEAM_FAQ)[1]
REWORDED = "The trainer hangs at step 0, why?"


def test_dry_run_sync_and_a_second_sync_that_builds_nothing(tmp_path: Path, settings: Settings) -> None:
    upstream = Upstream(tmp_path / "upstream")
    first = upstream.commit("The team FAQ", {"docs/faq.md": team_faq()})
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    data = tmp_path / "data"
    shutil.copytree(settings.cache_dir, data / "cache")
    env = {"KB_SOURCES_DIR": str(sources)}

    synced = kb("sync", data_dir=data, **env)
    assert synced.returncode == 0, synced.stderr
    assert synced.stdout.splitlines()[0] == f"team: main at {first[:7]} (2026-01-02 ({first[:7]}))"
    assert "indexed 4 entries" in synced.stdout

    second = upstream.commit("Reword the hang", {"docs/faq.md": team_faq().replace(HANG, REWORDED)})
    dry = kb("sync", "--dry-run", data_dir=data, **env)
    assert dry.returncode == 0, dry.stderr
    old, new = entry_id("team", HANG), entry_id("team", REWORDED)
    assert dry.stdout.splitlines()[:3] == [
        f"team: main at {first[:7]} -> {second[:7]} (2026-01-02 ({second[:7]}))",
        f"  reworded  {old} -> {new}  {HANG!r} -> {REWORDED!r}",
        "            answer 1.00 alike, question 0.59 alike, between the same neighbours, entry 2 -> 2",
    ]
    assert dry.stdout.splitlines()[-1] == "dry run: nothing built, nothing written"

    assert kb("sync", "team", data_dir=data, **env).returncode == 0
    again = kb("sync", data_dir=data, **env)
    assert again.stdout.splitlines()[-1] == "nothing new upstream: the served build is of these commits; nothing built"


def test_an_unreachable_repository_and_an_unknown_source_are_one_line_each(tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest((tmp_path / "gone").as_uri()), encoding="utf-8")
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    env = {"KB_SOURCES_DIR": str(sources)}
    failed = kb("sync", data_dir=tmp_path / "data", **env)
    assert failed.returncode == 2
    (line,) = failed.stderr.splitlines()
    assert line.startswith("kb: error: source 'team': git fetch file://") and line.endswith("; nothing changed")
    unknown = kb("sync", "slime", data_dir=tmp_path / "data", **env)
    assert unknown.stderr.splitlines() == [
        f"kb: error: no source 'slime' names a repo in {sources / 'sources.toml'} (those that do: team)"
    ]


def test_the_shipped_folder_is_not_written_into(tmp_path: Path) -> None:
    refused = kb("sync", data_dir=tmp_path / "data", KB_SOURCES_DIR=str(SHIPPED_SOURCES))
    assert refused.returncode == 2
    assert "inside the installed package; copy the folder and give KB_SOURCES_DIR" in refused.stderr


def test_no_wait_skips_while_another_sync_of_the_data_directory_runs(tmp_path: Path) -> None:
    import fcntl

    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest((tmp_path / "gone").as_uri()), encoding="utf-8")
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    (tmp_path / "data" / "sync").mkdir(parents=True)
    with open(tmp_path / "data" / "sync" / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a sync running in another process
        skipped = kb("sync", "--no-wait", data_dir=tmp_path / "data", KB_SOURCES_DIR=str(sources))
    assert (skipped.returncode, skipped.stdout) == (0, "another sync of this data directory is running: skipped\n")


def test_a_sync_builds_from_what_the_index_was_built_from(tmp_path: Path, settings: Settings) -> None:
    """After `kb ingest --with-shipped --sources DIR`, `KB_SOURCES_DIR=DIR kb sync` keeps the shipped FAQs and the
    query adapter beside what upstream added; a build that would lose the shipped FAQs is refused in one line."""
    import json

    from kb.index import read_index

    upstream, sources = team_workspace(tmp_path, settings.cache_dir)
    data = tmp_path / "data"
    ingested = kb("ingest", "--with-shipped", "--sources", str(sources), data_dir=data)
    assert ingested.returncode == 0, ingested.stderr
    before = read_index(data / "index")
    assert len(before.entries) == 75 + 4 and before.meta.adapter
    shipped = "chatlearn-v1 (12), roll (11), slime (13), chatlearn (6), training-env (17), roll-npu (16)"

    # An index built before builds named their folders: what a sync of DIR alone would lose is named.
    meta = data / "index" / "meta.json"
    recorded = meta.read_text(encoding="utf-8")
    meta.write_text(json.dumps({k: v for k, v in json.loads(recorded).items() if k != "folders"}), encoding="utf-8")
    refused = kb("sync", data_dir=data, KB_SOURCES_DIR=str(sources))
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"kb: error: the served index holds {shipped}, which a build from {sources} would lose: --with-shipped "
        "keeps the shipped FAQs; `kb ingest` leaves them out on purpose; nothing changed"
    ]
    assert (data / "index").resolve() == before.path.resolve()
    meta.write_text(recorded, encoding="utf-8")

    added = "Which GPUs are supported?"
    upstream.commit("Add a question", {"docs/faq.md": team_faq(TEAM_FAQ | {added: "Any with compute capability 8.0."})})
    synced = kb("sync", data_dir=data, KB_SOURCES_DIR=str(sources))
    assert synced.returncode == 0, synced.stderr
    assert f"  new       {entry_id('team', added)}  {added}" in synced.stdout.splitlines()
    assert "kb sync: entry texts embedded" in synced.stderr  # progress, standard error not a terminal
    after = read_index(data / "index")
    assert len(after.entries) == 75 + 4 + 1
    assert [e.id for e in after.entries if e.source != "team"] == [e.id for e in before.entries if e.source != "team"]
    assert after.meta.adapter == before.meta.adapter
    assert after.meta.folders == ["shipped", str(sources.resolve())]

    # Named folders that leave out the shipped FAQs: refused, nothing built.
    alone = kb("sync", "--sources", str(sources), data_dir=data)
    assert alone.returncode == 2 and len(alone.stderr.splitlines()) == 1
    assert f"the served index holds {shipped}, which a build from {sources} would lose" in alone.stderr
    assert (data / "index").resolve() == after.path.resolve()
