"""The server's syncs run with a deadline (KB_SYNC_TIMEOUT): a `kb sync` process past it is killed, its staging
copies removed and its lock released; the build served stays, and the next sync is not blocked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

import server.syncing as syncing
from ingest.sync import SYNC_DIR, sync
from kb.settings import Settings
from kb.syncs import last_sync
from server.settings import ServerSettings
from tests.support.git_repos import team_faq, team_workspace

pytestmark = pytest.mark.slow


class _Reloader:
    """What `sync_once` asks of the server's reloader: the build served, and a reload."""

    def __init__(self, settings: ServerSettings):
        self.settings = settings
        self.served = SimpleNamespace(build=settings.index_dir.resolve().name)

    async def reload(self) -> None:
        self.served = SimpleNamespace(build=self.settings.index_dir.resolve().name)


def test_a_sync_past_the_deadline_is_killed_and_the_next_one_runs(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream, sources = team_workspace(tmp_path, settings.cache_dir)
    relaxed = ServerSettings(data_dir=tmp_path / "data", sources_dir=sources, rate_limit="off")
    ours = ServerSettings(data_dir=tmp_path / "data", sources_dir=sources, rate_limit="off", sync_timeout=1)
    sync(relaxed)
    served = ours.index_dir.resolve()
    head = "# How do I install it? Run the installer. # Why does it hang? "
    upstream.commit(
        "One line", {"docs/faq.md": head + "```a " * 999_000}
    )  # under KB_SYNC_MAX_FILE_BYTES: read, not refused
    monkeypatch.setattr(syncing, "KILL_GRACE", 0.0)  # killed at the deadline, whether or not it stops itself
    reloader = _Reloader(ours)

    reason = asyncio.run(syncing.sync_once(ours, reloader))  # type: ignore[arg-type]
    assert "KB_SYNC_TIMEOUT (1 s)" in reason
    assert ours.index_dir.resolve() == served and reloader.served.build == served.name
    assert list((ours.data_dir / SYNC_DIR).glob(".staging-*")) == []
    last = last_sync(ours.data_dir)
    assert last is not None and last.outcome == "failed"

    upstream.commit("Back to many lines", {"docs/faq.md": team_faq()})
    assert asyncio.run(syncing.sync_once(relaxed, reloader)) == ""  # type: ignore[arg-type]
    assert ours.index_dir.resolve() != served  # the lock was free: this one built
