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

This module runs the command and reports; the checks a reply must pass are in
`ingest/translation_checks.py`, the draft being assembled in `ingest/translation_draft.py`,
the source found and the draft and manifest written in `ingest/translation_files.py`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kb.entries import Source
from kb.errors import KBError, LLMFailed
from kb.llm import LLM
from kb.settings import Settings
from kb.tomlfile import toml_string

from .document import read_text
from .manifest import LANGS, MANIFEST_NAME
from .markdown_faq import parse_source, title_of
from .readers import reader_for
from .readers.markdown import READER as MARKDOWN
from .translation_checks import LANG_NAMES, holds_language, other_lang, problem, unwrapped
from .translation_draft import Draft, messages, pieces_of
from .translation_files import draft_file, find_source, machine_table, write_checked

__all__ = ["TranslateError", "Failure", "TranslationReport", "translate", "find_source", "problem", "toml_string"]

_GIVE_UP_AFTER = 3  # the first requests all failing: the endpoint is down, not the entries

Progress = Callable[[str, int, int], None]


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


def _check_source(source: Source, lang: str) -> None:
    """A TranslateError unless `source` is a Markdown document and `lang` its other language."""
    reader = reader_for(source.file)
    if reader is not MARKDOWN:
        keeps = f"it keeps the other language {reader.translation}" if reader.translation else "not Markdown"
        raise TranslateError(f"{source.file} is a {reader.name}: {keeps}; kb translate drafts Markdown sources")
    if lang not in LANGS:
        raise TranslateError(f"cannot translate into {lang!r}: the languages are {', '.join(LANGS)}")
    if lang == source.lang:
        raise TranslateError(
            f"{source.file} is already in {LANG_NAMES[lang]} (lang = {source.lang!r}); translate it --to {other_lang(lang)}"
        )


def _check_llm(settings: Settings) -> None:
    """A TranslateError naming the LLM settings that are not set."""
    missing = [
        name
        for name, value in (("KB_LLM_BASE_URL", settings.llm_base_url), ("KB_LLM_MODEL", settings.llm_model))
        if not value
    ]
    if missing:
        raise TranslateError(
            f"kb translate needs an LLM: set {' and '.join(missing)} (an OpenAI-compatible endpoint and its model name)"
        )


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
    _check_source(source, lang)
    file = draft_file(folder, source, lang, force)
    _check_llm(settings)
    path = folder / source.file
    text = read_text(path)
    entries = parse_source(path, source)
    pieces = pieces_of(text, entries, source, path)
    progress = progress or (lambda stage, done, total: None)
    failures: list[Failure] = []
    frame = ""
    llm = LLM(settings)
    with tempfile.TemporaryDirectory(prefix="kb-translate-") as scratch:
        draft = Draft(pieces, source, Path(scratch))
        todo = [i for i, p in enumerate(pieces) if p.entry is not None or holds_language(p.core, source.lang)]
        answered = 0
        try:
            for done, index in enumerate(todo):
                piece = pieces[index]
                progress("translate", done, len(todo))
                try:
                    reply = unwrapped(llm.complete(messages(piece, source.lang, lang)), piece.core)
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
    table = machine_table(file, lang, title, source.entries, [f.id for f in failures])
    manifest = folder / MANIFEST_NAME
    new = not manifest.is_file()
    write_checked(folder, file, result, source, sources, table)
    return TranslationReport(source.name, folder / file, manifest, len(entries), tuple(failures), frame, new)
