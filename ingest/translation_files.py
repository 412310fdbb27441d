"""The files `kb translate` reads and writes: the source it is given, the draft, the manifest's translation table.

`find_source` finds the source by its name or its file; `draft_file` says where its draft
goes (an error when that would replace a translation people wrote). `write_checked` writes
the draft and the manifest (the source's `[source.translation]` table added or replaced; a
folder without a manifest gets one, describing its sources as the default manifest does),
reads both back as `kb ingest` will, and on any fault puts back what was there.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Sequence

from kb.entries import Source
from kb.errors import SourceError
from kb.tomlfile import TomlValue, toml_table

from .manifest import LANGS, MANIFEST_NAME, load_manifest
from .markdown_faq import parse_source
from .readers import with_translations

__all__ = ["find_source", "draft_file", "machine_table", "write_checked"]

_HEADER = re.compile(r"\s*\[\[?\s*([^\]\s](?:[^\]]*[^\]\s])?)\s*\]\]?\s*(?:#.*)?$")  # the name ends on no space


# ---------------------------------------------------------------------------- the source and its draft's file


def find_source(name_or_path: str, folder: Path) -> tuple[Path, Source, list[Source]]:
    """The folder, the source named (or whose file is given) and all the folder's sources."""
    given = Path(name_or_path).expanduser()
    if name_or_path.endswith(".md") or os.sep in name_or_path or given.is_file():
        if not given.is_file():
            raise SourceError(given, "no such file")
        folder = given.resolve().parent
        sources = load_manifest(folder)
        for source in sources:
            if (folder / source.file).resolve() == given.resolve():
                return folder, source, sources
        for source in sources:
            if source.translation and (folder / source.translation.file).resolve() == given.resolve():
                raise SourceError(
                    given, f"is the {source.translation.lang} version of {source.file}; translate {source.file}"
                )
        raise SourceError(given, f"is not a source of {folder / MANIFEST_NAME} (it lists {_names(sources)})")
    sources = load_manifest(folder)
    for source in sources:
        if source.name == name_or_path:
            return folder, source, sources
    raise SourceError(folder, f"no source named {name_or_path!r}; the sources here are {_names(sources)}")


def _names(sources: list[Source]) -> str:
    return ", ".join(s.name for s in sources) or "none"


def _default_draft_file(source: Source, lang: str) -> str:
    """`faq.en.md` for `faq.md` (and for `faq.zh.md`), in the same folder."""
    path = Path(source.file)
    stem = path.stem
    if Path(stem).suffix.lstrip(".") in LANGS:
        stem = Path(stem).stem
    return path.with_name(f"{stem}.{lang}.md").as_posix()


def draft_file(folder: Path, source: Source, lang: str, force: bool) -> str:
    """Where the draft goes; an error when that would replace a translation people wrote."""
    existing = source.translation
    if existing is not None:
        if existing.translated_by != "machine" and not force:
            who = "the maintainers'" if existing.translated_by == "maintainers" else "the authors'"
            raise SourceError(
                folder / existing.file,
                f"is {who} translation of {source.file}; kb translate --force replaces it with a machine draft",
            )
        return existing.file
    file = _default_draft_file(source, lang)
    if (folder / file).exists() and not force:
        raise SourceError(
            folder / file, "exists and is not a translation the manifest names; kb translate --force replaces it"
        )
    return file


# ---------------------------------------------------------------------------- the manifest


def _source_table(source: Source) -> list[str]:
    fields: list[tuple[str, TomlValue]] = [(key, getattr(source, key)) for key in ("name", "file", "title", "lang")]
    fields += [
        (key, getattr(source, key))
        for key in ("framework", "version", "url", "live_url", "license")
        if getattr(source, key)
    ]
    return toml_table("[[source]]", [*fields, ("entries", source.entries)])


def _authors_table(translation: Source) -> list[str]:
    fields: list[tuple[str, TomlValue]] = [
        ("file", translation.file),
        ("lang", translation.lang),
        ("title", translation.title),
        ("entries", translation.entries),
        ("translated_by", "authors"),
    ]
    return toml_table("[source.translation]", fields)


def machine_table(file: str, lang: str, title: str, entries: str, skipped: Sequence[str]) -> list[str]:
    """The `[source.translation]` table of a machine draft made today, not reviewed; `title`
    only when the draft's differs from the original's, `skipped` the ids of the entries left out."""
    fields: list[tuple[str, TomlValue]] = [("file", file), ("lang", lang)]
    if title:
        fields.append(("title", title))
    fields += [
        ("entries", entries),
        ("translated_by", "machine"),
        ("translated_on", datetime.date.today().isoformat()),
        ("reviewed", False),
    ]
    if skipped:
        fields.append(("skipped", list(skipped)))
    return toml_table("[source.translation]", fields)


def _new_manifest(sources: list[Source], name: str, table: list[str]) -> str:
    lines = [
        "# The FAQ documents of this folder, one [[source]] table each; the fields are described",
        "# in the sources.toml shipped with kb (kb/sources/sources.toml). Files added to the",
        "# folder later need a table here too.",
    ]
    for source in sources:
        lines += ["", *_source_table(source)]
        if source.name == name:
            lines += ["", *table]
        elif source.translation is not None:
            lines += ["", *_authors_table(source.translation)]
    return "\n".join(lines) + "\n"


def _with_table(manifest: Path, text: str, number: int, table: list[str]) -> str:
    """The manifest `text` with the `number`th [[source]]'s translation table added or replaced."""
    lines = text.split("\n")
    headers = [(i, re.sub(r"\s+", "", m[1])) for i, line in enumerate(lines) if (m := _HEADER.fullmatch(line))]
    starts = [i for i, name in headers if name == "source" and lines[i].lstrip().startswith("[[")]
    if number >= len(starts):
        raise SourceError(
            manifest, f"its [[source]] table #{number + 1} was not found; add the translation table by hand"
        )
    start = starts[number]
    end = next((i for i, name in headers if i > start and name != "source.translation"), len(lines))
    own = next((i for i, name in headers if start < i < end and name == "source.translation"), None)

    def last_field(after: int) -> int:
        content = [i for i in range(after, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")]
        return content[-1] if content else after

    if own is not None:
        return "\n".join([*lines[:own], *table, *lines[last_field(own) + 1 :]])
    at = last_field(start) + 1
    return "\n".join([*lines[:at], "", *table, *lines[at:]])


# ---------------------------------------------------------------------------- writing both


def write_checked(folder: Path, file: str, draft: str, source: Source, sources: list[Source], table: list[str]) -> None:
    """Write the draft and the manifest, then read both back as `kb ingest` will; on any
    fault put back what was there and raise."""
    manifest = folder / MANIFEST_NAME
    old_manifest = manifest.read_bytes() if manifest.is_file() else None
    old_draft = (folder / file).read_bytes() if (folder / file).is_file() else None
    if old_manifest is None:
        text = _new_manifest(sources, source.name, table)
    else:
        text = _with_table(manifest, old_manifest.decode("utf-8"), [s.name for s in sources].index(source.name), table)
    try:
        _replace(folder / file, draft.encode("utf-8"))
        _replace(manifest, text.encode("utf-8"))
        described = next(s for s in load_manifest(folder) if s.name == source.name)
        version = described.translation
        if version is None or version.file != file or version.translated_by != "machine":
            raise SourceError(manifest, f"does not describe {file} as the machine translation of {source.file}")
        with_translations(
            parse_source(folder / described.file, described),
            parse_source(folder / file, version),
            folder / described.file,
            folder / file,
            version,
        )
    except BaseException:
        for path, old in ((manifest, old_manifest), (folder / file, old_draft)):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                _replace(path, old)
        raise


def _replace(path: Path, data: bytes) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)
