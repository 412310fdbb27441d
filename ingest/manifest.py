"""The sources manifest: `sources.toml`, one `[[source]]` table per FAQ document, and an
optional `[source.translation]` table under it naming the same document in the other
language (its file, lang, pinned url, licence and entries style). A title is one string,
or a table of one per language (`title = { zh = "ROLL 问答", en = "ROLL Q&A" }`); an
optional `[site]` table names the site that serves the sources (`name`, `tagline`, each
one string or one per language); `[[intended_duplicates]]` tables mark pairs of entries meant
to be alike (see `ingest/intended.py`).

A source's file is a Markdown document or a Q&A file (`.csv`, `.tsv`, `.xlsx`, `.jsonl`:
`ingest/table_faq.py`), which holds both languages in its own columns, so has no
`[source.translation]`; `sheet` names the one sheet of a workbook to read.

A directory without a manifest but with `*.md` or Q&A files gets a default one, so that
`kb ingest --sources DIR` works on a user's own FAQs: each `X.md` is a source, and an
`X.en.md` (or `X.zh.md`) beside it is its version in that language; each Q&A file is a source.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationInfo, field_validator

from kb.entries import ENTRY_STYLES, TRANSLATORS, Source
from kb.errors import SourceError, SourceErrors
from kb.tomlfile import DataModel, TomlFile, iso_date, load_toml, nonempty, one_of

from .document import read_text
from .intended import IntendedTable
from .markdown_faq import guess_entries_style, heading_title
from .tables import TABLE_SUFFIXES, is_table

__all__ = ["load_manifest", "load_site", "MANIFEST_NAME", "ENTRY_STYLES", "LANGS", "TRANSLATORS"]

MANIFEST_NAME = "sources.toml"
UPSTREAM_FIELDS = ("repo", "path", "ref")
_UPSTREAM = {"path": "file in the repository", "ref": "branch, tag or commit to read"}
LANGS = ("zh", "en")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def document_lang(text: str) -> str:
    """A document's language: `zh` when CJK characters make up at least 10% of its letters, else `en`.

    A question's is `kb.text.detect_lang`'s: two Chinese characters make it `zh`.
    """
    letters = sum(1 for c in text if c.isalpha())
    cjk = len(_CJK.findall(text))
    return "zh" if letters and cjk / letters >= 0.10 else "en"


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

    _required = field_validator("name", "file", "lang")(nonempty)
    _title = field_validator("title", mode="before")(_per_language)
    _lang = field_validator("lang")(_lang)
    _entries = field_validator("entries")(_entries)
    _http = field_validator("url", "live_url")(_http)
    _ref = field_validator("ref")(_ref)
    _repo = field_validator("repo")(_repo)

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
        if table.translation is not None and is_table(table.file):
            raise doc.error(
                f"{table.file!r} is a Q&A file: its other language goes in its own columns (question_en, answer_en, "
                "or question_zh, answer_zh), not in a [source.translation]",
                (*at, "translation"),
            )
        if table.repo and not (table.path and table.ref):
            missing = "path" if not table.path else "ref"
            raise doc.error(f"repo {table.repo!r} is given without {missing!r}, the {_UPSTREAM[missing]}", at, "repo")
        fields = table.model_dump(exclude={"translation", "title", *UPSTREAM_FIELDS})
        titles = _spread(table.title)
        fields |= {"title": titles.get(table.lang) or next(iter(titles.values())), "titles": titles}
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


def _language_suffix(path: Path) -> str | None:
    """ "en" for `faq.en.md`, None for `faq.md`."""
    suffix = Path(path.stem).suffix.lstrip(".")
    return suffix if suffix in LANGS else None


_ACRONYMS = {"faq": "FAQ", "faqs": "FAQs", "qa": "Q&A", "api": "API", "gpu": "GPU", "llm": "LLM"}


def readable_name(stem: str) -> str:
    """A file name as a title: "team-faq" -> "Team FAQ", "gpu_notes" -> "GPU notes"."""
    words = [w for w in re.split(r"[-_.\s]+", stem) if w]
    words = [_ACRONYMS.get(w.lower(), w) for w in words]
    text = " ".join(words) or stem
    return text[:1].upper() + text[1:]


def _described(path: Path, name: str, lang: str | None = None) -> Source:
    """A source for a Markdown file that no manifest describes: titled by its first heading,
    else its file name; no framework (none is known)."""
    text = read_text(path)
    lang = lang or document_lang(text)
    title = heading_title(text) or readable_name(Path(path.stem).stem if _language_suffix(path) else path.stem)
    return Source(
        name=name,
        file=path.name,
        title=title,
        framework="",
        lang=lang,
        version="",
        url="",
        entries=guess_entries_style(text),
        titles={lang: title},
    )


def _table_source(path: Path, name: str) -> Source:
    """A source for a Q&A file that no manifest describes: titled by its file name; each row's
    language is its own (`lang` names the title's: its name's)."""
    title = readable_name(path.stem)
    lang = document_lang(title)
    return Source(
        name=name, file=path.name, title=title, framework="", lang=lang, version="", url="", titles={lang: title}
    )


def _default_source(path: Path) -> Source:
    if is_table(path):
        # beside a faq.md of the same name, faq.csv is the source faq-csv
        name = f"{path.stem}-{path.suffix[1:].lower()}" if path.with_suffix(".md").is_file() else path.stem
        return _table_source(path, name)
    source = _described(path, path.stem)
    for other in LANGS:
        version = path.with_name(f"{path.stem}.{other}.md")
        if other != source.lang and version.is_file():
            translation = _described(version, path.stem, other)
            titles = source.titles | translation.titles
            return replace(source, titles=titles, translation=replace(translation, titles=titles))
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
        found = [p for p in sources_dir.iterdir() if p.suffix.lower() in (".md", *TABLE_SUFFIXES) and p.is_file()]
        documents = sorted(p for p in found if not _is_version_of_another(p))
        if not documents:
            kinds = ", ".join(f"*{s}" for s in TABLE_SUFFIXES)
            raise SourceError(
                manifest, f"no {MANIFEST_NAME} and no *.md files (nor Q&A files: {kinds}) in {sources_dir}"
            )
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
