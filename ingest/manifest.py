"""The sources manifest: `sources.toml`, one `[[source]]` table per FAQ document.

A directory without a manifest but with `*.md` files gets a default one, so that
`kb ingest --sources DIR` works on a user's own Markdown.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from kb.entries import Source
from kb.errors import SourceError

from .document import read_text
from .markdown_faq import guess_entries_style, title_of

__all__ = ["load_manifest", "MANIFEST_NAME", "ENTRY_STYLES", "LANGS"]

MANIFEST_NAME = "sources.toml"
ENTRY_STYLES = ("headings", "list")
LANGS = ("zh", "en")
_REQUIRED = ("name", "file", "title", "framework", "lang")
_OPTIONAL = {"version": "", "url": "", "live_url": "", "entries": "headings"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_lang(text: str) -> str:
    """`zh` when CJK characters make up at least 10% of the letters, else `en`."""
    letters = sum(1 for c in text if c.isalpha())
    cjk = len(_CJK.findall(text))
    return "zh" if letters and cjk / letters >= 0.10 else "en"


def _source(manifest: Path, number: int, table: Any) -> Source:
    where = f"[[source]] #{number}"
    if not isinstance(table, dict):
        raise SourceError(manifest, f"{where}: expected a table, got {table!r}")
    if isinstance(table.get("name"), str):
        where = f"source {table['name']!r}"
    unknown = sorted(set(table) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise SourceError(manifest, f"{where}: unknown field {unknown[0]!r}")
    for key in _REQUIRED:
        if key not in table:
            raise SourceError(manifest, f"{where}: missing required field {key!r}")
    fields = {**_OPTIONAL, **table}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise SourceError(manifest, f"{where}: field {key!r} must be a string, got {value!r}")
        if key in _REQUIRED and not value.strip():
            raise SourceError(manifest, f"{where}: field {key!r} is empty")
    if not _NAME.fullmatch(fields["name"]):
        raise SourceError(
            manifest, f"{where}: name may hold only letters, digits, '.', '_' and '-'"
        )
    if fields["entries"] not in ENTRY_STYLES:
        raise SourceError(
            manifest,
            f"{where}: unknown entries style {fields['entries']!r} (expected 'headings' or 'list')",
        )
    if fields["lang"] not in LANGS:
        raise SourceError(
            manifest, f"{where}: unknown lang {fields['lang']!r} (expected 'zh' or 'en')"
        )
    for key in ("url", "live_url"):
        if fields[key] and not re.match(r"https?://", fields[key], re.IGNORECASE):
            raise SourceError(manifest, f"{where}: field {key!r} must be an http(s) URL, got {fields[key]!r}")
    if not (manifest.parent / fields["file"]).is_file():
        raise SourceError(manifest, f"{where}: file {fields['file']!r} does not exist")
    return Source(**fields)


def _default_source(path: Path) -> Source:
    text = read_text(path)
    return Source(
        name=path.stem,
        file=path.name,
        title=title_of(text) or path.stem,
        framework=path.stem,
        lang=detect_lang(text),
        version="",
        url="",
        entries=guess_entries_style(text),
    )


def load_manifest(sources_dir: Path) -> list[Source]:
    """The sources described by `sources_dir/sources.toml` (or a default manifest)."""
    sources_dir = Path(sources_dir)
    if not sources_dir.is_dir():
        raise SourceError(sources_dir, "sources directory does not exist")
    manifest = sources_dir / MANIFEST_NAME
    if not manifest.is_file():
        documents = sorted(sources_dir.glob("*.md"))
        if not documents:
            raise SourceError(manifest, f"no {MANIFEST_NAME} and no *.md files in {sources_dir}")
        return [_default_source(path) for path in documents]
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise SourceError(manifest, f"not UTF-8: {exc.reason}") from exc
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        number = int(line[1]) if line else None
        raise SourceError(manifest, f"TOML syntax error: {exc}", number) from exc
    tables = data.get("source")
    if not isinstance(tables, list) or not tables:
        raise SourceError(manifest, "no [[source]] tables")
    sources = [_source(manifest, number, table) for number, table in enumerate(tables, 1)]
    seen: set[str] = set()
    for source in sources:
        if source.name in seen:
            raise SourceError(manifest, f"duplicate source name {source.name!r}")
        seen.add(source.name)
    return sources
