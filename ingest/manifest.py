"""The sources manifest: `sources.toml`, one `[[source]]` table per FAQ document, and an
optional `[source.translation]` table under it naming the same document in the other
language (its file, lang, pinned url, licence and entries style).

A directory without a manifest but with `*.md` files gets a default one, so that
`kb ingest --sources DIR` works on a user's own Markdown: each `X.md` is a source, and an
`X.en.md` (or `X.zh.md`) beside it is its version in that language.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from kb.entries import ENTRY_STYLES, Source
from kb.errors import SourceError, SourceErrors

from .document import read_text
from .markdown_faq import guess_entries_style, title_of

__all__ = ["load_manifest", "MANIFEST_NAME", "ENTRY_STYLES", "LANGS"]

MANIFEST_NAME = "sources.toml"
LANGS = ("zh", "en")
_REQUIRED = ("name", "file", "title", "framework", "lang")
_OPTIONAL = {"version": "", "url": "", "live_url": "", "entries": "headings", "license": ""}
_TRANSLATION_REQUIRED = ("file", "lang")
_TRANSLATION_OPTIONAL = {"title": "", "url": "", "live_url": "", "entries": "", "license": ""}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_lang(text: str) -> str:
    """`zh` when CJK characters make up at least 10% of the letters, else `en`."""
    letters = sum(1 for c in text if c.isalpha())
    cjk = len(_CJK.findall(text))
    return "zh" if letters and cjk / letters >= 0.10 else "en"


def _fields(manifest: Path, where: str, table: Any, required: tuple[str, ...], optional: dict[str, str]) -> dict[str, str]:
    """The table's fields with defaults filled in, each checked to be a (non-empty, if required) string."""
    if not isinstance(table, dict):
        raise SourceError(manifest, f"{where}: expected a table, got {table!r}")
    unknown = sorted(set(table) - set(required) - set(optional))
    if unknown:
        raise SourceError(manifest, f"{where}: unknown field {unknown[0]!r}")
    for key in required:
        if key not in table:
            raise SourceError(manifest, f"{where}: missing required field {key!r}")
    fields = {**optional, **table}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise SourceError(manifest, f"{where}: field {key!r} must be a string, got {value!r}")
        if key in required and not value.strip():
            raise SourceError(manifest, f"{where}: field {key!r} is empty")
    return fields


def _check_common(manifest: Path, where: str, fields: dict[str, str]) -> None:
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


def _translation(manifest: Path, where: str, table: Any, source: dict[str, str]) -> Source:
    where = f"{where}, [source.translation]"
    fields = _fields(manifest, where, table, _TRANSLATION_REQUIRED, _TRANSLATION_OPTIONAL)
    fields["entries"] = fields["entries"] or source["entries"]
    fields["title"] = fields["title"] or source["title"]
    _check_common(manifest, where, fields)
    if fields["lang"] == source["lang"]:
        raise SourceError(manifest, f"{where}: lang {fields['lang']!r} is the source's own language")
    if fields["file"] == source["file"]:
        raise SourceError(manifest, f"{where}: file {fields['file']!r} is the source's own file")
    keep = {key: source[key] for key in ("name", "framework", "version")}
    return Source(**keep, **fields)


def _source(manifest: Path, number: int, table: Any) -> Source:
    where = f"[[source]] #{number}"
    if isinstance(table, dict) and isinstance(table.get("name"), str):
        where = f"source {table['name']!r}"
    translation = table.pop("translation", None) if isinstance(table, dict) else None
    fields = _fields(manifest, where, table, _REQUIRED, _OPTIONAL)
    if not _NAME.fullmatch(fields["name"]):
        raise SourceError(
            manifest, f"{where}: name may hold only letters, digits, '.', '_' and '-'"
        )
    _check_common(manifest, where, fields)
    if translation is not None:
        return Source(**fields, translation=_translation(manifest, where, translation, fields))
    return Source(**fields)


def _language_suffix(path: Path) -> str | None:
    """"en" for `faq.en.md`, None for `faq.md`."""
    suffix = Path(path.stem).suffix.lstrip(".")
    return suffix if suffix in LANGS else None


def _described(path: Path, name: str, lang: str | None = None, translation: Source | None = None) -> Source:
    """A source for a Markdown file that no manifest describes: named after the file."""
    text = read_text(path)
    return Source(
        name=name,
        file=path.name,
        title=title_of(text) or name,
        framework=name,
        lang=lang or detect_lang(text),
        version="",
        url="",
        entries=guess_entries_style(text),
        translation=translation,
    )


def _default_source(path: Path) -> Source:
    source = _described(path, path.stem)
    for other in LANGS:
        version = path.with_name(f"{path.stem}.{other}.md")
        if other != source.lang and version.is_file():
            return replace(source, translation=_described(version, path.stem, other))
    return source


def _is_version_of_another(path: Path) -> bool:
    """`faq.en.md` beside `faq.md` is that file's English version, not a source of its own."""
    lang = _language_suffix(path)
    return lang is not None and path.with_name(f"{Path(path.stem).stem}.md").is_file()


def _readable(documents: list[Path], errors: list[SourceError] | None) -> list[Source]:
    """A source for each document that can be read; those that cannot go to `errors`
    (if None: raised, all of them)."""
    sources, found = [], []
    for path in documents:
        try:
            sources.append(_default_source(path))
        except SourceError as exc:
            found.append(exc)
    if errors is None:
        SourceErrors.raise_any(found)
    else:
        errors.extend(found)
    return sources


def load_manifest(sources_dir: Path, errors: list[SourceError] | None = None) -> list[Source]:
    """The sources described by `sources_dir/sources.toml` (or a default manifest). Without
    a manifest, files that cannot be read are left out and added to `errors` when given."""
    sources_dir = Path(sources_dir)
    if sources_dir.is_file():
        raise SourceError(
            sources_dir, f"is a file; the sources are a directory of FAQ Markdown (for this file: {sources_dir.parent})"
        )
    if not sources_dir.is_dir():
        raise SourceError(sources_dir, "sources directory does not exist")
    manifest = sources_dir / MANIFEST_NAME
    if not manifest.is_file():
        documents = sorted(p for p in sources_dir.glob("*.md") if not _is_version_of_another(p))
        if not documents:
            raise SourceError(manifest, f"no {MANIFEST_NAME} and no *.md files in {sources_dir}")
        return _readable(documents, errors)
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
