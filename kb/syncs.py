"""What `kb sync` keeps: with each build it makes (`sync.json`), the commits read, the pins of the
builds before and the ids of reworded entries (old id -> new id); in the data directory
(`sync/last.json`), the last sync's time, outcome and report, which /metrics and /insights show.

The id map is cumulative (an entry reworded twice maps its first id to its last), so curation
made under any old id (a permalink, a link, a vote) follows the entry.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .index_meta import SYNC_FILE

__all__ = ["LastSync", "build_record", "moved_ids", "last_sync", "write_last", "follow", "LAST_FILE", "OUTCOMES"]

LAST_FILE = Path("sync") / "last.json"
OUTCOMES = ("built", "unchanged", "failed")


@dataclass(frozen=True)
class LastSync:
    """The last sync of this data directory, as /insights and /metrics show it."""

    at: float  # when it finished (Unix time)
    outcome: str  # one of OUTCOMES
    reason: str = ""  # why it failed, in one line
    build: str = ""  # the build it made
    commits: dict[str, str] = field(default_factory=dict)  # source -> commit read
    changes: list[str] = field(default_factory=list)  # one line per change, with its evidence
    review: list[str] = field(default_factory=list)  # what a maintainer should look at: stale translations
    orphaned: list[str] = field(default_factory=list)  # curation that could not follow a removed entry
    # When the sync that built the served build ran: a sync that builds nothing (unchanged, failed) keeps that
    # sync's changes, review and orphaned lines, so they stay shown until a sync builds again.
    built_at: float = 0.0

    @property
    def when(self) -> str:
        """When it finished, in UTC to the minute."""
        return _minute(self.at)

    @property
    def built_when(self) -> str:
        """When the sync that built the served build ran, in UTC to the minute ("" before any)."""
        return _minute(self.built_at) if self.built_at else ""


def _minute(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%d %H:%M")


def build_record(build: Path) -> dict[str, Any]:
    """The sync record kept with the build at `build` ({} for a build `kb sync` did not make)."""
    try:
        data = json.loads((Path(build) / SYNC_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def moved_ids(build: Path) -> dict[str, str]:
    """Old id -> new id of every entry reworded upstream since it was first synced into this build's line."""
    moved = build_record(build).get("moved", {})
    return {str(k): str(v) for k, v in moved.items()} if isinstance(moved, dict) else {}


def follow(moved: dict[str, str], entry_id: str) -> str:
    """The id `entry_id` has now (itself, when it was never reworded)."""
    return moved.get(entry_id, entry_id)


def last_sync(data_dir: Path) -> LastSync | None:
    """The last sync of `data_dir`, or None when there has been none (or its record cannot be read)."""
    try:
        data = json.loads((Path(data_dir) / LAST_FILE).read_text(encoding="utf-8"))
        return LastSync(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_last(data_dir: Path, last: LastSync) -> None:
    """Record `last` as the last sync of `data_dir` (written beside, then renamed over: a reader sees one or the
    other). A sync that built nothing keeps what the last building sync reported (and, failed, its commits)."""
    if last.outcome == "built":
        last = replace(last, built_at=last.at)
    else:
        before = last_sync(data_dir)
        if before is not None and before.built_at:
            last = replace(
                last,
                built_at=before.built_at,
                build=last.build or before.build,
                changes=before.changes,
                review=before.review,
                orphaned=before.orphaned,
            )
            if not last.commits:
                last = replace(last, commits=before.commits)
    path = Path(data_dir) / LAST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(asdict(last), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
