"""A source reader made only for the tests, as docs/architecture.md's "Adding a source format" makes one: a
reStructuredText-like FAQ (`.rst`), each question a title underlined with `-` or `=`, its answer the text below.
Registered by `registered(monkeypatch)`, never by the ingest itself."""

from __future__ import annotations

import re
from pathlib import Path

from ingest.document import document_lang, read_text, readable_name
from ingest.readers import Contents, read_document
from kb.entries import Entry, Source, entry_id
from kb.errors import SourceError

__all__ = ["READER", "ReStructuredText"]

_UNDERLINE = re.compile(r"[-=~]{3,}")


def parse(path: Path, source: Source) -> list[Entry]:
    """The entries of one document: a title line, an underline at least as long, then the answer."""
    lines = read_text(path).split("\n")
    titles = [i - 1 for i, line in enumerate(lines) if i and _UNDERLINE.fullmatch(line) and lines[i - 1].strip()]
    entries = []
    for n, at in enumerate(titles):
        question = lines[at].strip()
        if len(lines[at + 1]) < len(question):
            raise SourceError(path, f"the underline of {question!r} is shorter than the title", at + 2)
        end = titles[n + 1] if n + 1 < len(titles) else len(lines)
        answer = "\n".join(lines[at + 2 : end]).strip()
        if not answer:
            raise SourceError(path, f"question {question!r} has no answer", at + 1)
        entries.append(
            Entry(
                id=entry_id(source.name, question),
                question=question,
                answer=answer,
                source=source.name,
                source_title=source.title,
                source_version=source.version,
                source_url=source.url,
                framework=source.framework,
                section="",
                url=source.url,
                lang=source.lang,
                line=at + 1,
                file=source.file,
            )
        )
    if not entries:
        raise SourceError(path, "no entries found: expected titles underlined with '-' or '='")
    return entries


class ReStructuredText:
    """FAQ documents in reStructuredText, one language a file."""

    name = "reStructuredText document"
    suffixes = (".rst",)
    translation = ""

    def describe(self, path: Path, name: str) -> Source:
        lang = document_lang(read_text(path))
        title = readable_name(path.stem)
        return Source(
            name=name, file=path.name, title=title, framework="", lang=lang, version="", url="", titles={lang: title}
        )

    def read(self, folder: Path, source: Source) -> Contents:
        return read_document(folder, source, parse)


READER = ReStructuredText()
