"""The sources manifest: `sources.toml`, one `[[source]]` table per FAQ document, and an
optional `[source.translation]` table under it naming the same document in the other
language (its file, lang, pinned url, licence and entries style). A title is one string,
or a table of one per language (`title = { zh = "ROLL 问答", en = "ROLL Q&A" }`); an
optional `[site]` table names the site that serves the sources (`name`, `tagline`, each
one string or one per language); `[[intended_duplicates]]` tables mark pairs of entries meant
to be alike (see `ingest/intended.py`).

A source's file is read by the reader of its format (`ingest/readers/`): a Markdown document, or
a Q&A file (`.csv`, `.tsv`, `.xlsx`, `.jsonl`), which holds both languages in its own columns, so
has no `[source.translation]`; `sheet` names the one sheet of a workbook to read.

A directory without a manifest but with files a reader reads (`*.md`, Q&A files) gets a default
one, so that `kb ingest --sources DIR` works on a user's own FAQs: each file is a source as its
reader describes it (an `X.en.md` beside `X.md` is its English version, not a source of its own);
a file whose name a reader earlier in the list has taken (`faq.csv` beside `faq.md`) is `faq-csv`.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationInfo, field_validator

from kb.entries import ENTRY_STYLES, TRANSLATORS, Source
from kb.errors import SourceError, SourceErrors
from kb.tomlfile import DataModel, TomlFile, iso_date, load_toml, nonempty, one_of

from .document import document_lang, readable_name
from .intended import IntendedTable
from .readers import Reader, reader_by_suffix, reader_for, readers

__all__ = [
    "load_manifest",
    "load_site",
    "document_lang",
    "readable_name",
    "MANIFEST_NAME",
    "ENTRY_STYLES",
    "LANGS",
    "TRANSLATORS",
]

MANIFEST_NAME = "sources.toml"
UPSTREAM_FIELDS = ("repo", "path", "ref")
_UPSTREAM = {"path": "file in the repository", "ref": "branch, tag or commit to read"}
LANGS = ("zh", "en")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _lang(value: str) -> str:
    if value not in LANGS:
        raise ValueError(f"unknown lang {value!r} (expected 'zh' or 'en')")
    return value


def _entries(value: str) -> str:
    if value and value not in ENTRY_STYLES:
        raise ValueError(f"unknown entries style {value!r} (expected 'headings' or 'list')")
    return value


def _per_language(value: object, info: ValidationInfo) -> dict[str, str]:
    """A text given once for every language ("ROLL Q&A"), or per language ({zh = "…", en = "…"}),
    as {lang: text}; a plain string is keyed "" (every language)."""
    name = info.field_name
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"field {name!r} is empty")
        return {"": value}
    if not isinstance(value, dict) or not value:
        raise ValueError(
            f"field {name!r} must be a string or a table of one per language "
            f'({name} = {{ zh = "…", en = "…" }}), got {value!r}'
        )
    for lang, text in value.items():
        if lang not in LANGS:
            raise ValueError(f"field {name!r}: unknown language {lang!r} (expected 'zh' or 'en')")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"field {name!r}: the {lang} text must be a non-empty string, got {text!r}")
    return dict(value)


def _spread(given: dict[str, str]) -> dict[str, str]:
    """{lang: text} for each language a `_per_language` field gives one in: a text given once is every language's."""
    texts = {lang: given.get(lang) or given.get("", "") for lang in LANGS}
    return {lang: text for lang, text in texts.items() if text}


# A ref as git names one (`git check-ref-format`), or a commit: no option, no revision syntax, no space.
_BAD_REF = re.compile(r"^-|\.\.|@\{|[\x00-\x20\x7f~^:?*\[\\]|(?:\.lock|/|\.)$|^/|//")
_SCHEMES = ("https", "http", "ssh", "git", "file")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://(?:[^@/]*@)?([^/]*)")
_SCP = re.compile(r"(?:[^@/:]+@)?([^/:]+):")  # git@host:path


def _ref(value: str, info: ValidationInfo) -> str:
    """A `ref` that git reads as a branch, tag or commit, and never as an option."""
    if value and _BAD_REF.search(value):
        raise ValueError(
            f"field {info.field_name!r}: {value!r} is not a branch, tag or commit name (it may not start with '-', "
            "nor hold spaces, '..', '~', '^', ':', '?', '*', '[', '\\' or '@{')"
        )
    return value


def _repo(value: str, info: ValidationInfo) -> str:
    """A `repo` that git reads as a repository's URL, and never as an option or a command to run."""
    if not value:
        return value
    expected = "an https://, ssh://, git://, file:// URL, or host:path"
    if value.startswith("-") or re.search(r"[\x00-\x20\x7f]", value):
        raise ValueError(f"field 'repo': {value!r} is not a repository URL ({expected}; no spaces, no leading '-')")
    scheme = _SCHEME.match(value)
    if scheme is not None:
        if scheme[1].lower() not in _SCHEMES:
            raise ValueError(f"field 'repo': {value!r} uses {scheme[1]}://, which the sync does not read ({expected})")
        if scheme[2].startswith("-"):
            raise ValueError(f"field 'repo': {value!r} names a host starting with '-'")
        return value
    if "::" in value:
        raise ValueError(
            f"field 'repo': {value!r} names a git transport helper, which the sync does not run ({expected})"
        )
    scp = _SCP.match(value)
    if scp is not None and scp[1].startswith("-"):
        raise ValueError(f"field 'repo': {value!r} names a host starting with '-'")
    return value


def _http(value: str, info: ValidationInfo) -> str:
    if value and not re.match(r"https?://", value, re.IGNORECASE):
        raise ValueError(f"field {info.field_name!r} must be an http(s) URL, got {value!r}")
    return value


class _Translation(DataModel):
    """A `[source.translation]` table: the same document in the other language."""

    file: str
    lang: str
    title: str = ""
    url: str = ""
    live_url: str = ""
    entries: str = ""  # default: the source's
    license: str = ""
    translated_by: str = "authors"  # who wrote this version: see TRANSLATORS
    translated_on: str = ""  # when, for a translation that is not the authors' own
    reviewed: bool = False  # a machine translation a maintainer has checked
    skipped: list[str] = []  # ids of the source's entries this version leaves out (a draft's failures)
    path: str = ""  # where this version is in the source's upstream repository (`kb sync`)
    ref: str = ""  # the branch, tag or commit to read it at (default: the source's)
    stale: list[str] = []  # ids of entries changed upstream since this translation was written (`kb sync`)

    _required = field_validator("file", "lang")(nonempty)
    _lang = field_validator("lang")(_lang)
    _entries = field_validator("entries")(_entries)
    _http = field_validator("url", "live_url")(_http)
    _translated_by = field_validator("translated_by")(one_of(*TRANSLATORS))
    _date = field_validator("translated_on")(iso_date)
    _ref = field_validator("ref")(_ref)


class _Source(DataModel):
    """A `[[source]]` table."""

    name: str
    file: str
    title: dict[str, str]  # {lang: title}; {"": title} for one title in every language
    lang: str
    framework: str = ""  # the framework the FAQ is about, when it is about one
    version: str = ""
    url: str = ""
    live_url: str = ""
    entries: str = "headings"
    license: str = ""
    sheet: str = ""  # the sheet of a Q&A workbook (.xlsx) to read; every sheet by default
    translation: _Translation | None = None
    # The upstream Git repository the file is taken from, for `kb sync` (see ingest/sync.py).
    repo: str = ""  # its URL: https://, ssh or file://
    path: str = ""  # the file in the repository
    ref: str = ""  # the branch, tag or commit to read
    scope: list[str] = []  # words one of which a question must name for these entries to answer it (kb.scope)

    _required = field_validator("name", "file", "lang")(nonempty)
    _title = field_validator("title", mode="before")(_per_language)
    _lang = field_validator("lang")(_lang)
    _entries = field_validator("entries")(_entries)
    _http = field_validator("url", "live_url")(_http)
    _ref = field_validator("ref")(_ref)
    _repo = field_validator("repo")(_repo)

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: list[str]) -> list[str]:
        for word in value:
            if not word.strip() or word != word.strip():
                raise ValueError(f"scope: {word!r} is not a word (each is a word a question names, such as 'NPU')")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("name may hold only letters, digits, '.', '_' and '-'")
        return value


class _Site(DataModel):
    """The `[site]` table: what the site serving these sources is called."""

    name: dict[str, str]
    tagline: dict[str, str] = {}

    _texts = field_validator("name", "tagline", mode="before")(_per_language)


class _Manifest(DataModel):
    site: _Site | None = None
    source: list[_Source] = []
    intended_duplicates: list[IntendedTable] = []


def _sources(doc: TomlFile[_Manifest]) -> list[Source]:
    """The manifest's sources, each file checked to exist beside it."""
    folder = doc.path.parent
    sources = []
    for number, table in enumerate(doc.model.source):
        at: tuple[str | int, ...] = ("source", number)
        if not (folder / table.file).is_file():
            raise doc.error(f"file {table.file!r} does not exist", at, "file")
        if table.sheet and not table.file.lower().endswith(".xlsx"):
            raise doc.error(f"sheet {table.sheet!r}: {table.file!r} is not a workbook (.xlsx)", at, "sheet")
        reader = reader_for(table.file)
        if table.translation is not None and reader.translation:
            raise doc.error(
                f"{table.file!r} is a {reader.name}: its other language goes {reader.translation}, "
                "not in a [source.translation]",
                (*at, "translation"),
            )
        if table.repo and not (table.path and table.ref):
            missing = "path" if not table.path else "ref"
            raise doc.error(f"repo {table.repo!r} is given without {missing!r}, the {_UPSTREAM[missing]}", at, "repo")
        fields = table.model_dump(exclude={"translation", "title", *UPSTREAM_FIELDS})
        titles = _spread(table.title)
        fields |= {"title": titles.get(table.lang) or next(iter(titles.values())), "titles": titles}
        fields["scope"] = tuple(table.scope)
        other = table.translation
        if other is None:
            sources.append(Source(**fields))
            continue
        at = (*at, "translation")
        if other.lang == table.lang:
            raise doc.error(f"lang {other.lang!r} is the source's own language", at, "lang")
        if other.file == table.file:
            raise doc.error(f"file {other.file!r} is the source's own file", at, "file")
        if not (folder / other.file).is_file():
            raise doc.error(f"file {other.file!r} does not exist", at, "file")
        keep = {key: fields[key] for key in ("name", "framework", "version")}
        if other.title:  # a translation's own title, as manifests have always allowed
            titles = fields["titles"] = titles | {other.lang: other.title}
        translated = other.model_dump(exclude={"path", "ref", "stale"}) | {
            "entries": other.entries or table.entries,
            "title": titles.get(other.lang) or fields["title"],
            "titles": titles,
            "translated_by": "" if other.translated_by == "authors" else other.translated_by,
            "skipped": tuple(other.skipped),
        }
        sources.append(Source(**fields, translation=Source(**keep, **translated)))
    return sources


def _default_source(path: Path, reader: Reader) -> Source | None:
    """The source a file no manifest describes is, as its reader describes it (None: part of another's)."""
    earlier = readers()[: readers().index(reader)]
    # beside a faq.md of the same name, faq.csv is the source faq-csv
    taken = any(path.with_suffix(suffix).is_file() for other in earlier for suffix in other.suffixes)
    return reader.describe(path, f"{path.stem}-{path.suffix[1:].lower()}" if taken else path.stem)


def _readable(documents: list[tuple[Path, Reader]], errors: list[SourceError] | None) -> list[Source]:
    """A source for each document that can be read; those that cannot go to `errors`
    (if None: raised, all of them)."""
    sources, found = [], []
    for path, reader in documents:
        try:
            source = _default_source(path, reader)
        except SourceError as exc:
            found.append(exc)
            continue
        if source is not None:
            sources.append(source)
    if errors is None:
        SourceErrors.raise_any(found)
    else:
        errors.extend(found)
    return sources


def load_site(sources_dir: Path) -> dict[str, dict[str, str]]:
    """The `[site]` table of `sources_dir/sources.toml` as {"name": {lang: text}, "tagline": {...}}
    (a text given once is keyed by each language); {} when there is no manifest or no table."""
    manifest = Path(sources_dir) / MANIFEST_NAME
    if not manifest.is_file():
        return {}
    site = load_toml(manifest, _Manifest, "the sources manifest").model.site
    if site is None:
        return {}
    return {key: _spread(value) for key, value in (("name", site.name), ("tagline", site.tagline)) if value}


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
        found = [(p, reader_by_suffix(p)) for p in sorted(sources_dir.iterdir()) if p.is_file()]
        documents = [(path, reader) for path, reader in found if reader is not None]
        if not documents:
            first, *others = [(r.name, ", ".join(f"*{s}" for s in r.suffixes)) for r in readers() if r.suffixes]
            nor = "; ".join(f"nor {name}s: {kinds}" for name, kinds in others)
            raise SourceError(manifest, f"no {MANIFEST_NAME} and no {first[1]} files ({nor}) in {sources_dir}")
        return _readable(documents, errors)
    doc = load_toml(manifest, _Manifest, "the sources manifest")
    if not doc.model.source:
        raise doc.error("no [[source]] tables")
    sources = _sources(doc)
    seen: set[str] = set()
    for number, source in enumerate(sources):
        if source.name in seen:
            raise SourceError(manifest, f"duplicate source name {source.name!r}", doc.line(("source", number)))
        seen.add(source.name)
    return sources
