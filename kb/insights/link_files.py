"""The links and the FAQ folder's learned-question files: the links written into them (`kb links export`), and
read back from them into a database (`kb links import`).

Export adds each active link to its file as a learned question (an alternate to its
source's `<source>.alternates.toml`, a not-covered question to `not-covered.toml`, both
`kb.learning.questions`), keeping all a file holds and adding nothing it has already. Import
adds the learned questions a database lacks, each embedded as a search of it embeds it.
Either way two learned questions are the same when their questions are (case and
surrounding spaces aside) and their entries are (`learned_key`).
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

from ..learning.questions import NOT_COVERED_FILE, LearnedQuestion, alternates_path, read_learned_file, write_learned
from ..text import question_key

if TYPE_CHECKING:
    from ..entries import Entry
    from .book import InsightsBook
    from .taught_links import Link

__all__ = ["ExportPlan", "FileExported", "learned_key", "plan_export", "write_export", "import_learned"]


def learned_key(question: LearnedQuestion) -> tuple[str, str | None]:
    """What tells learned questions apart: the question (case and surrounding spaces aside) and its entry."""
    return question_key(question.question), question.entry


@dataclass(frozen=True)
class ExportPlan:
    """What an export writes: each file's learned questions, in the links' order, and the links it leaves out."""

    files: dict[Path, list[LearnedQuestion]]
    left_out: list[Link]  # each linked to an entry the index lacks


@dataclass(frozen=True)
class FileExported:
    """One file an export wrote to: the learned questions added, and those it held already."""

    path: Path
    added: int
    there: int


def plan_export(links: Sequence[Link], entries: Mapping[str, Entry], folder: Path) -> ExportPlan:
    """Where each of `links` goes in `folder`: a not-covered question to not-covered.toml, an alternate to the
    alternates file of its entry's source (`entries`, by id); a link to an entry not among them is left out."""
    files: dict[Path, list[LearnedQuestion]] = {}
    left_out: list[Link] = []
    for link in links:
        if link.entry is None:
            path = folder / NOT_COVERED_FILE
        elif link.entry in entries:
            path = alternates_path(folder, entries[link.entry].source)
        else:
            left_out.append(link)
            continue
        files.setdefault(path, []).append(link.learned())
    return ExportPlan(files, left_out)


def write_export(plan: ExportPlan) -> Iterator[FileExported]:
    """Write the plan, file by file in the order of their paths: each file keeps all it held (`read_learned_file`)
    and gets its planned questions it does not hold yet. Yields each file once it is written."""
    for path, questions in sorted(plan.files.items()):
        held = read_learned_file(path)
        seen = {learned_key(q) for q in held}
        added = []
        for question in questions:
            if learned_key(question) not in seen:
                seen.add(learned_key(question))
                added.append(question)
        if added:
            write_learned(path, held + added)
        yield FileExported(path, len(added), len(questions) - len(added))


def _made_at(date: str) -> float | None:
    """A learned question's date (2026-01-31) as Unix seconds at midnight UTC; None when it has none."""
    return float(calendar.timegm(time.strptime(date, "%Y-%m-%d"))) if date else None


def import_learned(book: InsightsBook, learned: Sequence[LearnedQuestion], embed_model: str) -> list[LearnedQuestion]:
    """Add to `book` as links the `learned` questions it lacks: those with no link, active or removed, of the same
    question and entry (so a link undone in the database is not brought back, and linking again is never undone).
    Each is embedded by `embed_model` as a search of it embeds it (the embedder is opened only when one is
    missing). The questions added, in order."""
    from ..embedding import open_embedder
    from ..search import searched_text

    have = {(question_key(link.question), link.entry) for link in book.store.links.all(include_removed=True)}
    missing = []
    for question in learned:
        if learned_key(question) not in have:
            have.add(learned_key(question))
            missing.append(question)
    if missing:
        embedder = open_embedder(embed_model)
        # What a search of each question embeds; embedded together, in batches.
        vectors = [embedder.query_vector(searched_text(q.question) or q.question) for q in missing]
        for question, vector in zip(missing, vectors):
            book.store.links.add(
                question.question,
                question.lang,
                question.entry,
                vector.result(),
                embedder.model,
                origin=question.origin,
                url=question.url,
                at=_made_at(question.date),
            )
    return missing
