"""`kb sync`: bring the sources that name their upstream (`repo`, `path`, `ref`) to the commit
their ref names now, report what changed, and build and swap in the new index as `kb ingest` does.

A sync works on a copy of the sources folder: the files at the new commits written into it, the
manifest's `version`, `url` (and `path`, when upstream renamed the file) moved, the learned data's
ids of reworded entries replaced. It builds from that copy; only when the build is swapped in is
the copy written back to the folder. So a repository that cannot be reached, a file that no
longer parses or a build that fails changes nothing: the old index keeps serving.
Syncs of one data directory take turns (a lock), and a sync whose commits are those the served
build was made from builds nothing.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from kb.entries import Entry
from kb.errors import IndexMissing, KBError, SourceError, SourceErrors, SyncFailed
from kb.index import read_index
from kb.insights.store import InsightsStore
from kb.settings import Settings
from kb.syncs import LastSync, build_record, follow, write_last

from .changes import Changes, compare
from .curation import carry_ids, left_behind, mark_stale
from .git_repo import Repository
from .manifest import MANIFEST_NAME
from .pipeline import BuildReport, Progress, build_index
from .sources import read_sources
from .upstream import Upstream, edit_manifest, load_upstreams, moved_url

__all__ = ["SyncReport", "Pin", "sync", "report_lines", "SYNC_DIR"]

SYNC_DIR = "sync"  # under the data directory: the repositories' mirrors, the lock, the last sync


@dataclass(frozen=True)
class Pin:
    """The commit a source (and its translation) was read at."""

    repo: str
    ref: str
    commit: str
    path: str
    version: str
    url: str
    translation_commit: str = ""
    translation_path: str = ""

    @property
    def commits(self) -> tuple[str, str]:
        return self.commit, self.translation_commit


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
) -> SyncReport | None:
    """Sync the sources named (all that give a `repo` when none is) of `settings.sources_dir`.

    Returns None when another sync of the data directory is running and `wait` is False. Any
    failure raises (SyncFailed, SourceError, ...), is recorded as the last sync's outcome, and
    changes nothing. `store`, the insights database, gets the reworded entries' votes and links."""
    with _turn(settings.data_dir / SYNC_DIR, wait) as mine:
        if not mine:
            return None
        try:
            report = _sync(settings, names, dry_run, store, progress)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, KBError) else f"{type(exc).__name__}: {exc}"
            write_last(settings.data_dir, LastSync(time.time(), "failed", reason=reason.splitlines()[0]))
            raise
        if report.outcome != "dry run":
            write_last(settings.data_dir, _last(report, Path(os.path.realpath(settings.index_dir)).name))
        return report


@contextmanager
def _turn(folder: Path, wait: bool) -> Iterator[bool]:
    """Hold the sync lock of a data directory; yields False (at once) when `wait` is False and another holds it."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def _chosen(settings: Settings, names: Sequence[str]) -> list[Upstream]:
    upstreams = load_upstreams(settings.sources_dir)
    known = {u.name for u in upstreams}
    unknown = [n for n in names if n not in known]
    if unknown:
        offer = ", ".join(sorted(known)) or "none"
        raise KBError(
            f"no source {', '.join(map(repr, unknown))} names a repo in {settings.sources_dir / MANIFEST_NAME} "
            f"(those that do: {offer})"
        )
    if not upstreams:
        raise KBError(f"no source of {settings.sources_dir / MANIFEST_NAME} names a repo: nothing to sync")
    return [u for u in upstreams if not names or u.name in names]


def _served(settings: Settings) -> tuple[list[Entry], dict[str, Any]]:
    """The entries of the served build and its sync record; with no build, the sources folder's entries."""
    try:
        index = read_index(settings.index_dir)
    except IndexMissing:
        return read_sources(settings.sources_dir).entries, {}
    return index.entries, build_record(index.path)


def _sync(
    settings: Settings,
    names: Sequence[str],
    dry_run: bool,
    store: InsightsStore | None,
    progress: Progress | None,
) -> SyncReport:
    upstreams = _chosen(settings, names)
    old_entries, record = _served(settings)
    old_pins: dict[str, dict[str, Any]] = record.get("pins", {})
    mirrors = settings.data_dir / SYNC_DIR / "repos"
    repos = {u.name: Repository(u.repo, mirrors, u.name) for u in upstreams}
    resolved: dict[str, tuple[str, str]] = {}
    for u in upstreams:
        repos[u.name].fetch()
        commit = repos[u.name].resolve(u.ref)
        other = repos[u.name].resolve(u.translation_ref) if u.translation_path else ""
        resolved[u.name] = (commit, other)
    before = {name: str(pin.get("commit", "")) for name, pin in old_pins.items()}
    if all(
        (old_pins.get(u.name, {}).get("commit"), old_pins.get(u.name, {}).get("translation_commit", ""))
        == resolved[u.name]
        for u in upstreams
    ):
        return SyncReport("unchanged", {name: Pin(**pin) for name, pin in old_pins.items() if name in resolved}, before)
    staged = Path(tempfile.mkdtemp(prefix=".staging-", dir=settings.data_dir / SYNC_DIR))
    try:
        # the folder as the build reads it (a deployer's folder may be a Git checkout: its .git stays out)
        shutil.copytree(settings.sources_dir, staged, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
        manifest = staged / MANIFEST_NAME
        text = manifest.read_text(encoding="utf-8")
        pins: dict[str, Pin] = {}
        renamed: dict[str, tuple[str, str]] = {}
        for u in upstreams:
            repo, (commit, other) = repos[u.name], resolved[u.name]
            last = old_pins.get(u.name, {})
            path = _write(repo, commit, u.path, str(last.get("commit", "")), staged / u.file)
            if path != u.path:
                renamed[u.name] = (u.path, path)
            date = repo.date(commit)
            pin = Pin(u.repo, u.ref, commit, path, f"{date} ({commit[:7]})", moved_url(u.url, u.repo, commit, path))
            text = edit_manifest(text, u.name, {"version": pin.version, "url": pin.url, "path": path})
            if u.translation_path:
                old = str(last.get("translation_commit", ""))
                other_path = _write(repo, other, u.translation_path, old, staged / u.translation_file)
                url = moved_url(u.translation_url, u.repo, other, other_path)
                text = edit_manifest(text, u.name, {"url": url, "path": other_path}, translation=True)
                pin = Pin(**{**pin.__dict__, "translation_commit": other, "translation_path": other_path})
            pins[u.name] = pin
        manifest.write_text(text, encoding="utf-8")
        new_entries = _parsed(staged, settings.sources_dir)  # a file that no longer parses stops the sync here
        changes = tuple(
            compare(
                u.name, [e for e in old_entries if e.source == u.name], [e for e in new_entries if e.source == u.name]
            )
            for u in upstreams
        )
        moved = {old: new for c in changes for old, new in c.moved.items()}
        carry_ids(staged, moved)
        review = mark_stale(staged, upstreams, changes)
        orphaned = left_behind(staged, changes, store)
        if dry_run:
            return SyncReport("dry run", pins, before, changes, renamed, review, orphaned)
        history = list(record.get("history", []))
        if old_pins:
            history.append({"at": record.get("at"), "pins": old_pins})
        earlier = {old: follow(moved, new) for old, new in record.get("moved", {}).items()}
        kept = {
            "at": time.time(),
            "pins": old_pins | {name: pin.__dict__ for name, pin in pins.items()},
            "history": history,
            "moved": earlier | moved,
        }
        built = build_index(settings, [staged], progress=progress, sync=kept)
        if store is not None and moved:
            store.move_entries(moved)
        _write_back(staged, settings.sources_dir)
        return SyncReport("built", pins, before, changes, renamed, review, orphaned, built)
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def _parsed(staged: Path, folder: Path) -> list[Entry]:
    """The entries of the staged copy of `folder`; a file that does not parse is named as the folder's."""
    try:
        return read_sources(staged).entries
    except SourceErrors as exc:
        raise SourceErrors([_in(e, staged, folder) for e in exc.errors]) from None
    except SourceError as exc:
        raise _in(exc, staged, folder) from None


def _in(exc: SourceError, staged: Path, folder: Path) -> SourceError:
    path = folder / exc.path.relative_to(staged) if exc.path.is_relative_to(staged) else exc.path
    return SourceError(path, exc.message.replace(str(staged), str(folder)), exc.line)


def _write(repo: Repository, commit: str, path: str, last: str, to: Path) -> str:
    """Write the file at `path` in `commit` to `to`; where upstream moved it since commit `last`,
    the file where it went. Returns the path read."""
    data = repo.read(commit, path)
    if data is None and last:
        moved = repo.renamed(last, commit, path)
        if moved is not None:
            path, data = moved, repo.read(commit, moved)
    if data is None:
        raise SyncFailed(repo.source, f"{repo.url} has no file {path!r} at {commit[:7]}")
    to.write_bytes(data)
    return path


def _write_back(staged: Path, folder: Path) -> None:
    """Put the staged files that differ into the sources folder, each by a rename."""
    for path in sorted(p for p in staged.iterdir() if p.is_file()):
        target = folder / path.name
        if target.is_file() and target.read_bytes() == path.read_bytes():
            continue
        tmp = folder / f".{path.name}.sync-{os.getpid()}"
        shutil.copy2(path, tmp)
        os.replace(tmp, target)


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
