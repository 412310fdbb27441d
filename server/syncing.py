"""Syncing the sources from their upstream repositories while the server runs (`KB_SYNC_INTERVAL`).

Every interval the server runs `kb sync --no-wait` as a process of its own, with the server's
settings, so it builds from the folders the served index was built from, as `kb sync` does: the sync parses and embeds in that process (the server's memory and event loop stay
free, as with `kb ingest` beside a running server), writes the new build, and records its outcome
in the data directory (`kb.syncs.last_sync`), where this replica reads it and swaps the new build
in. The replicas of one data directory take turns through the sync's lock: a replica that finds
another syncing skips its turn and loads the new build as every replica does (server/reload.py).
A failed sync is logged once per reason; the build served stays, and the next turn tries again.

A signed `push` from GitHub (server/channels/github/push.py) syncs the sources of the repository pushed
to in the same way, at once (`PushSyncs`): it waits for a sync that is running rather than skip its
turn, since that one may not have read the commit pushed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Sequence

from kb.errors import KBError
from kb.settings import Settings
from kb.staleness import build_folders, is_shipped
from kb.sync_lock import SYNC_DIR, remove_stale_staging, turn
from kb.syncs import LastSync, last_sync, write_last

from .reload import Reloader
from .settings import ServerSettings

__all__ = ["sync_every", "sync_once", "sync_environment", "synced_folders", "PushSyncs"]

log = logging.getLogger("kb.server")
KILL_GRACE = 30.0  # seconds past KB_SYNC_TIMEOUT before a `kb sync` process that has not stopped itself is killed


def sync_environment(settings: Settings) -> dict[str, str]:
    """This process's environment with each of the library's settings as the `KB_` variable that gives it."""
    environment = dict(os.environ)
    for f in fields(Settings):
        value = getattr(settings, f.name)
        environment[f"KB_{f.name.upper()}"] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return environment


def synced_folders(settings: Settings) -> list[Path]:
    """The folders `kb sync` syncs here: those the served index was built from (`kb.staleness.build_folders`) but the
    shipped FAQs' (which are only read); `settings.sources_dir` when the served index names none that is there."""
    try:
        folders = build_folders(settings)
    except KBError:  # a folder of the served build is gone: the sync itself says so
        folders = [settings.sources_dir]
    return [d for d in folders if not is_shipped(d)]


async def sync_every(settings: ServerSettings, reloader: Reloader) -> None:
    """Run `kb sync` every `settings.sync_interval` seconds and swap a new build in; runs until cancelled."""
    failed = ""
    while True:
        await asyncio.sleep(settings.sync_interval)
        failed = await sync_once(settings, reloader, failed=failed)


async def sync_once(
    settings: ServerSettings, reloader: Reloader, names: Sequence[str] = (), wait: bool = False, failed: str = ""
) -> str:
    """Run `kb sync [NAMES]` in a process of its own and swap its build in; the reason it failed ("" when it did not).

    `wait`: when another sync of the data directory runs, wait for it and sync after (a push's sync, whose commit
    that one may not have read); else skip this turn (`--no-wait`). A failure is logged unless it is `failed`,
    the reason the turn before failed for."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kbcli.cli",
        "sync",
        *(() if wait else ("--no-wait",)),
        *names,
        env=sync_environment(settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    # The process stops itself at KB_SYNC_TIMEOUT; one stuck where its timer cannot reach is killed a little later.
    limit = settings.sync_timeout + KILL_GRACE if settings.sync_timeout else None
    try:
        _, err = await asyncio.wait_for(process.communicate(), limit)
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    except TimeoutError:
        process.kill()
        await process.wait()
        reason = killed(settings, names)
        if reason != failed:
            log.error("sync failed, still serving build %s: %s", reloader.served.build, reason)
        return reason
    if process.returncode != 0:  # unreachable repository, a file that no longer parses: the build served stays
        lines = err.decode("utf-8", "replace").splitlines()
        reason = lines[0].removeprefix("kb: error: ") if lines else f"exit status {process.returncode}"
        if reason != failed:
            log.error("sync failed, still serving build %s: %s", reloader.served.build, reason)
        return reason
    last = last_sync(settings.data_dir)
    if last is None or last.outcome != "built" or last.build == reloader.served.build:
        return ""  # another replica's turn, nothing new upstream, or the watch swapped it in already
    log.info("synced from upstream: %s", "; ".join(line.strip() for line in last.changes))
    try:
        await reloader.reload()  # the build the index link names now: this sync's, or a newer one
    except Exception as exc:  # the build does not load: the old one serves, the watch logs it
        log.error("%s", exc)
    return ""


def killed(settings: Settings, names: Sequence[str]) -> str:
    """After a `kb sync` process was killed past its deadline: its staging copies removed (its lock went with it;
    taken here so that no other sync's copies are touched), its failure recorded as the last sync's; the reason."""

    reason = (
        f"source {', '.join(names) or 'all'!s}: the sync took longer than KB_SYNC_TIMEOUT "
        f"({settings.sync_timeout:g} s) and was stopped; nothing changed"
    )
    with turn(settings.data_dir / SYNC_DIR, wait=False) as mine:
        if mine:
            remove_stale_staging(settings.data_dir / SYNC_DIR)
            write_last(settings.data_dir, LastSync(time.time(), "failed", reason=reason))
    return reason


class PushSyncs:
    """The syncs GitHub's pushes ask for (server/channels/github/push.py): one at a time, in the background. The
    sources pushed to while one runs are synced once it ends, in one more sync however many pushes came."""

    def __init__(self, settings: ServerSettings):
        self.settings = settings
        self.waiting: set[str] = set()  # sources pushed to, not yet synced
        self.asked = 0  # pushes that asked for a sync, since start-up
        self.task: asyncio.Task[None] | None = None

    def start(self, names: Sequence[str], reloader: Reloader) -> None:
        """Sync the sources `names` in the background (after the sync running now, if one is)."""
        self.asked += 1
        self.waiting.update(names)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run(reloader))

    async def _run(self, reloader: Reloader) -> None:
        while self.waiting:
            names, self.waiting = sorted(self.waiting), set()
            await sync_once(self.settings, reloader, names, wait=True)

    async def stop(self) -> None:
        """Cancel the sync running (its process is ended; the build served stays)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
