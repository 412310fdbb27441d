"""The taught link: a question people asked, tied by a maintainer to the entry that answers it, or marked not covered.

Links are kept in the insights database (`store.links.add` and the methods beside it in
`kb/insights/links.py`, table `links`), with the question's vector and the model that made it, so a server can
search them without embedding anything. `kb links export` writes them into the FAQ
folder's learned-question files (`kb.learning.questions`), where they are reviewed and
versioned with the FAQ; `kb links import` reads those files back into a database
(`kb.insights.link_files`). A search learns the active links as `kb.learning.overlay.TaughtQuestion`s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..learning.questions import LearnedQuestion

__all__ = ["Link", "vector_bytes", "vector_of"]

VECTOR_DTYPE = np.dtype("<f4")  # float32, little-endian, as the database keeps it


@dataclass(frozen=True)
class Link:
    """A question linked to an entry (`entry` its id) or, `entry` None, marked not covered by the FAQ.

    Links compare by their fields but the vector."""

    id: int
    made_at: float  # Unix seconds
    question: str
    lang: str  # zh or en
    entry: str | None
    origin: str  # one of kb.learning.questions.ORIGINS
    url: str
    model: str  # the embedding model that made `vector`
    vector: np.ndarray = field(compare=False, repr=False)  # float32, 1-D
    removed_at: float | None = None  # Unix seconds; None while the link is active

    @property
    def not_covered(self) -> bool:
        return self.entry is None

    @property
    def active(self) -> bool:
        return self.removed_at is None

    def learned(self) -> LearnedQuestion:
        """The link as a learned question, dated the day (UTC) it was made."""
        date = time.strftime("%Y-%m-%d", time.gmtime(self.made_at))
        return LearnedQuestion(self.question, self.lang, self.origin, self.url, date, self.entry)


def vector_bytes(vector: np.ndarray) -> bytes:
    """A 1-D vector as the database keeps it: float32, little-endian."""
    array = np.asarray(vector)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"a link's vector must be 1-D and not empty, got shape {array.shape}")
    return array.astype(VECTOR_DTYPE, copy=False).tobytes()


def vector_of(data: bytes | memoryview) -> np.ndarray:
    """The vector kept as `data` (read-only: it shares the bytes)."""
    return np.frombuffer(data, dtype=VECTOR_DTYPE).astype(np.float32, copy=False)
