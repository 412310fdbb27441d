"""Quoted errors: an error message an entry quotes, specific enough to be that entry's alone.

An entry that quotes an error (`Error: “assert self.lr_decay_steps > 0”`, a traceback's last line
in its answer) answers a question that quotes the same error, whatever else the question holds:
an issue whose body pastes that trace is that entry's, as a question in the entry's own words is
(`kb.verbatim`). Only a specific error counts: one whose message, past the exception's name,
names something of the code (`self.lr_decay_steps`, `batch_size 32 < chunks 64`,
`/get_model_info`), quoted by one entry alone. `CUDA out of memory` or `No module named 'torch'`
is said by too many different problems to say which.

An entry's errors are read from its question and answer once, when the search is built; a
question is compared in time linear in its length: its key (`verbatim_key`'s folding) is searched
for each error's key with `str.find`, no pattern.
"""

from __future__ import annotations

import re
from typing import Sequence

from .entries import Entry
from .verbatim import verbatim_key

__all__ = ["QuotedErrors", "errors_of", "MIN_KEY"]

MIN_KEY = 12  # characters of an error's key (letters and digits), at least: shorter says too little
LINE_CHARS = 300  # characters of an entry's line read for errors
QUESTION_CHARS = 4_000  # characters of a question compared

# An error in an entry's text: from an exception's name to the end of its line, or an assertion.
_ERROR = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception):[^\n]*|\bassert [^\n]+")
# A quotation in an entry's question: what it quotes.
_QUOTED = re.compile(r"“([^”\n]+)”|\"([^\"\n]+)\"|`([^`\n]+)`")
# Something of the code in a message: a name with `_` or `.` inside, a subscript or a call, a path.
_CODE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z]\.[a-z_]|\w\[|\w\(|/\w")
_EXCEPTION_NAME = re.compile(r"\A\s*[\w.]*(?:Error|Exception)\b:?")


def error_key(text: str) -> str:
    """`text` folded as errors are compared, as verbatim questions are (`verbatim_key`: full-width forms made
    half-width, case folded, punctuation, symbols and spaces out), its first QUESTION_CHARS characters."""
    return verbatim_key(text, QUESTION_CHARS)


def _specific(error: str) -> bool:
    """Whether the message past the exception's name names something of the code."""
    return bool(_CODE.search(_EXCEPTION_NAME.sub("", error, count=1)))


def errors_of(entry: Entry) -> set[str]:
    """The specific errors an entry quotes, in every language it has, as written."""
    found = set()
    for version in entry.versions():
        for match in _QUOTED.finditer(version.question[:LINE_CHARS]):
            found.add(next(group for group in match.groups() if group))
        for line in f"{version.question}\n{version.answer}".splitlines():
            found.update(match.group() for match in _ERROR.finditer(line[:LINE_CHARS]))
    errors = {error.strip().rstrip("”\"'`*:：。.").strip() for error in found}
    return {error for error in errors if _specific(error) and len(error_key(error)) >= MIN_KEY}


class QuotedErrors:
    """The specific errors the entries quote, by key, each of one entry alone."""

    def __init__(self, entries: Sequence[Entry]):
        owners: dict[str, set[int]] = {}
        for position, entry in enumerate(entries):
            for error in errors_of(entry):
                owners.setdefault(error_key(error), set()).add(position)
        # Quoted by two entries: no one entry's. Longest first, so a longer quotation is found before its prefix.
        keys = {key: next(iter(found)) for key, found in owners.items() if len(found) == 1}
        self._keys = sorted(keys.items(), key=lambda item: -len(item[0]))

    def owner(self, question: str) -> int | None:
        """The position of the entry whose specific error `question` quotes, else None (two entries' errors: None)."""
        key = error_key(question)
        found = {owner for error, owner in self._keys if error in key}
        return next(iter(found)) if len(found) == 1 else None

    def __len__(self) -> int:
        return len(self._keys)
