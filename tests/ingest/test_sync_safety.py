"""`kb sync` on a new source and against a hostile upstream: a first sync writes the file it names, the
maintainer's manifest is edited in place, a file too large or with too many entries is refused before it is
read or embedded, and a killed sync's staging copy does not stay. Real local Git repositories."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.deadline import sync_deadline
from ingest.sync import SYNC_DIR, sync
from kb.errors import SyncFailed
from kb.index import read_index
from kb.settings import Settings
from kb.syncs import last_sync
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

HAND_WRITTEN = """\
# The team's FAQ: the file is written by `kb sync` from upstream.
[[source]]
ref = "main"            # the branch we follow
name = "team"
repo = "{url}"
path = "docs/faq.md"    # in the repository
file = "team.md"        # here, once synced
title = "Team FAQ"
version = "unsynced"    # kb sync moves this
lang = "en"
entries = "headings"
"""


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    repo = Upstream(tmp_path / "upstream")
    repo.commit("The team FAQ", {"docs/faq.md": team_faq()})
    return repo


def test_a_first_sync_writes_the_file_and_edits_only_the_version(tmp_path: Path, settings: Settings, upstream) -> None:
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    written = HAND_WRITTEN.format(url=upstream.url)
    (sources / "sources.toml").write_text(written, encoding="utf-8")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)

    report = sync(ours)

    assert report is not None and report.outcome == "built"
    assert (sources / "team.md").read_text(encoding="utf-8") == team_faq()
    assert [e.question for e in read_index(ours.index_dir).entries] == list(TEAM_FAQ)
    head = upstream.git("rev-parse", "HEAD")
    after = (sources / "sources.toml").read_text(encoding="utf-8")
    assert after == written.replace(
        'version = "unsynced"    # kb sync moves this', f'version = "2026-01-02 ({head[:7]})"    # kb sync moves this'
    )


def test_a_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path: Path, upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    big = team_faq(TEAM_FAQ | {f"Question {n}?": "An answer. " * 20 for n in range(40)})
    commit = upstream.commit("A long FAQ", {"docs/faq.md": big})
    size = len(big.encode("utf-8"))
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources, sync_max_file_bytes=5_000)
    with pytest.raises(SyncFailed) as raised:
        sync(ours)
    assert str(raised.value) == (
        f"source 'team': {upstream.url} 'docs/faq.md' at {commit[:7]} is {size:,} bytes, more than "
        "KB_SYNC_MAX_FILE_BYTES (5,000); nothing changed"
    )
    assert not (sources / "team.md").exists() and not ours.index_dir.exists()


def test_a_file_past_the_entry_limit_is_refused_before_anything_is_embedded(tmp_path: Path, upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    head = upstream.git("rev-parse", "HEAD")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources, sync_max_entries=3)
    with pytest.raises(SyncFailed) as raised:
        sync(ours)
    assert str(raised.value) == (
        f"source 'team': {upstream.url} 'docs/faq.md' at {head[:7]} holds 4 entries, more than "
        "KB_SYNC_MAX_ENTRIES (3); nothing changed"
    )
    assert not ours.cache_dir.exists()  # nothing was embedded
    assert not ours.index_dir.exists()


def test_a_killed_syncs_staging_copy_is_removed_by_the_next(tmp_path: Path, settings: Settings, upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    data = tmp_path / "data"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment |= {"KB_DATA_DIR": str(data), "KB_SOURCES_DIR": str(sources)}
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "sync"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    staging = data / SYNC_DIR
    deadline = time.monotonic() + 120
    try:
        while not list(staging.glob(".staging-*")) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        left = list(staging.glob(".staging-*"))
        assert left, "the sync ended before its staging copy was seen"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert all(path.exists() for path in left)  # killed: its `finally` never ran

    shutil.copytree(settings.cache_dir, data / "cache", dirs_exist_ok=True)
    report = sync(Settings(data_dir=data, sources_dir=sources))
    assert report is not None and report.outcome == "built"
    assert not list(staging.glob(".staging-*"))


def test_a_file_of_far_too_many_entries_is_refused_before_it_is_parsed(tmp_path: Path, upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    many = team_faq({f"Question {n}?": f"Answer {n}." for n in range(100_000)})  # 2 MB: under the size limit
    commit = upstream.commit("A hundred thousand entries", {"docs/faq.md": many})
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    started = time.perf_counter()
    with pytest.raises(SyncFailed) as raised:
        sync(ours)
    assert time.perf_counter() - started < 60  # parsing them all takes minutes (1.3 ms an entry)
    assert str(raised.value) == (
        f"source 'team': {upstream.url} 'docs/faq.md' at {commit[:7]} holds 100,001 headings, more than twice "
        "KB_SYNC_MAX_ENTRIES (5000): too many entries to parse; nothing changed"
    )


def _one_line_faq(size: int) -> str:
    """An upstream FAQ on one line: two inline headings, then fences opened and never closed, `size` bytes."""
    head = "# How do I install it? Run the installer. # Why does it hang? "
    return head + ("```a " * (size // 5))[: size - len(head)]


def test_a_5_mb_one_line_faq_is_stopped_at_the_deadline_and_the_next_sync_is_not_blocked(
    tmp_path: Path, settings: Settings, upstream
) -> None:
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    assert sync(ours) is not None  # the team FAQ, served from here on
    served = ours.index_dir.resolve()
    upstream.commit("One line", {"docs/faq.md": _one_line_faq(ours.sync_max_file_bytes - 1)})

    hurried = Settings(data_dir=ours.data_dir, sources_dir=sources, sync_timeout=2)
    started = time.monotonic()
    with pytest.raises(SyncFailed) as raised:
        sync(hurried, ["team"])
    assert time.monotonic() - started < 2 + 10  # stopped at its deadline (10 s for a loaded machine)
    assert str(raised.value) == "source 'team': the sync took longer than KB_SYNC_TIMEOUT (2 s); nothing changed"
    assert ours.index_dir.resolve() == served
    assert list((ours.data_dir / SYNC_DIR).glob(".staging-*")) == []
    last = last_sync(ours.data_dir)
    assert last is not None and last.outcome == "failed" and "KB_SYNC_TIMEOUT" in last.reason

    upstream.commit("Back to many lines", {"docs/faq.md": team_faq()})
    report = sync(ours, wait=False)  # the lock is free: not skipped as another sync's turn
    assert report is not None and report.outcome == "built"


def test_a_deadline_inside_a_timer_already_set_still_stops_the_sync_and_keeps_the_outer_one() -> None:
    """A timer left set (an outer deadline) neither lifts the sync's own deadline nor is lost by it."""
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    signal.setitimer(signal.ITIMER_REAL, 900)
    try:
        started = time.monotonic()
        with pytest.raises(SyncFailed, match=r"KB_SYNC_TIMEOUT \(0\.5 s\)"):
            with sync_deadline(0.5, ["team"]):
                while time.monotonic() - started < 60:
                    time.sleep(0.01)
        assert time.monotonic() - started < 10
        assert 850 < signal.getitimer(signal.ITIMER_REAL)[0] <= 900
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _SlowFinalizer:
    def __del__(self) -> None:
        started = time.monotonic()
        while time.monotonic() - started < 1.0:  # the deadline passes in here, where an exception would be dropped
            pass


def test_a_deadline_that_falls_in_a_finalizer_still_stops_the_sync_soon_after() -> None:
    started = time.monotonic()
    with pytest.raises(SyncFailed, match="KB_SYNC_TIMEOUT"):
        with sync_deadline(0.5, ["team"]):
            _SlowFinalizer()  # dropped at once: its finalizer runs now, past the deadline
            while time.monotonic() - started < 60:
                time.sleep(0.01)
    assert time.monotonic() - started < 10
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_deadline_that_falls_in_a_garbage_collectors_callback_still_stops_the_sync_and_drops_nothing() -> None:
    """A test tool (hypothesis) may leave a callback in `gc.callbacks`: an exception raised there is dropped."""

    def slow(phase: str, info: dict[str, int]) -> None:
        until = time.monotonic() + 0.05
        while time.monotonic() < until:  # most of the time goes here, where the deadline's signal falls
            pass

    threshold = gc.get_threshold()
    gc.callbacks.append(slow)
    gc.set_threshold(10)
    started = time.monotonic()
    try:
        with pytest.raises(SyncFailed, match="KB_SYNC_TIMEOUT"):
            with sync_deadline(0.5, ["team"]):
                while time.monotonic() - started < 60:
                    [[] for _ in range(20)]  # allocations: the collector runs, and its callback with it
    finally:
        gc.callbacks.remove(slow)
        gc.set_threshold(*threshold)
    assert time.monotonic() - started < 10
