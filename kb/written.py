"""Answers written on the insights page: the knowledge base's own Q&A file, read, added to, changed and removed.

The file is JSONL in the format `kb ingest` reads for Q&A files (`ingest/table_faq.py`), one
answer a line: its id, source, language, question and answer, the same in the other
language (`question_en`, `answer_en`), tags, framework and the source's title in each
language. So it is a source like any other: every build holds its entries, `kb export`
writes them, and a deployment may keep the file in its own repository.

An answer written for one of the FAQs (its `faq`) is in the source `<faq>-written`, with that
FAQ's framework, so a search filtered to the framework finds it; one written for none is in
the source `written`. Its id is made once, when it is written (`written-` and a hash), and
kept when it is edited, so its permalink and the questions linked to it stay.

`entry_of` gives the entry a build holds for an answer, as `kb ingest` parses its row (a
test compares the two), so the server can build a new index with it without the ingest.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .entries import ENTRY_STYLES, Entry, Translation
from .errors import AnswerRefused, KBError, QueryError, SourceError
from .hyperlinks import absolutize_links, tracker_link, web_link
from .tags import framework_tag, tag_table, topic_tags

__all__ = [
    "AnswerChanged",
    "WrittenAnswer",
    "WrittenFile",
    "written_answer",
    "entry_of",
    "is_written",
    "snippet",
    "LANGS",
    "MAX_QUESTION",
    "MAX_ANSWER",
    "MAX_TAGS",
    "SOURCE",
]

LANGS = ("zh", "en")
MAX_QUESTION = 500  # characters of a question (a heading, not a pasted trace)
MAX_ANSWER = 20_000  # characters of an answer: the longest shipped one is under 5,000
MAX_TAGS = 500  # characters of the tags, together
SOURCE = "written"  # the source of the answers written for no FAQ; `<faq>-written` for one
ID_PREFIX = "written-"
TITLES = {
    "zh": ("维护者撰写的答案", "{title}（维护者撰写）"),
    "en": ("Answers written by the maintainers", "{title} (written by the maintainers)"),
}


class AnswerChanged(KBError):
    """A written answer saved over another version than the one its form was opened on: `current` is the answer as
    saved meanwhile (another tab's edit), None when it was removed meanwhile. Nothing was saved."""

    def __init__(self, answer_id: str, current: WrittenAnswer | None):
        self.answer_id, self.current = answer_id, current
        if current is None:
            super().__init__(f"written answer {answer_id!r}: not saved, it was removed after the form was opened")
        else:
            super().__init__(
                f"written answer {answer_id!r}: not saved, it was saved by someone else (version {current.version}) "
                "after the form was opened"
            )


@dataclass(frozen=True)
class WrittenAnswer:
    """One answer written on the insights page, in one language or both."""

    id: str
    questions: dict[str, str]  # by language, each language it is written in
    answers: dict[str, str]  # Markdown, by language (the same languages)
    tags: tuple[str, ...] = ()
    faq: str = ""  # the FAQ (a source's name) it belongs to; "" for none
    framework: str = ""  # that FAQ's framework
    titles: dict[str, str] = field(default_factory=dict)  # the written source's title by language
    extra: dict[str, Any] = field(default_factory=dict)  # a row's other fields, kept as they were

    @property
    def lang(self) -> str:
        """The row's own language: Chinese when the answer is written in it, else English."""
        return next(lang for lang in LANGS if lang in self.questions)

    @property
    def source(self) -> str:
        return f"{self.faq}-{SOURCE}" if self.faq else SOURCE

    @property
    def version(self) -> str:
        """A fingerprint of the answer as saved (every field of its row): an edit form carries the version it was
        opened on, and a save over another version is refused (`WrittenFile.save`), so two tabs lose no edit."""
        row = json.dumps(self.to_row(), ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(row.encode("utf-8")).hexdigest()[:16]

    def question_in(self, lang: str) -> str:
        """The question in `lang`, else in the language it is written in."""
        return self.questions.get(lang) or self.questions[self.lang]

    def to_row(self) -> dict[str, Any]:
        """The answer as a line of the file: the columns `kb ingest` reads."""
        lang = self.lang
        row: dict[str, Any] = {**self.extra, "id": self.id, "source": self.source, "lang": lang}
        row |= {"question": self.questions[lang], "answer": self.answers[lang]}
        for other in (o for o in LANGS if o != lang and o in self.questions):
            row |= {f"question_{other}": self.questions[other], f"answer_{other}": self.answers[other]}
        if self.tags:
            row["tags"] = ", ".join(self.tags)
        if self.framework:
            row["framework"] = self.framework
        for title_lang, title in self.titles.items():
            row["source_title" if title_lang == lang else f"source_title_{title_lang}"] = title
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "WrittenAnswer":
        """An answer from a line of the file (KeyError, ValueError or TypeError when it is not one)."""
        lang = str(row.get("lang") or "zh")
        if lang not in LANGS:
            raise ValueError(f"unknown lang {lang!r} (expected zh or en)")
        questions = {lang: str(row["question"])}
        answers = {lang: str(row["answer"])}
        for other in (o for o in LANGS if o != lang and row.get(f"question_{o}")):
            questions[other], answers[other] = str(row[f"question_{other}"]), str(row[f"answer_{other}"])
        source = str(row.get("source") or SOURCE)
        titles = {t: str(row[k]) for t, k in ((lang, "source_title"),) if row.get(k)}
        titles |= {o: str(row[f"source_title_{o}"]) for o in LANGS if o != lang and row.get(f"source_title_{o}")}
        known = {"id", "source", "lang", "question", "answer", "tags", "framework", "source_title"}
        known |= {f"{name}_{o}" for o in LANGS for name in ("question", "answer", "source_title")}
        return cls(
            id=str(row["id"]),
            questions=questions,
            answers=answers,
            tags=tuple(_split_tags(str(row.get("tags") or ""))),
            faq=source.removesuffix(f"-{SOURCE}") if source != SOURCE else "",
            framework=str(row.get("framework") or ""),
            titles=titles,
            extra={key: value for key, value in row.items() if key not in known},
        )


def _split_tags(value: str) -> list[str]:
    """Tags as a Q&A file's tags cell gives them: `,` `，` `、` `;` `|` or a line between them."""
    return list(dict.fromkeys(t.strip() for t in re.split(r"[,，、;；|\n]", value) if t.strip()))


def _checked(field_name: str, text: str, limit: int, what: str) -> str:
    if len(text) > limit:
        message = f"the {what} is {len(text):,} characters long; at most {limit:,}"
        raise AnswerRefused(field_name, "too_long", message, n=f"{len(text):,}", limit=f"{limit:,}")
    return text


def written_answer(
    questions: Mapping[str, str],
    answers: Mapping[str, str],
    tags: str = "",
    faq: str = "",
    faqs: Mapping[str, tuple[str, dict[str, str]]] | None = None,
    answer_id: str = "",
) -> WrittenAnswer:
    """An answer as a maintainer wrote it, checked: in each language a question and its answer, or
    neither, and at least one language; nothing over-long; `faq` one of `faqs` (name -> its framework
    and titles). An AnswerRefused names the form's field at fault (`question_zh`, `answer_en`, `tags`, `faq`)."""
    faqs = faqs or {}
    kept_q: dict[str, str] = {}
    kept_a: dict[str, str] = {}
    for lang in LANGS:
        question = " ".join(_checked(f"question_{lang}", questions.get(lang, ""), MAX_QUESTION, "question").split())
        answer = _checked(f"answer_{lang}", answers.get(lang, ""), MAX_ANSWER, "answer").strip()
        if question and not answer:
            raise AnswerRefused(f"answer_{lang}", "no_answer", "the answer is empty; write it, or clear its question")
        if answer and not question:
            message = "the question is empty; write the question this answers"
            raise AnswerRefused(f"question_{lang}", "no_question", message)
        if question:
            kept_q[lang], kept_a[lang] = question, answer.replace("\r\n", "\n")
    if not kept_q:
        message = "the question is empty; write a question and its answer, in Chinese or English"
        raise AnswerRefused("question_zh", "nothing", message)
    tag_list = _split_tags(_checked("tags", tags, MAX_TAGS, "list of tags"))
    faq = faq.strip()
    if faq and faq not in faqs:
        message = f"no FAQ named {faq!r}; choose one of {', '.join(faqs) or 'none'}, or none"
        raise AnswerRefused("faq", "faq", message, faq=faq)
    framework, faq_titles = faqs.get(faq, ("", {}))
    if faq:
        titles = {lang: TITLES[lang][1].format(title=faq_titles.get(lang) or faq) for lang in LANGS}
    else:
        titles = {lang: TITLES[lang][0] for lang in LANGS}
    if not answer_id:
        lang = next(iter(kept_q))
        digest = hashlib.sha1(f"{kept_q[lang]}\n{time.time_ns()}".encode()).hexdigest()
        answer_id = f"{ID_PREFIX}{digest[:8]}"
    return WrittenAnswer(answer_id, kept_q, kept_a, tuple(tag_list), faq, framework, titles)


def entry_of(answer: WrittenAnswer, line: int, file: str) -> Entry:
    """The entry a build holds for `answer`, on line `line` of the file named `file`: as
    `kb ingest` parses its row (`ingest/table_faq.py`)."""
    lang = answer.lang
    title = answer.titles.get(lang) or next(iter(answer.titles.values()), "") or answer.source
    url = str(answer.extra.get("url") or "")  # the thread an answer harvested from the tracker came from
    url = tracker_link(url) if answer.extra.get("harvested") else web_link(url)  # linked only where it is one
    translations = tuple(
        Translation(
            other, answer.questions[other], absolutize_links(answer.answers[other], ""), "", url, "", line, file
        )
        for other in LANGS
        if other != lang and other in answer.questions
    )
    entry = Entry(
        id=answer.id, question=answer.questions[lang], answer=absolutize_links(answer.answers[lang], ""),
        source=answer.source, source_title=title, source_version="", source_url="", framework=answer.framework,
        section="", url=url, lang=lang, line=line, file=file, translations=translations,
        source_titles=dict(answer.titles) or {lang: title}, thread=bool(url) and bool(answer.extra.get("harvested")),
    )  # fmt: skip
    topics = topic_tags(entry)
    if answer.tags and topics == (tag_table().fallback,):
        topics = ()
    tags = dict.fromkeys((framework_tag(answer.framework, answer.source), *answer.tags, *topics))
    return replace(entry, tags=tuple(tags))


def is_written(entry: Entry, file: str) -> bool:
    """Whether a build's entry is one of the written answers (of the file named `file`)."""
    return entry.file == file and entry.id.startswith(ID_PREFIX)


def snippet(answer: WrittenAnswer, lang: str, layout: str = "headings") -> str:
    """The answer in `lang` as an entry of an upstream FAQ document, to propose it there:
    `headings`, a `## question` heading and the answer under it; `list`, a `1. **question**` item."""
    if layout not in ENTRY_STYLES:
        raise QueryError("layout", f"unknown layout {layout!r}; use one of {', '.join(ENTRY_STYLES)}")
    if lang not in answer.questions:
        written_in = " and ".join(answer.questions)
        raise QueryError("lang", f"the answer is not written in {lang!r}; it is in {written_in}")
    question, text = answer.questions[lang], _headings_in_bold(answer.answers[lang])
    if layout == "headings":
        return f"## {question}\n\n{text}\n"
    indented = "\n".join(f"   {line}" if line.strip() else "" for line in text.split("\n"))
    return f"1. **{question}**\n\n{indented}\n"


def _headings_in_bold(text: str) -> str:
    """An answer with its headings (outside code) made bold lines, so that in an upstream FAQ file a `## Step two`
    inside it stays part of its entry rather than starting another."""
    lines, fence = [], ""
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if fence:
            fence = "" if stripped.startswith(fence) else fence
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif len(line) - len(stripped) <= 3 and stripped.startswith("#"):
            hashes = len(stripped) - len(stripped.lstrip("#"))
            rest = stripped[hashes:]
            title = rest.strip(" \t#")
            if hashes <= 6 and (not rest or rest[0] in " \t") and title:
                line = f"**{title}**"
        lines.append(line)
    return "\n".join(lines)


class WrittenFile:
    """The file the written answers are kept in; each change rewrites it whole, atomically, one
    change at a time (across the processes of a server's workers too: a lock file beside it)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    @contextmanager
    def _changing(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_name(f".{self.path.name}.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield  # closing the file releases the lock

    def read(self) -> list[WrittenAnswer]:
        """The answers in the file, in order ([] when there is no file yet); a SourceError names a line it cannot read."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SourceError(self.path, f"cannot be read ({exc.strerror or exc})") from None
        found = []
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise TypeError("not a JSON object")
                found.append(WrittenAnswer.from_row(row))
            except (ValueError, KeyError, TypeError) as exc:
                raise SourceError(self.path, f"not a written answer ({exc})", number) from None
        return found

    def entries(self) -> list[Entry]:
        """The entries the file's answers are, each on its line (as `kb ingest` numbers a JSONL row)."""
        answers = self.read()
        lines = self._lines()
        return [entry_of(answer, lines[answer.id], self.path.name) for answer in answers]

    def _lines(self) -> dict[str, int]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        lines = {}
        for number, line in enumerate(text.split("\n"), 1):
            if line.strip():
                lines[str(json.loads(line).get("id"))] = number
        return lines

    def get(self, answer_id: str) -> WrittenAnswer | None:
        return next((a for a in self.read() if a.id == answer_id), None)

    def save(self, answer: WrittenAnswer, version: str = "") -> WrittenAnswer:
        """Add `answer`, or put it in place of the answer with its id. With `version` (the one its edit form was
        opened on) the answer must still be saved at that version: AnswerChanged, with the answer as it is now (None
        when removed), and nothing saved, when another edit or a removal came in between."""
        with self._changing():
            answers = self.read()
            at = next((i for i, a in enumerate(answers) if a.id == answer.id), None)
            if version and (at is None or answers[at].version != version):
                raise AnswerChanged(answer.id, None if at is None else answers[at])
            if at is None:
                answers.append(answer)
            else:
                answers[at] = replace(answer, extra=answers[at].extra)
            self._write(answers)
        return answer

    def remove(self, answer_id: str) -> WrittenAnswer | None:
        """Remove the answer with `answer_id`; returns it (None when there is none)."""
        with self._changing():
            answers = self.read()
            gone = next((a for a in answers if a.id == answer_id), None)
            if gone is not None:
                self._write([a for a in answers if a.id != answer_id])
        return gone

    def _write(self, answers: Iterable[WrittenAnswer]) -> None:
        """The file with `answers`, each source's title and framework as its first answer gives them
        (a Q&A file's source has one)."""
        first: dict[str, WrittenAnswer] = {}
        lines = []
        for answer in answers:
            like = first.setdefault(answer.source, answer)
            answer = replace(answer, titles=like.titles, framework=like.framework)
            lines.append(json.dumps(answer.to_row(), ensure_ascii=False))
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, self.path)
