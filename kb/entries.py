"""Sources and entries: the question-and-answer records the knowledge base is made of."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["Source", "Translation", "Entry", "entry_id", "ENTRY_STYLES", "TRANSLATORS"]

ENTRY_STYLES = ("headings", "list")  # how a FAQ document lays out its entries: `##` headings or a numbered list
# Who wrote a version of a document, as a manifest says: its authors (the default), this
# knowledge base's maintainers (a translation of the authors' text), or a machine (an LLM's
# draft, from `kb translate`, until a maintainer marks it reviewed).
TRANSLATORS = ("authors", "maintainers", "machine")


@dataclass(frozen=True)
class Source:
    """One FAQ document, as described in the sources manifest."""

    name: str  # short id: "slime", "chatlearn-v1"
    file: str  # Markdown or Q&A file (CSV, TSV, XLSX, JSONL), relative to the manifest
    title: str  # in the document's language (`titles` has it in each language the manifest gives)
    framework: str  # "" for a document no manifest describes: no framework is made up for it
    lang: str  # "zh" or "en"
    version: str
    url: str  # pinned link; relative links in the text resolve against it
    live_url: str = ""
    entries: str = "headings"  # one of ENTRY_STYLES
    license: str = ""
    # The same document in the other language, entry for entry (a Source of its own: its
    # file, lang, url and entries style; name, framework and version are this one's).
    translation: "Source | None" = None
    # For a translation that is not the authors' own: who made it ("maintainers" or
    # "machine"), when, whether a maintainer has reviewed a machine's, and the ids of the
    # original's entries it leaves out.
    translated_by: str = ""
    translated_on: str = ""
    reviewed: bool = False
    skipped: tuple[str, ...] = ()
    # The title in each language it is given in ({"zh": "ROLL 问答", "en": "ROLL Q&A"}).
    titles: dict[str, str] = field(default_factory=dict, hash=False)
    sheet: str = ""  # the one sheet of a Q&A workbook to read ("": every sheet)
    # Words one of which a question must name for the source's entries to answer it (kb.scope);
    # () for every question.
    scope: tuple[str, ...] = ()

    def title_in(self, lang: str) -> str:
        """The title in `lang`, else the document's own."""
        return self.titles.get(lang) or self.title


@dataclass(frozen=True)
class Translation:
    """An entry in another language: the text and links of the page in that language."""

    lang: str
    question: str
    answer: str  # Markdown, links absolute against `source_url`
    section: str
    url: str  # deep link into the page in this language
    source_url: str  # the pinned page in this language
    line: int = 0
    file: str = ""  # the Markdown file of this language, as its manifest names it
    translated_by: str = ""  # "" for the authors' own text; "maintainers" or "machine" for a translation
    reviewed: bool = False  # a machine translation a maintainer has checked


@dataclass(frozen=True)
class Entry:
    """One question with its answer, and where it came from."""

    id: str
    question: str
    answer: str  # Markdown, links absolute
    source: str  # Source.name
    source_title: str
    source_version: str
    source_url: str  # the pinned page
    framework: str
    section: str  # heading the entry sits under ("" when none)
    url: str  # deep link: heading anchor, section anchor, or the page
    lang: str
    tags: tuple[str, ...] = field(default=())
    line: int = 0  # 1-based line of the question in the source file
    file: str = ""  # that file, as the manifest names it ("faq.md"): what is known where there is no url
    # The entry in other languages (the authors' English page beside their Chinese one).
    translations: tuple[Translation, ...] = field(default=())
    # Who wrote the text given: "" for the authors, else a translation (see `Translation`).
    translated_by: str = ""
    reviewed: bool = False
    # The source's title in each language it has one ({"zh": "ROLL 问答", "en": "ROLL Q&A"}).
    source_titles: dict[str, str] = field(default_factory=dict, hash=False)
    sheet: str = ""  # the workbook's sheet the entry is a row of, `line` its row ("" outside a workbook)
    scope: tuple[str, ...] = ()  # its source's scope (`Source.scope`, kb.scope): () for every question
    thread: bool = False  # `url` is the tracker thread the answer was accepted from (a harvested draft's)

    def source_title_in(self, lang: str) -> str:
        """The source's title as an interface in `lang` names it: in that language where the
        manifest gives one, else the title it has."""
        return self.source_titles.get(lang) or self.source_title

    def section_in(self, lang: str) -> str:
        """The section the entry sits under as its version in `lang` names it ("" where that
        version has none); for an entry with no version in `lang`, the section it has."""
        if lang == self.lang:
            return self.section
        other = next((t for t in self.translations if t.lang == lang), None)
        return self.section if other is None else other.section

    def source_label(self, lang: str) -> str:
        """What names the entry's source beside it: its framework, else its title in `lang`."""
        return self.framework or self.source_title_in(lang)

    @property
    def place(self) -> str:
        """Where the entry is, for a reader: its deep link, else its file and line ("faq.md:12"),
        or in a workbook its sheet and row ("team.xlsx: sheet 'FAQ', row 2")."""
        return self.url or self.file_place

    @property
    def file_place(self) -> str:
        """Its file and line ("faq.md:12"), or in a workbook its sheet and row ("team.xlsx: sheet 'FAQ', row 2")."""
        if not (self.file and self.line):
            return self.file
        return f"{self.file}: sheet {self.sheet!r}, row {self.line}" if self.sheet else f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        data["scope"] = list(self.scope)
        data["translations"] = [asdict(t) for t in self.translations]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Entry":
        data = dict(data)
        data["tags"] = tuple(data.get("tags", ()))
        data["scope"] = tuple(data.get("scope", ()))
        data["translations"] = tuple(Translation(**t) for t in data.get("translations", ()))
        return cls(**data)

    @property
    def text(self) -> str:
        """Question and answer together, in this entry's language, as embedded and as matched by eval."""
        return f"{self.question}\n\n{self.answer}"

    @property
    def original(self) -> Translation | None:
        """For a translated version, the authors' own version it was translated from; else None."""
        if not self.translated_by:
            return None
        return next((t for t in self.translations if not t.translated_by), None)

    @property
    def languages(self) -> tuple[str, ...]:
        """Every language the entry has, sorted: ("en", "zh") or ("zh",)."""
        return tuple(sorted({self.lang, *(t.lang for t in self.translations)}))

    def versions(self) -> tuple["Entry", ...]:
        """The entry once per language it has, this language first."""
        return (self, *(self.localized(t.lang) for t in self.translations))

    def localized(self, lang: str | None) -> "Entry":
        """The entry as a reader of `lang` sees it: that language's question, answer, section
        and links when it has them, else unchanged (the caller tells the reader so).
        The id, source, tags and scores stay those of the entry."""
        other = next((t for t in self.translations if t.lang == lang), None)
        if other is None or lang == self.lang:
            return self
        this = Translation(
            self.lang,
            self.question,
            self.answer,
            self.section,
            self.url,
            self.source_url,
            self.line,
            self.file,
            self.translated_by,
            self.reviewed,
        )
        return replace(
            self,
            lang=other.lang,
            question=other.question,
            answer=other.answer,
            section=other.section,
            url=other.url,
            source_url=other.source_url,
            line=other.line,
            file=other.file,
            translated_by=other.translated_by,
            reviewed=other.reviewed,
            translations=tuple(t if t is not other else this for t in self.translations),
        )


def entry_id(source_name: str, question: str) -> str:
    """A stable id: the same source and question give the same id after every ingest."""
    digest = hashlib.sha1(f"{source_name}\n{question.strip()}".encode("utf-8")).hexdigest()
    return f"{source_name}-{digest[:8]}"
