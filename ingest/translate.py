"""`kb translate`: a machine draft of a FAQ document in its other language, entry by entry.

Each entry (from its question's line to the line before the next entry's) goes to the LLM
in a request of its own, and so does the text before the first entry (the title and
section headings) when it holds any text in the document's language. A reply is kept only
when its code blocks, inline code, links and Markdown structure are the original's and it
is still one entry of the document's style, at the same place; any other entry is left out
of the draft, reported by its line and question, and listed in the manifest's `skipped`,
so that the draft pairs with the original by position.

The draft is written to `X.<lang>.md` beside `X.md`, and the source's `[source.translation]`
table in `sources.toml` says `translated_by = "machine"` and `reviewed = false` (a folder
without a manifest gets one, describing its sources as the default manifest does).
"""

from __future__ import annotations

import datetime
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from kb.entries import Entry, Source
from kb.errors import KBError, LLMFailed, SourceError
from kb.llm import LLM
from kb.settings import Settings

from .document import read_text
from .manifest import LANGS, MANIFEST_NAME, document_lang, load_manifest
from .markdown_faq import parse_source, title_of
from .sources import with_translations
from .tables import is_table

__all__ = ["TranslateError", "Failure", "TranslationReport", "translate", "find_source", "problem", "toml_string"]

_md = MarkdownIt("commonmark")
_LANG_NAMES = {"zh": "Simplified Chinese", "en": "English"}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_BARE_URL = re.compile(r"https?://[!#-&(-;=?-_a-~]+")
_HEADER = re.compile(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_GIVE_UP_AFTER = 3  # the first requests all failing: the endpoint is down, not the entries

Progress = Callable[[str, int, int], None]

SYSTEM_PROMPT = """\
You translate a FAQ about training large language models from {source} into {target}.
The user sends one part of a Markdown document: {part}. Reply with that Markdown translated \
into {target}, and nothing else: no preamble, no notes, no code fence around the reply.
Keep the Markdown structure as it is: the same headings at the same levels, the same list \
markers with the same indentation, the same code fences.
Copy code blocks, inline code (`like this`), URLs and link targets exactly, character for \
character; translate the prose and the text of links. Keep names of products, commands, \
flags, configuration keys and error messages as written."""

_PARTS = {
    "entry": "one question and its answer",
    "frame": "the document's title and the headings before its first question",
}


class TranslateError(KBError):
    """`kb translate` cannot run: no LLM configured, or a language it cannot translate into."""


@dataclass(frozen=True)
class Failure:
    """An entry left out of the draft, and why."""

    file: str
    line: int
    question: str
    reason: str
    id: str = ""

    def __str__(self) -> str:
        question = self.question if len(self.question) <= 60 else self.question[:59] + "…"
        return f'{self.file}:{self.line}: "{question}": {self.reason}'


@dataclass(frozen=True)
class TranslationReport:
    source: str  # the source's name
    draft: Path  # the file written
    manifest: Path
    entries: int  # in the original
    failures: tuple[Failure, ...] = ()
    frame: str = ""  # what became of the text before the first entry: "translated", "kept: <why>" or ""
    new_manifest: bool = False  # the folder had none; one was written for all its sources

    @property
    def translated(self) -> int:
        return self.entries - len(self.failures)


# ---------------------------------------------------------------------------- the checks


def _inline_tokens(tokens: list[Token]) -> list[Token]:
    return [child for token in tokens if token.type == "inline" for child in token.children or []]


def _codes(tokens: list[Token]) -> list[str]:
    return [f"{t.info}\n{t.content}" for t in tokens if t.type in ("fence", "code_block")]


def _spans(tokens: list[Token]) -> Counter[str]:
    return Counter(child.content for child in _inline_tokens(tokens) if child.type == "code_inline")


def _links(tokens: list[Token]) -> Counter[str]:
    found: Counter[str] = Counter()
    for child in _inline_tokens(tokens):
        if child.type == "link_open":
            found[str(child.attrs.get("href", ""))] += 1
        elif child.type == "image":
            found[str(child.attrs.get("src", ""))] += 1
        elif child.type == "text":
            for url in _BARE_URL.findall(child.content):
                url = url.rstrip(".,;:!?'\"*")
                while url.endswith(")") and url.count(")") > url.count("("):
                    url = url[:-1]
                found[url] += 1
    return found


def _structure(tokens: list[Token], lines: list[str]) -> list[str]:
    """The kinds of the blocks in order: headings with their level, list items with their
    marker and indentation, code, quotes, rules."""
    kinds = []
    for t in tokens:
        if t.type == "heading_open":
            kinds.append(t.tag)
        elif t.type == "list_item_open":
            line = lines[t.map[0]] if t.map and t.map[0] < len(lines) else ""
            indent = len(line) - len(line.lstrip(" >"))
            kinds.append(f"item {indent} {t.info}{t.markup}")
        elif t.type in ("fence", "code_block", "blockquote_open", "hr", "html_block"):
            kinds.append(t.type)
    return kinds


def _prose(tokens: list[Token]) -> str:
    return " ".join(child.content for child in _inline_tokens(tokens) if child.type == "text")


def _speaks(text: str, lang: str) -> bool:
    """Whether `text` holds any words of `lang`."""
    return bool((_CJK if lang == "zh" else _LATIN).search(_BARE_URL.sub("", text)))


def problem(original: str, reply: str, source_lang: str, target_lang: str) -> str | None:
    """What the reply changed that a translation must keep, or None when nothing."""
    before, after = _md.parse(original), _md.parse(reply)
    if _codes(before) != _codes(after):
        return "a code block changed"
    lost = _spans(before) - _spans(after)
    if lost or _spans(after) - _spans(before):
        return f"inline code `{next(iter(lost))}` changed" if lost else "inline code was added"
    links = _links(before) - _links(after)
    if links or _links(after) - _links(before):
        return f"the link {next(iter(links))} changed" if links else "a link was added"
    if _structure(before, original.split("\n")) != _structure(after, reply.split("\n")):
        return "the Markdown structure changed (headings, list items or code blocks)"
    prose = _prose(after)
    if _speaks(_prose(before), source_lang) and _speaks(prose, source_lang) and document_lang(prose) != target_lang:
        return f"the reply is not in {_LANG_NAMES[target_lang].split()[-1]}"
    return None


def _unwrapped(reply: str, original: str) -> str:
    """The reply without a code fence the model put around all of it."""
    text = reply.strip("\n").rstrip()
    lines = text.split("\n")
    if (
        len(lines) >= 2
        and re.fullmatch(r"```\s*(markdown|md)?\s*", lines[0])
        and lines[-1].strip() == "```"
        and not original.lstrip().startswith("```")
    ):
        return "\n".join(lines[1:-1]).strip("\n")
    return text


# ---------------------------------------------------------------------------- the draft


@dataclass
class _Piece:
    """The frame (entry None) or one entry, with the lines it has in the draft so far."""

    lines: list[str]  # as written in the original
    entry: Entry | None
    tail: int  # where the headings after the entry's answer start (sections; len(lines): none)
    text: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.text = list(self.lines)

    @property
    def core(self) -> str:
        """The lines to translate, without the blank lines that end them."""
        return "\n".join(self.lines).rstrip("\n").rstrip()

    @property
    def blank_after(self) -> int:
        return len(self.lines) - len(self.core.split("\n")) if self.core else 0


def _tail(lines: list[str], style: str) -> int:
    """In an entry's lines, the first heading past its answer: the start of a new section."""
    headings = [  # (first line, level) of each
        (t.map[0], int(t.tag[1]))
        for t in _md.parse("\n".join(lines))
        if t.type == "heading_open" and t.map and t.level == 0
    ]
    level = headings[0][1] if style == "headings" and headings and headings[0][0] == 0 else 7
    return next((start for start, depth in headings if start > 0 and depth <= level), len(lines))


def _pieces(text: str, entries: list[Entry], source: Source, path: Path) -> list[_Piece]:
    lines = text.split("\n")
    starts = [e.line - 1 for e in entries]
    if any(b <= a for a, b in zip(starts, starts[1:])) or (starts and starts[0] < 0):
        raise SourceError(path, "its entries cannot be told apart by line (has the file lost its line breaks?)")
    pieces = [_Piece(lines[: starts[0]], None, 0)] if starts[0] > 0 else []
    for entry, start, end in zip(entries, starts, [*starts[1:], len(lines)]):
        block = lines[start:end]
        pieces.append(_Piece(block, entry, _tail(block, source.entries)))
    return pieces


class _Draft:
    """The document as it is being translated: each piece either translated, still the
    original, or (left out) only its section headings."""

    def __init__(self, pieces: list[_Piece], source: Source, folder: Path):
        self.pieces, self.source = pieces, source
        self.scratch = folder / "draft.md"
        self.entries = self._parse(self.text())

    def text(self, index: int = -1, lines: Sequence[str] = ()) -> str:
        return "\n".join(line for i, piece in enumerate(self.pieces) for line in (lines if i == index else piece.text))

    def _parse(self, text: str) -> list[Entry]:
        self.scratch.write_text(text, encoding="utf-8")
        return parse_source(self.scratch, self.source)

    def offer(self, index: int, reply: str) -> str | None:
        """Put the reply in place of piece `index` if it fits there; else say why not."""
        piece = self.pieces[index]
        lines = [*reply.split("\n"), *[""] * piece.blank_after]
        start = 1 + sum(len(p.text) for p in self.pieces[:index])
        try:
            after = self._parse(self.text(index, lines))
        except SourceError as exc:
            if piece.entry is None or "no entries found" not in exc.message:
                return f"the draft would not parse: {exc.message}"
            after = []
        inside = [e for e in after if start <= e.line < start + len(lines)]
        wanted = 0 if piece.entry is None else 1
        if len(inside) != wanted:
            if piece.entry is None:
                return f"the reply holds {len(inside)} entries"
            if inside:
                return f"the reply holds {len(inside)} entries, not one"
            return f"the reply is no longer an entry ({_STYLE[self.source.entries]})"
        if piece.entry is not None and inside[0].line != start:
            return "the reply does not begin with the question"
        if len(after) != len(self.entries):
            return "the reply changes the entries around it"
        found = problem(piece.core, reply, self.source.lang, _other(self.source.lang))
        if found:
            return found
        piece.text, self.entries = lines, after
        return None

    def leave_out(self, index: int) -> None:
        """Drop the entry, keeping the section headings after it so later entries keep their sections."""
        piece = self.pieces[index]
        piece.text = piece.lines[piece.tail :]
        try:
            self.entries = self._parse(self.text())
        except SourceError:  # nothing left that parses: the caller says no entry was translated
            self.entries = []


_STYLE = {"headings": "a '## question' heading", "list": "a bold list item '1. **question**'"}


def _other(lang: str) -> str:
    return next(other for other in LANGS if other != lang)


def _messages(piece: _Piece, source_lang: str, target_lang: str) -> list[dict[str, str]]:
    system = SYSTEM_PROMPT.format(
        source=_LANG_NAMES[source_lang],
        target=_LANG_NAMES[target_lang],
        part=_PARTS["frame" if piece.entry is None else "entry"],
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": piece.core}]


# ---------------------------------------------------------------------------- finding the source


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


def _draft_file(source: Source, lang: str) -> str:
    """`faq.en.md` for `faq.md` (and for `faq.zh.md`), in the same folder."""
    path = Path(source.file)
    stem = path.stem
    if Path(stem).suffix.lstrip(".") in LANGS:
        stem = Path(stem).stem
    return path.with_name(f"{stem}.{lang}.md").as_posix()


def _draft_file_checked(folder: Path, source: Source, lang: str, force: bool) -> str:
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
    file = _draft_file(source, lang)
    if (folder / file).exists() and not force:
        raise SourceError(
            folder / file, "exists and is not a translation the manifest names; kb translate --force replaces it"
        )
    return file


# ---------------------------------------------------------------------------- the manifest


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_value(value: str | bool | Sequence[str]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    return "[" + ", ".join(toml_string(v) for v in value) + "]"


def _table(header: str, fields: Sequence[tuple[str, str | bool | Sequence[str]]]) -> list[str]:
    return [header, *(f"{key} = {_toml_value(value)}" for key, value in fields)]


def _source_table(source: Source) -> list[str]:
    fields: list[tuple[str, str | bool | Sequence[str]]] = [
        (key, getattr(source, key)) for key in ("name", "file", "title", "lang")
    ]
    fields += [
        (key, getattr(source, key))
        for key in ("framework", "version", "url", "live_url", "license")
        if getattr(source, key)
    ]
    return _table("[[source]]", [*fields, ("entries", source.entries)])


def _authors_table(translation: Source) -> list[str]:
    fields: list[tuple[str, str | bool | Sequence[str]]] = [
        ("file", translation.file),
        ("lang", translation.lang),
        ("title", translation.title),
        ("entries", translation.entries),
        ("translated_by", "authors"),
    ]
    return _table("[source.translation]", fields)


def _machine_table(file: str, lang: str, title: str, entries: str, skipped: Sequence[str]) -> list[str]:
    fields: list[tuple[str, str | bool | Sequence[str]]] = [("file", file), ("lang", lang)]
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
    return _table("[source.translation]", fields)


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


# ---------------------------------------------------------------------------- the whole


def translate(
    settings: Settings,
    name_or_path: str,
    lang: str,
    folder: Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> TranslationReport:
    """Draft the source's version in `lang` and describe it in the folder's manifest."""
    folder, source, sources = find_source(name_or_path, Path(folder or settings.sources_dir))
    if is_table(source.file):
        raise TranslateError(
            f"{source.file} is a Q&A file: it keeps the other language in its own columns (question_{lang}, "
            f"answer_{lang}); kb translate drafts Markdown sources"
        )
    if lang not in LANGS:
        raise TranslateError(f"cannot translate into {lang!r}: the languages are {', '.join(LANGS)}")
    if lang == source.lang:
        raise TranslateError(
            f"{source.file} is already in {_LANG_NAMES[lang]} (lang = {source.lang!r}); translate it --to {_other(lang)}"
        )
    file = _draft_file_checked(folder, source, lang, force)
    missing = [
        name
        for name, value in (("KB_LLM_BASE_URL", settings.llm_base_url), ("KB_LLM_MODEL", settings.llm_model))
        if not value
    ]
    if missing:
        raise TranslateError(
            f"kb translate needs an LLM: set {' and '.join(missing)} (an OpenAI-compatible endpoint and its model name)"
        )
    path = folder / source.file
    text = read_text(path)
    entries = parse_source(path, source)
    pieces = _pieces(text, entries, source, path)
    progress = progress or (lambda stage, done, total: None)
    failures: list[Failure] = []
    frame = ""
    llm = LLM(settings)
    with tempfile.TemporaryDirectory(prefix="kb-translate-") as scratch:
        draft = _Draft(pieces, source, Path(scratch))
        todo = [
            i for i, p in enumerate(pieces) if p.entry is not None or _speaks(_prose(_md.parse(p.core)), source.lang)
        ]
        answered = 0
        try:
            for done, index in enumerate(todo):
                piece = pieces[index]
                progress("translate", done, len(todo))
                try:
                    reply = _unwrapped(llm.complete(_messages(piece, source.lang, lang)), piece.core)
                    answered += 1
                    reason = draft.offer(index, reply) if reply.strip() else "the reply was empty"
                except LLMFailed as exc:
                    if not answered and done + 1 >= _GIVE_UP_AFTER:
                        raise LLMFailed(
                            exc.url, f"{exc.message} (the first {done + 1} requests all failed; nothing written)"
                        ) from None
                    reason = exc.message
                if piece.entry is None:
                    frame = f"kept as written: {reason}" if reason else "translated"
                elif reason:
                    e = piece.entry
                    failure = Failure(source.file, e.line, e.question, reason, e.id)
                    failures.append(failure)
                    draft.leave_out(index)
            progress("translate", len(todo), len(todo))
        finally:
            llm.close()
        if len(failures) == len(entries):
            raise TranslateError(f"no entry of {source.file} could be translated; nothing written")
        result = draft.text()
    title = title_of(result)
    title = title if title and title != title_of(text) else ""
    table = _machine_table(file, lang, title, source.entries, [f.id for f in failures])
    manifest = folder / MANIFEST_NAME
    new = not manifest.is_file()
    _write_checked(folder, file, result, source, sources, table)
    return TranslationReport(source.name, folder / file, manifest, len(entries), tuple(failures), frame, new)


def _write_checked(
    folder: Path, file: str, draft: str, source: Source, sources: list[Source], table: list[str]
) -> None:
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
