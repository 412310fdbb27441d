"""Hub entries: an answer of links alone, whose vector sits near every question, kept from leading where it shares no word.

An entry such as "Deepspeed & flash-attn", answered by two bare links, gives the embedding
almost nothing to read: its vector is close to the centre of the space, so it is the
nearest entry to any question that is near no entry ("hi", "what's the weather in
Paris"), and the length prior, which favours short entries, adds to that. Such an entry is
evidence for a question only through its words: when it shares none with the question, it
is scored as the least of the candidates, and something else comes first.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .entries import Entry

__all__ = ["links_only", "links_only_entries", "demoted"]

# A Markdown link's target, `[text](url)` (the text stays: it is words), an autolink `<url>`,
# and a bare URL. No run reads past the next opening delimiter, so each is read in linear time.
_TARGET = re.compile(r"\]\(\s*<?[^()<>\s]+>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<(?:https?|ftp)://[^<>\s]+>|<[^<@>\s]+@[^<>\s]+>")
_BARE = re.compile(r"(?:https?|ftp)://\S+|www\.\S+")


def links_only(answer: str) -> bool:
    """Whether a Markdown answer holds links and nothing else to read (no word outside a URL)."""
    text = _BARE.sub(" ", _AUTOLINK.sub(" ", _TARGET.sub("] ", answer)))
    return bool(answer.strip()) and re.search(r"\w", text) is None


def links_only_entries(entries: Sequence[Entry]) -> np.ndarray:
    """For each entry, whether every version of its answer is links alone."""
    return np.array([all(links_only(v.answer) for v in e.versions()) for e in entries], dtype=bool)


def demoted(score: np.ndarray, links: np.ndarray, coverage: np.ndarray) -> np.ndarray:
    """The scores with each links-only entry (`links`) that shares no word with the question
    (`coverage` 0) brought down to the least of them."""
    hubs = links & (coverage <= 0)
    if not hubs.any():
        return score
    return np.where(hubs, score.min(), score)
