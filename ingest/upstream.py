"""The sources that name their upstream (`repo`, `path`, `ref` in sources.toml), and the edits
`kb sync` makes to the manifest: each source's `version`, `url` and `path` moved to the commit
read, a translation's `stale` list. Edits go line by line, so the manifest's comments and layout stay.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from kb.errors import SourceError
from kb.tomlfile import load_toml

from .manifest import MANIFEST_NAME, _Manifest

__all__ = ["Upstream", "load_upstreams", "moved_url", "edit_manifest"]

_GITHUB = re.compile(r"(?:https://|git@|ssh://git@)github\.com[:/]([^/]+)/(.+?)(?:\.git)?/?$")
_PINNED = re.compile(r"/(blob|tree|raw)/[^/]+/.*$")
_HEADER = re.compile(r"\s*\[")


@dataclass(frozen=True)
class Upstream:
    """Where a source's file (and its translation's) comes from."""

    name: str
    file: str
    repo: str
    path: str
    ref: str
    url: str
    translation_file: str = ""
    translation_path: str = ""  # "": the translation is not taken from upstream
    translation_ref: str = ""
    translation_url: str = ""
    translated_by: str = ""  # "" for the authors' own translation
    stale: tuple[str, ...] = ()


def load_upstreams(sources_dir: Path) -> list[Upstream]:
    """The sources of `sources_dir/sources.toml` that give a `repo`, in manifest order."""
    manifest = Path(sources_dir) / MANIFEST_NAME
    if not manifest.is_file():
        raise SourceError(manifest, "no sources manifest: `kb sync` reads the sources that name a repo in it")
    found = []
    for table in load_toml(manifest, _Manifest, "the sources manifest").model.source:
        if not table.repo:
            continue
        other = table.translation
        found.append(
            Upstream(
                table.name,
                table.file,
                table.repo,
                table.path,
                table.ref,
                table.url,
                translation_file=other.file if other else "",
                translation_path=other.path if other else "",
                translation_ref=(other.ref or table.ref) if other else "",
                translation_url=other.url if other else "",
                translated_by="" if other is None or other.translated_by == "authors" else other.translated_by,
                stale=tuple(other.stale) if other else (),
            )
        )
    return found


def moved_url(url: str, repo: str, commit: str, path: str) -> str:
    """The pinned link `url` moved to `path` at `commit`: a GitHub repository's blob link, else
    `url`'s `/blob/<commit>/<path>` part replaced (GitLab, Gitea); `url` unchanged when it pins nothing."""
    github = _GITHUB.match(repo)
    if github:
        return f"https://github.com/{github[1]}/{github[2]}/blob/{commit}/{path}"
    if url and _PINNED.search(url):
        return _PINNED.sub(lambda m: f"/{m[1]}/{commit}/{path}", url)
    return url


def edit_manifest(text: str, source: str, fields: dict[str, object], translation: bool = False) -> str:
    """`text` (a sources.toml) with `fields` set in the `[[source]]` table named `source` (or its
    `[source.translation]`): each key's line replaced, or added under the table's header."""
    lines = text.splitlines(keepends=True)
    start, end = _table(lines, source, translation)
    for key, value in fields.items():
        line = f"{key} = {json.dumps(value, ensure_ascii=False)}\n"
        pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
        at = next((n for n in range(start + 1, end) if pattern.match(lines[n])), None)
        if at is None:
            lines.insert(start + 1, line)
            end += 1
        else:
            lines[at] = line
    return "".join(lines)


def _table(lines: list[str], source: str, translation: bool) -> tuple[int, int]:
    """The header line of the table, and the line where the next table starts."""
    headers = [n for n, line in enumerate(lines) if _HEADER.match(line)]
    named = re.compile(rf"\s*name\s*=\s*[\"']{re.escape(source)}[\"']")
    for k, n in enumerate(headers):
        if lines[n].strip() != "[[source]]":
            continue
        end = headers[k + 1] if k + 1 < len(headers) else len(lines)
        if not any(named.match(lines[m]) for m in range(n + 1, end)):
            continue
        if not translation:
            return n, end
        following = headers[k + 1] if k + 1 < len(headers) else None
        if following is not None and lines[following].strip() == "[source.translation]":
            after = headers[k + 2] if k + 2 < len(headers) else len(lines)
            return following, after
    raise ValueError(f"no [[source]] named {source!r}{' with a [source.translation]' if translation else ''}")
