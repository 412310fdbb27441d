"""Learned questions and the files they are kept in.

An alternate is another wording of an entry's question: a question asked here and linked
to the entry by a maintainer, one from an issue tracker, or one a maintainer wrote. A
not-covered question is one the FAQ has no answer to. Both are kept beside the FAQ they
belong to, reviewed and versioned like it:

- `<source>.alternates.toml` (beside the source's Markdown), one `[[alternate]]` table each:

      [[alternate]]
      entry = "slime-5d2b7c1e"      # the entry's id
      question = "how to resume from a checkpoint?"
      lang = "en"                    # zh or en
      origin = "tracker"             # asked (here), tracker (an issue tracker), maintainer
      url = "https://github.com/THUDM/slime/issues/123"   # where it was asked, when public
      date = "2025-07-01"            # when it was asked or linked

- `not-covered.toml`, one `[[not_covered]]` table each, with the same fields but `entry`.

An alternate whose entry no longer exists is a warning naming the file and line, never a
failed ingest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from pydantic import field_validator

from ..tomlfile import DataModel, iso_date, load_toml, nonempty, one_of, toml_string

__all__ = [
    "ALTERNATES_SUFFIX",
    "NOT_COVERED_FILE",
    "ORIGINS",
    "LearnedQuestion",
    "alternates_path",
    "load_learned",
    "read_learned_file",
    "write_learned",
]

ALTERNATES_SUFFIX = ".alternates.toml"
NOT_COVERED_FILE = "not-covered.toml"
ORIGINS = ("asked", "tracker", "maintainer")


@dataclass(frozen=True)
class LearnedQuestion:
    """A question the knowledge base has learned: an alternate of `entry`, or (entry None) not covered."""

    question: str
    lang: str
    origin: str = "maintainer"  # one of ORIGINS
    url: str = ""
    date: str = ""
    entry: str | None = None  # the entry's id; None: the FAQ does not cover it

    @property
    def not_covered(self) -> bool:
        return self.entry is None


class _NotCovered(DataModel):
    question: str
    lang: str
    origin: str = "maintainer"
    url: str = ""
    date: str = ""

    _required = field_validator("question")(nonempty)
    _lang = field_validator("lang")(one_of("zh", "en"))
    _origin = field_validator("origin")(one_of(*ORIGINS))
    _date = field_validator("date")(iso_date)


class _Alternate(_NotCovered):
    entry: str

    _entry = field_validator("entry")(nonempty)


class _AlternatesFile(DataModel):
    alternate: list[_Alternate] = []


class _NotCoveredFile(DataModel):
    not_covered: list[_NotCovered] = []


def alternates_path(folder: Path, source_name: str) -> Path:
    """The alternates file of a source in its folder."""
    return Path(folder) / f"{source_name}{ALTERNATES_SUFFIX}"


def load_learned(folder: Path, known: Iterable[str] | None = None) -> tuple[list[LearnedQuestion], list[str]]:
    """Every learned question kept in `folder` (its alternates files, then not-covered.toml),
    and a warning for each alternate whose entry is not among `known` ids (left out).

    A file that is not valid TOML, or a table with a wrong field, is a SourceError naming
    the file and line, as for the other data files."""
    folder = Path(folder)
    known_ids = set(known) if known is not None else None
    found: list[LearnedQuestion] = []
    warnings: list[str] = []
    for path in sorted(folder.glob(f"*{ALTERNATES_SUFFIX}")):
        doc = load_toml(path, _AlternatesFile, "an alternates file")
        for number, table in enumerate(doc.model.alternate):
            if known_ids is not None and table.entry not in known_ids:
                line = doc.line(("alternate", number, "entry"))
                warnings.append(
                    f"{path}:{line}: no entry {table.entry!r}; the alternate {table.question!r} is left out"
                )
                continue
            found.append(LearnedQuestion(**table.model_dump()))
    path = folder / NOT_COVERED_FILE
    if path.is_file():
        doc_nc = load_toml(path, _NotCoveredFile, "the not-covered questions")
        found += [LearnedQuestion(**table.model_dump()) for table in doc_nc.model.not_covered]
    return found, warnings


def read_learned_file(path: Path) -> list[LearnedQuestion]:
    """The learned questions one file holds (an alternates file, or not-covered.toml); none when it does not exist.

    Every table is kept, whether or not its entry is still in the index: a file is rewritten with all it held."""
    path = Path(path)
    if not path.is_file():
        return []
    if path.name == NOT_COVERED_FILE:
        tables = load_toml(path, _NotCoveredFile, "the not-covered questions").model.not_covered
        return [LearnedQuestion(**table.model_dump()) for table in tables]
    alternates = load_toml(path, _AlternatesFile, "an alternates file").model.alternate
    return [LearnedQuestion(**table.model_dump()) for table in alternates]


def _table(header: str, question: LearnedQuestion) -> str:
    rows = [f"[[{header}]]"]
    if question.entry is not None:
        rows.append(f"entry = {toml_string(question.entry)}")
    rows += [f"question = {toml_string(question.question)}", f"lang = {toml_string(question.lang)}"]
    rows.append(f"origin = {toml_string(question.origin)}")
    if question.url:
        rows.append(f"url = {toml_string(question.url)}")
    if question.date:
        rows.append(f"date = {toml_string(question.date)}")
    return "\n".join(rows)


_HEADER_COMMENT = {
    "alternate": "# Other wordings of this source's questions, each linked to the entry it asks for.\n"
    "# Fields: entry, question, lang (zh|en), origin (asked|tracker|maintainer), url, date.\n",
    "not_covered": "# Questions this FAQ does not answer: a question close to one of them is told so.\n"
    "# Fields: question, lang (zh|en), origin (asked|tracker|maintainer), url, date.\n",
}


def write_learned(path: Path, questions: Sequence[LearnedQuestion]) -> None:
    """Write `questions` (all alternates, or all not covered) to `path`, replacing it.

    Written to a temporary file first and renamed, so a reader never sees half a file."""
    path = Path(path)
    header = "not_covered" if path.name == NOT_COVERED_FILE else "alternate"
    if any(q.not_covered != (header == "not_covered") for q in questions):
        raise ValueError(
            f"{path.name} holds only {'not-covered questions' if header == 'not_covered' else 'alternates'}"
        )
    body = "\n\n".join(_table(header, q) for q in questions)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(_HEADER_COMMENT[header] + ("\n" + body + "\n" if body else ""), encoding="utf-8")
    partial.replace(path)
