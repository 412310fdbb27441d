"""`kb sync`: bring the sources that name their upstream (`repo`, `path`, `ref`) to the commit
their ref names now, report what changed, and build and swap in the new index as `kb ingest` does.

A sync builds from the folders the served index was built from (its `meta.json` names them: the
shipped FAQs and every `--sources` folder `kb ingest` was given), or from those `kb sync --sources`
and `--with-shipped` name; a sync that would leave out a source the served index holds is refused,
naming what would be lost. The folders whose manifests name an upstream (never the shipped FAQs') are synced.

A sync works on copies of those folders, staged under the data directory (ingest/staging.py): the files at the new
commits written into them, the manifest's `version`, `url` (and `path`, when upstream renamed the
file) moved, the learned data's ids of reworded entries replaced. It builds from the copies; only
when the build is swapped in are the copies written back to the folders. So a repository that
cannot be reached, a file that no longer parses, is too large or holds too many entries, or a
build that fails changes nothing: the old index keeps serving. Syncs of one data directory take
turns (a lock); a staging copy found while holding it is a killed sync's, and is removed. A sync
whose commits and folders are those the served build was made from builds nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from kb.entries import Entry
from kb.errors import IndexMissing, KBError, SourceError, SourceErrors
from kb.index import read_index
from kb.insights.store import InsightsStore
from kb.settings import SHIPPED_SOURCES, Settings
from kb.staleness import build_folders, folder_names, is_shipped
from kb.sync_lock import STAGING_PREFIX, SYNC_DIR, remove_stale_staging, turn
from kb.syncs import LastSync, build_record, follow, write_last

from .changes import SECONDS, Changes, compare
from .curation import carry_ids, left_behind, mark_stale
from .deadline import sync_deadline
from .git_repo import Repository
from .manifest import MANIFEST_NAME, load_manifest
from .pipeline import BuildReport, Progress, build_index
from .sources import read_sources
from .staging import Pin, check_counts, parse_staged, pinned, write_back
from .upstream import Upstream, load_upstreams

__all__ = ["SyncReport", "Pin", "sync", "build_folders", "report_lines", "SYNC_DIR"]


@dataclass(frozen=True)
class SyncReport:
    """What a sync found and did."""

    outcome: str  # "built", "unchanged" or "dry run"
    pins: dict[str, Pin]  # source -> the commit read now
    before: dict[str, str] = field(default_factory=dict)  # source -> the commit the served build was read at
    changes: tuple[Changes, ...] = ()
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)  # source -> (old path, new path)
    review: tuple[str, ...] = ()  # stale translations
    orphaned: tuple[str, ...] = ()  # curation of removed entries
    build: BuildReport | None = None

    @property
    def moved(self) -> dict[str, str]:
        return {old: new for c in self.changes for old, new in c.moved.items()}


def sync(
    settings: Settings,
    names: Sequence[str] = (),
    dry_run: bool = False,
    store: InsightsStore | None = None,
    wait: bool = True,
    progress: Progress | None = None,
    folders: Sequence[Path] | None = None,
) -> SyncReport | None:
    """Sync the sources named (all that give a `repo` when none is) of the folders the sync builds from:
    `folders` (`kb sync --sources`, `--with-shipped`), else those the served index was built from
    (`build_folders`).

    Returns None when another sync of the data directory is running and `wait` is False. Any
    failure raises (SyncFailed, SourceError, ...), is recorded as the last sync's outcome, and
    changes nothing. `store`, the insights database, gets the reworded entries' votes and links."""
    with turn(settings.data_dir / SYNC_DIR, wait) as mine:
        if not mine:
            return None
        remove_stale_staging(settings.data_dir / SYNC_DIR)
        try:
            with sync_deadline(settings.sync_timeout, names):
                report = _sync(settings, names, dry_run, store, progress, build_folders(settings, folders))
        except Exception as exc:
            reason = str(exc) if isinstance(exc, KBError) else f"{type(exc).__name__}: {exc}"
            write_last(settings.data_dir, LastSync(time.time(), "failed", reason=reason.splitlines()[0]))
            raise
        if report.outcome != "dry run":
            write_last(settings.data_dir, _last(report, Path(os.path.realpath(settings.index_dir)).name))
        return report


def _chosen(folders: list[Path], names: Sequence[str]) -> dict[Path, list[Upstream]]:
    """The sources to sync, by the folder whose manifest names them: the folders' sources that give a `repo`
    (those named in `names`, when given); the shipped FAQs' folder is never synced."""
    synced = [d for d in folders if not is_shipped(d)]
    found = {d: load_upstreams(d) for d in synced if (d / MANIFEST_NAME).is_file()}
    known = {u.name for ups in found.values() for u in ups}
    manifests = ", ".join(str(d / MANIFEST_NAME) for d in synced) or "no folder but the shipped FAQs'"
    unknown = [n for n in names if n not in known]
    if unknown:
        offer = ", ".join(sorted(known)) or "none"
        raise KBError(f"no source {', '.join(map(repr, unknown))} names a repo in {manifests} (those that do: {offer})")
    if not known:
        if any(is_shipped(d) for d in folders) and load_upstreams(SHIPPED_SOURCES):
            raise KBError(
                f"{SHIPPED_SOURCES}: kb sync writes the new commits' files and pins into it, but it is inside the "
                "installed package; copy the folder and give KB_SOURCES_DIR"
            )
        raise KBError(f"no source of {manifests} names a repo: nothing to sync")
    chosen = {d: [u for u in ups if not names or u.name in names] for d, ups in found.items()}
    return {d: ups for d, ups in chosen.items() if ups}


def _served(settings: Settings, synced: list[Path]) -> tuple[list[Entry], dict[str, Any], list[str] | None]:
    """The entries of the served build, its sync record and the folders it names (None: it names none); with no
    build, the synced folders' entries (none of a folder whose upstream files are not there yet: a first sync)."""
    try:
        index = read_index(settings.index_dir)
    except IndexMissing:
        entries = []
        for folder in synced:
            try:
                entries += read_sources(folder).entries
            except (SourceError, SourceErrors):
                if all(_present(folder, u) for u in load_upstreams(folder)):
                    raise
        return entries, {}, None
    return index.entries, build_record(index.path), index.meta.folders or None


def _present(folder: Path, u: Upstream) -> bool:
    """Whether the files a sync writes for `u` are in `folder` already."""
    return (folder / u.file).is_file() and (not u.translation_file or (folder / u.translation_file).is_file())


def _sync(
    settings: Settings,
    names: Sequence[str],
    dry_run: bool,
    store: InsightsStore | None,
    progress: Progress | None,
    folders: list[Path],
) -> SyncReport:
    """Fetch and resolve the refs; stage the folders with the files at the new commits; compare the entries;
    carry the reworded entries' ids and mark what needs a maintainer; then build, and write the copies back."""
    chosen = _chosen(folders, names)
    upstreams = [u for ups in chosen.values() for u in ups]
    old_entries, record, served_folders = _served(settings, list(chosen))
    old_pins: dict[str, dict[str, Any]] = record.get("pins", {})
    mirrors = settings.data_dir / SYNC_DIR / "repos"
    limit = settings.sync_max_file_bytes
    repos = {u.name: Repository(u.repo, mirrors, u.name, max_bytes=limit) for u in upstreams}
    resolved = _fetch(upstreams, repos, progress)
    before = {name: str(pin.get("commit", "")) for name, pin in old_pins.items()}
    if served_folders == folder_names(folders) and all(
        _commits(old_pins.get(u.name, {})) == resolved[u.name] for u in upstreams
    ):
        return SyncReport("unchanged", {name: Pin(**pin) for name, pin in old_pins.items() if name in resolved}, before)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=settings.data_dir / SYNC_DIR))
    try:
        staged, pins, renamed = _stage(chosen, stage, repos, resolved, old_pins, settings.sync_max_entries)
        new_entries = parse_staged(staged)  # a file that no longer parses stops the sync here
        check_counts(upstreams, new_entries, pins, settings.sync_max_entries)
        changes = _compare(upstreams, old_entries, new_entries, progress)
        moved = {old: new for c in changes for old, new in c.moved.items()}
        review, orphaned = _curate(staged, chosen, changes, moved, store)
        if dry_run:
            return SyncReport("dry run", pins, before, tuple(changes), renamed, review, orphaned)
        read = [staged.get(folder, folder) for folder in folders]
        _refuse_loss(settings, folders, read, old_entries)
        kept = _record(record, pins, moved)
        built = build_index(settings, read, progress=progress, sync=kept, folders=folders)
        if store is not None and moved:
            store.move_entries(moved)
        for folder, copy in staged.items():
            write_back(copy, folder)
        return SyncReport("built", pins, before, tuple(changes), renamed, review, orphaned, built)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _fetch(
    upstreams: Sequence[Upstream], repos: dict[str, Repository], progress: Progress | None
) -> dict[str, tuple[str, str]]:
    """Fetch each source's repository; the commits its ref (and its translation's) name now, by source."""
    resolved: dict[str, tuple[str, str]] = {}
    several = progress if progress is not None and len(upstreams) > 1 else None  # one fetch needs no count
    for done, u in enumerate(upstreams):
        if several:
            several("fetch", done, len(upstreams))
        repos[u.name].fetch()
        commit = repos[u.name].resolve(u.ref)
        other = repos[u.name].resolve(u.translation_ref) if u.translation_path else ""
        resolved[u.name] = (commit, other)
    if several:
        several("fetch", len(upstreams), len(upstreams))
    return resolved


def _commits(pin: dict[str, Any]) -> tuple[Any, Any]:
    """(commit, translation commit) of a pin as the sync record keeps it."""
    return pin.get("commit"), pin.get("translation_commit", "")


def _stage(
    chosen: dict[Path, list[Upstream]],
    stage: Path,
    repos: dict[str, Repository],
    resolved: dict[str, tuple[str, str]],
    old_pins: dict[str, dict[str, Any]],
    most: int,
) -> tuple[dict[Path, Path], dict[str, Pin], dict[str, tuple[str, str]]]:
    """Copy each folder into `stage` and write its sources' files at the resolved commits into the copy, the
    manifest pinned to them: (folder -> its copy, source -> its pin, source -> (old path, new path) if moved)."""
    staged: dict[Path, Path] = {}
    pins: dict[str, Pin] = {}
    renamed: dict[str, tuple[str, str]] = {}
    for number, (folder, ups) in enumerate(chosen.items()):
        copy = staged[folder] = stage / str(number)
        # the folder as the build reads it (a deployer's folder may be a Git checkout: its .git stays out)
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(".git"))
        text = (copy / MANIFEST_NAME).read_text(encoding="utf-8")
        for u in ups:
            pin, text = pinned(u, repos[u.name], resolved[u.name], old_pins.get(u.name, {}), copy, text, most)
            if pin.path != u.path:
                renamed[u.name] = (u.path, pin.path)
            pins[u.name] = pin
        (copy / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return staged, pins, renamed


def _compare(
    upstreams: Sequence[Upstream], old: Sequence[Entry], new: Sequence[Entry], progress: Progress | None
) -> list[Changes]:
    """Each source's entries new, changed, reworded and removed (`ingest.changes.compare`)."""
    weighed = (lambda done, total: progress("compare", done, total)) if progress else None
    return [
        compare(u.name, [e for e in old if e.source == u.name], [e for e in new if e.source == u.name], weighed)
        for u in upstreams
    ]


def _curate(
    staged: dict[Path, Path],
    chosen: dict[Path, list[Upstream]],
    changes: Sequence[Changes],
    moved: dict[str, str],
    store: InsightsStore | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Carry the reworded entries' ids into each copy's learned data; (the translations to review, the curation
    that removed entries leave behind)."""
    review: tuple[str, ...] = ()
    orphaned: tuple[str, ...] = ()
    for folder, copy in staged.items():
        carry_ids(copy, moved)
        ups = chosen[folder]
        mine = [c for c in changes if c.source in {u.name for u in ups}]
        review += mark_stale(copy, ups, mine)
        orphaned += left_behind(copy, mine, store)
    return review, orphaned


def _record(record: dict[str, Any], pins: dict[str, Pin], moved: dict[str, str]) -> dict[str, Any]:
    """What the new build keeps of the sync (`kb.syncs`): the pins, the earlier pins, every id moved so far."""
    old_pins: dict[str, dict[str, Any]] = record.get("pins", {})
    history = list(record.get("history", []))
    if old_pins:
        history.append({"at": record.get("at"), "pins": old_pins})
    earlier = {old: follow(moved, new) for old, new in record.get("moved", {}).items()}
    return {
        "at": time.time(),
        "pins": old_pins | {name: pin.__dict__ for name, pin in pins.items()},
        "history": history,
        "moved": earlier | moved,
    }


def _refuse_loss(settings: Settings, folders: list[Path], read: list[Path], old_entries: Sequence[Entry]) -> None:
    """Refuse a build that would leave out a source the served index holds, in one line naming what would be lost."""
    now = {e.source for e in read_sources(read, settings.written_path).entries}
    counts = Counter(e.source for e in old_entries)
    lost = [name for name in counts if name not in now]
    if not lost:
        return
    shipped = {s.name for s in load_manifest(SHIPPED_SOURCES)}
    held = ", ".join(f"{name} ({counts[name]})" for name in lost)
    hints = []
    if any(name in shipped for name in lost):
        hints.append("--with-shipped keeps the shipped FAQs")
    if any(name not in shipped for name in lost):
        hints.append("--sources DIR (repeated) keeps each folder's")
    raise KBError(
        f"the served index holds {held}, which a build from {', '.join(map(str, folders))} would lose: "
        f"{'; '.join(hints)}; `kb ingest` leaves them out on purpose; nothing changed"
    )


def report_lines(report: SyncReport) -> list[str]:
    """The sync's report as lines: per source the commits, then each change with its evidence."""
    lines = []
    for name, pin in report.pins.items():
        was = report.before.get(name, "")
        span = f"{was[:7]} -> {pin.commit[:7]}" if was and was != pin.commit else pin.commit[:7]
        lines.append(f"{name}: {pin.ref} at {span} ({pin.version})")
        if name in report.renamed:
            was_at, now_at = report.renamed[name]
            lines.append(f"  file moved upstream: {was_at} -> {now_at}")
    for c in report.changes:
        for e in c.new:
            lines.append(f"  new       {e.id}  {e.question}")
        for _, now in c.changed:
            lines.append(f"  changed   {now.id}  {now.question}")
        for r in c.reworded:
            lines.append(f"  reworded  {r.old.id} -> {r.new.id}  {r.old.question!r} -> {r.new.question!r}")
            lines.append(f"            {r.evidence}")
        for e in c.removed:
            lines.append(f"  removed   {e.id}  {e.question}")
        if c.unweighed:
            lines.append(
                f"  {c.source}: {c.unweighed} removed entries were not weighed against the new ones (over "
                f"{SECONDS:.0f} s): a rewording among them is reported as removed and new"
            )
    return lines


def _last(report: SyncReport, build: str) -> LastSync:
    return LastSync(
        time.time(),
        report.outcome,
        build=build,
        commits={name: pin.commit for name, pin in report.pins.items()},
        changes=report_lines(report),
        review=list(report.review),
        orphaned=list(report.orphaned),
    )
