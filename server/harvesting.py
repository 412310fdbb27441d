"""Harvesting the tracker while the server runs (`KB_HARVEST_INTERVAL`, `KB_HARVEST_REPOS`).

Every interval the server runs `kb harvest --repo OWNER/NAME` for each repository named, as a process of
its own with the server's settings, the harvest's tracker's among them (`KB_HARVEST_API_URL` and
`KB_HARVEST_TOKEN`, `trackers.environment`): the harvest asks the tracker's API for what closed since the last
harvest of that repository, and keeps the drafts in the
insights database, where `/insights` lists them on its next load. A failed harvest (the API down, a token
refused) is logged once per reason; the next turn tries again.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from trackers import environment as tracker_environment

from .settings import ServerSettings
from .syncing import sync_environment

__all__ = ["harvest_every", "harvest_once"]

log = logging.getLogger("kb.server")


async def harvest_every(settings: ServerSettings) -> None:
    """Harvest each of `settings.harvest_repos` every `settings.harvest_interval` seconds; runs until cancelled."""
    failed: dict[str, str] = {}
    while True:
        await asyncio.sleep(settings.harvest_interval)
        for repo in settings.harvest_repo_list:
            failed[repo] = await harvest_once(settings, repo, failed.get(repo, ""))


async def harvest_once(settings: ServerSettings, repo: str, failed: str = "") -> str:
    """Run `kb harvest --repo REPO` in a process of its own; the reason it failed ("" when it did not), logged
    unless it is `failed`, the reason the turn before failed for."""
    environment = sync_environment(settings) | tracker_environment(settings)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kbcli.cli",
        "harvest",
        "--repo",
        repo,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await process.communicate()
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        lines = err.decode("utf-8", "replace").splitlines()
        said = [line for line in lines if line.startswith("kb: error: ")] or lines[-1:]  # not its progress lines
        reason = said[0].removeprefix("kb: error: ") if said else f"exit status {process.returncode}"
        if reason != failed:
            log.error("harvesting %s failed: %s", repo, reason)
        return reason
    summary = [line for line in out.decode("utf-8", "replace").splitlines() if line.startswith("read ")]
    log.info("harvested %s: %s", repo, summary[0] if summary else "done")
    return ""
