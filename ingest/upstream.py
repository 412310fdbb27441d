"""The sources that name their upstream (`repo`, `path`, `ref` in sources.toml), and the edits
`kb sync` makes to the manifest: each source's `version`, `url` and `path` moved to the commit
read, a translation's `stale` list. An edit changes only the values it sets, so the manifest's comments,
key order and layout stay, and a key the table does not have is added after its last key.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

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
    `url`'s `/blob/<commit>/<path>` part replaced (GitLab, Gitea); `url` unchanged when it pins nothing.
    The path is percent-encoded in the link ("User Guides/faq.md" -> "User%20Guides/faq.md")."""
    path = quote(path, safe="/")
    github = _GITHUB.match(repo)
    if github:
        return f"https://github.com/{github[1]}/{github[2]}/blob/{commit}/{path}"
    if url and _PINNED.search(url):
        return _PINNED.sub(lambda m: f"/{m[1]}/{commit}/{path}", url)
    return url


def edit_manifest(text: str, source: str, fields: dict[str, object], translation: bool = False) -> str:
    """`text` (a sources.toml) with `fields` set in the `[[source]]` table named `source` (or its
    `[source.translation]`): each key's value replaced where it stands (its line's comment kept, a value
    over several lines replaced whole), or, for a key the table does not have, a line added after the
    table's last key. An empty value for a key the table does not have adds nothing. Every other byte
    of the file stays as it was."""
    lines = text.splitlines(keepends=True)
    start, end = _table(lines, source, translation)
    for key, value in fields.items():
        pattern = re.compile(rf"([ \t]*{re.escape(key)}[ \t]*=[ \t]*)")
        at = next((n for n in range(start + 1, end) if pattern.match(lines[n])), None)
        if at is None:
            if value in ("", [], ()):
                continue
            last = max((n for n in range(start + 1, end) if _KEY.match(lines[n])), default=start)
            last = _value_end_line(lines, last) if last > start else start
            if not lines[last].endswith("\n"):
                lines[last] += "\n"
            lines.insert(last + 1, f"{key} = {_toml(value)}\n")
            end += 1
            continue
        head = pattern.match(lines[at])
        assert head is not None
        stop = _value_end_line(lines, at)
        joined = "".join(lines[at : stop + 1])
        after = _value_end(joined, head.end())
        if _parsed(joined[head.end() : after]) == value:
            continue  # the same value, however it is written: the line stays as it is
        replaced = joined[: head.end()] + _toml(value) + joined[after:]
        lines[at : stop + 1] = [replaced]
        end -= stop - at
    return "".join(lines)


_KEY = re.compile(r"[ \t]*[A-Za-z0-9_-]+[ \t]*=")


def _toml(value: object) -> str:
    """A string, or a list of strings, as TOML writes it (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _parsed(value: str) -> object:
    """A TOML value's text as Python (None when it does not parse)."""
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return None


def _value_end_line(lines: list[str], at: int) -> int:
    """The line where the value of the key on line `at` ends (a multi-line array or string goes on)."""
    text = "".join(lines[at:])
    head = re.match(r"[^=]*=[ \t]*", text)
    end = _value_end(text, head.end() if head else 0)
    return at + text.count("\n", 0, end) - (1 if end and text[end - 1] == "\n" else 0)


def _value_end(text: str, i: int) -> int:
    """Where the TOML value starting at `text[i]` ends: after its closing quote or bracket, before the spaces
    and comment that may follow it on its line."""
    depth = 0
    while i < len(text):
        quote = next((q for q in ('"""', "'''", '"', "'") if text.startswith(q, i)), "")
        if quote:
            i += len(quote)
            while i < len(text) and not text.startswith(quote, i):
                i += 2 if quote[0] == '"' and text[i] == "\\" else 1
            i += len(quote)
            continue
        c = text[i]
        if depth == 0 and c in "#\n":
            break
        if c == "#":  # a comment inside a multi-line array: to the line's end
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        depth += 1 if c in "[{" else -1 if c in "]}" else 0
        i += 1
    while i > 0 and text[i - 1] in " \t\r":
        i -= 1
    return i


def _table(lines: list[str], source: str, translation: bool) -> tuple[int, int]:
    """The header line of the table, and the line where the next table starts."""
    headers = [n for n, line in enumerate(lines) if _HEADER.match(line)]
    named = re.compile(rf"\s*name\s*=\s*[\"']{re.escape(source)}[\"']")
    for k, n in enumerate(headers):
        if _header(lines[n]) != "[[source]]":
            continue
        end = headers[k + 1] if k + 1 < len(headers) else len(lines)
        if not any(named.match(lines[m]) for m in range(n + 1, end)):
            continue
        if not translation:
            return n, end
        following = headers[k + 1] if k + 1 < len(headers) else None
        if following is not None and _header(lines[following]) == "[source.translation]":
            after = headers[k + 2] if k + 2 < len(headers) else len(lines)
            return following, after
    raise ValueError(f"no [[source]] named {source!r}{' with a [source.translation]' if translation else ''}")


def _header(line: str) -> str:
    """A table's header line as `[[source]]` or `[source.translation]`: its comment and spaces left out."""
    return re.sub(r"\s+", "", line.split("#", 1)[0])
