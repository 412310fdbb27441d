"""What the knowledge base learns from the people who run it.

- `questions`: a learned question: another wording of an entry's question (an alternate)
  or a question the FAQ does not cover; where it came from; the TOML files it is kept in
  beside the FAQ sources (`<source>.alternates.toml`, `not-covered.toml`).
- `overlay`: the learned questions' vectors, searched beside the entries: a question
  close to an alternate finds its entry, one close to a not-covered question is a signal
  of the calibrated answer model.
"""

from __future__ import annotations

from .questions import (
    ALTERNATES_SUFFIX,
    NOT_COVERED_FILE,
    ORIGINS,
    LearnedQuestion,
    alternates_path,
    load_learned,
    read_learned_file,
    write_learned,
)

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
