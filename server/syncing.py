"""Syncing the sources from their upstream repositories while the server runs (`KB_SYNC_INTERVAL`).

Every interval the server runs what `kb sync` runs (`ingest/sync.py`) in a worker thread. The
replicas of one data directory take turns through the sync's lock: a replica that finds another
syncing skips its turn, and loads the new build as every replica does (server/reload.py). A
failed sync is logged once per reason; the build served stays, and the next turn tries again.
"""

from __future__ import annotations

import asyncio
import logging

from kb.insights import InsightsStore

from .reload import Reloader
from .settings import ServerSettings

__all__ = ["sync_every"]

log = logging.getLogger("kb.server")


async def sync_every(settings: ServerSettings, reloader: Reloader, store: InsightsStore | None) -> None:
    """Sync every `settings.sync_interval` seconds and swap the new build in; runs until cancelled."""
    from ingest.sync import report_lines, sync

    failed = ""
    while True:
        await asyncio.sleep(settings.sync_interval)
        try:
            report = await asyncio.to_thread(sync, settings, store=store, wait=False)
        except Exception as exc:  # unreachable repository, a file that no longer parses: the build served stays
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if reason != failed:
                log.error("sync failed, still serving build %s: %s", reloader.served.build, reason)
                failed = reason
            continue
        failed = ""
        if report is None or report.outcome != "built":
            continue  # another replica's turn, or nothing new upstream
        log.info("synced from upstream: %s", "; ".join(line.strip() for line in report_lines(report)))
        try:
            await reloader.reload()
        except Exception as exc:  # the build does not load: the watch logs it, the old one serves
            log.error("%s", exc)
