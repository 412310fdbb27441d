"""A sync's staged copy of a sources folder: the upstream files written in at their new commits and pinned in
the manifest, parsed as the build will read them, and written back to the folder once the build is in.

`kb sync` (ingest/sync.py) stages every folder it syncs; nothing here touches the folder itself but
`write_back`. A file too large to parse, or of more entries than KB_SYNC_MAX_ENTRIES, is refused
before anything is embedded.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from kb.entries import Entry
from kb.errors import SourceError, SourceErrors, SyncFailed

from .git_repo import Repository
from .sources import read_sources
from .upstream import Upstream, edit_manifest, moved_url

__all__ = ["Pin", "check_counts", "parse_staged", "pinned", "write_back"]


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


def pinned(
    u: Upstream, repo: Repository, commits: tuple[str, str], last: dict[str, Any], copy: Path, text: str, most: int
) -> tuple[Pin, str]:
    """Write `u`'s file (and its translation's) at `commits` into `copy`; returns its pin and the manifest `text`
    with the source's `version`, `url` and `path` moved to them. A file of more than twice `most` entries
    (by its headings and bold list items, an entry's two forms) is refused before it is parsed."""
    commit, other = commits
    path = _write(repo, commit, u.path, str(last.get("commit", "")), copy / u.file, most)
    date = repo.date(commit)
    pin = Pin(u.repo, u.ref, commit, path, f"{date} ({commit[:7]})", moved_url(u.url, u.repo, commit, path))
    text = edit_manifest(text, u.name, {"version": pin.version, "url": pin.url, "path": path})
    if u.translation_path:
        old = str(last.get("translation_commit", ""))
        other_path = _write(repo, other, u.translation_path, old, copy / u.translation_file, most)
        url = moved_url(u.translation_url, u.repo, other, other_path)
        text = edit_manifest(text, u.name, {"url": url, "path": other_path}, translation=True)
        pin = Pin(**{**pin.__dict__, "translation_commit": other, "translation_path": other_path})
    return pin, text


def _write(repo: Repository, commit: str, path: str, last: str, to: Path, most: int) -> str:
    """Write the file at `path` in `commit` to `to`; where upstream moved it since commit `last`,
    the file where it went. Returns the path read. SyncFailed for a file of more than twice `most`
    headings, bold list items or lines (a Q&A file's rows): too many entries to parse."""
    data = repo.read(commit, path)
    if data is None and last:
        moved = repo.renamed(last, commit, path)
        if moved is not None:
            path, data = moved, repo.read(commit, moved)
    if data is None:
        raise SyncFailed(repo.source, f"{repo.url} has no file {path!r} at {commit[:7]}")
    found, kind = _rough_count(data, to.suffix.lower())
    if found > 2 * most:
        raise SyncFailed(
            repo.source,
            f"{repo.url} {path!r} at {commit[:7]} holds {found:,} {kind}, more than twice KB_SYNC_MAX_ENTRIES "
            f"({most}): too many entries to parse",
        )
    to.write_bytes(data)
    return path


_HEADING = re.compile(rb"^[ \t]{0,3}#{1,6}[ \t]", re.M)
_BOLD_ITEM = re.compile(rb"^[ \t]*(?:\d+[.)]|[-*+])[ \t]+\*\*", re.M)


def _rough_count(data: bytes, suffix: str) -> tuple[int, str]:
    """At least as many as the entries a file holds, counted without parsing it: a Markdown file's headings or
    bold list items (whichever are more), a Q&A file's lines (a workbook's are counted as it is read)."""
    if suffix in (".csv", ".tsv", ".jsonl"):
        return data.count(b"\n"), "lines"
    if suffix == ".xlsx":
        return 0, "rows"
    headings, items = len(_HEADING.findall(data)), len(_BOLD_ITEM.findall(data))
    return (headings, "headings") if headings >= items else (items, "bold list items")


def check_counts(upstreams: Sequence[Upstream], entries: Sequence[Entry], pins: dict[str, Pin], most: int) -> None:
    """Refuse an upstream file of more than `most` entries (KB_SYNC_MAX_ENTRIES), before anything is embedded."""
    counts = Counter(e.source for e in entries)
    for u in upstreams:
        if counts[u.name] > most:
            pin = pins[u.name]
            raise SyncFailed(
                u.name,
                f"{u.repo} {pin.path!r} at {pin.commit[:7]} holds {counts[u.name]} entries, more than "
                f"KB_SYNC_MAX_ENTRIES ({most})",
            )


def parse_staged(staged: dict[Path, Path]) -> list[Entry]:
    """The entries of the staged copies; a file that does not parse is named as its folder's."""
    entries = []
    for folder, copy in staged.items():
        try:
            entries += read_sources(copy).entries
        except SourceErrors as exc:
            raise SourceErrors([_in(e, copy, folder) for e in exc.errors]) from None
        except SourceError as exc:
            raise _in(exc, copy, folder) from None
    return entries


def _in(exc: SourceError, staged: Path, folder: Path) -> SourceError:
    path = folder / exc.path.relative_to(staged) if exc.path.is_relative_to(staged) else exc.path
    return SourceError(path, exc.message.replace(str(staged), str(folder)), exc.line)


def write_back(staged: Path, folder: Path) -> None:
    """Put the staged files that differ into the sources folder, each by a rename."""
    for path in sorted(p for p in staged.iterdir() if p.is_file()):
        target = folder / path.name
        if target.is_file() and target.read_bytes() == path.read_bytes():
            continue
        tmp = folder / f".{path.name}.sync-{os.getpid()}"
        shutil.copy2(path, tmp)
        os.replace(tmp, target)
