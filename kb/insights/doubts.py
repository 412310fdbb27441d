"""Answers that may be wrong: the FAQ answered confidently, and something says it should not have.

Three signs, counted per entry given as the answer:

- asked again: the asker's next question, within `ASKED_AGAIN_WITHIN` seconds in the same
  conversation or search box, says the same in other words (similarity `REPHRASED`, as gaps
  measure it), not a follow-up ("what about ...");
- voted not helpful;
- won by a hair: the best entry led the second by less than `LOW_MARGIN`. On the labelled
  query sets in tests/data (197 answered), 31 answers had such a margin and 13 of them were
  wrong (42%), against 16 wrong among the other 166 (10%).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .store import InsightsStore

if TYPE_CHECKING:  # numpy and the embedder load only when questions are compared
    from .groups import GapFinder

__all__ = ["DoubtfulAnswer", "doubtful_answers", "LOW_MARGIN", "ASKED_AGAIN_WITHIN", "REPHRASED"]

LOW_MARGIN = 0.02
ASKED_AGAIN_WITHIN = 120.0  # seconds
REPHRASED = 0.88
EXAMPLES = 3


@dataclass(frozen=True)
class DoubtfulAnswer:
    """An entry given as the answer, and how often each sign said it may have been wrong."""

    entry_id: str
    answered: int  # times given as the answer
    asked_again: int
    unhelpful: int
    low_margin: int
    examples: tuple[str, ...]  # questions it answered that were asked again or won by a hair

    @property
    def signs(self) -> int:
        return self.asked_again + self.unhelpful + self.low_margin


def doubtful_answers(store: InsightsStore, finder: GapFinder, since: float, limit: int = 50) -> list[DoubtfulAnswer]:
    """Entries with at least one sign since `since`, the most signs first."""
    asked_again: dict[str, int] = defaultdict(int)
    low_margin: dict[str, int] = defaultdict(int)
    examples: dict[str, list[str]] = defaultdict(list)
    pairs = store.questions.asked_again(since, ASKED_AGAIN_WITHIN)
    if pairs:
        texts = [text for _, first, _, again, _ in pairs for text in (first, again)]
        langs = [lang for _, _, first_lang, _, again_lang in pairs for lang in (first_lang, again_lang)]
        similar = finder.similarities(texts, langs)
        for i, (entry_id, first, _, again, _) in enumerate(pairs):
            if similar[2 * i, 2 * i + 1] >= REPHRASED:
                asked_again[entry_id] += 1
                examples[entry_id].append(f"{first} → {again}")
    for entry_id, question in store.questions.low_margins(since, LOW_MARGIN):
        low_margin[entry_id] += 1
        examples[entry_id].append(question)
    unhelpful = {v.entry_id: v.unhelpful for v in store.votes.unhelpful(since, limit=10_000, comments=0)}
    answered = {e.entry_id: e.hits for e in store.questions.entry_hits(since, limit=10_000)}
    found = [
        DoubtfulAnswer(
            entry_id,
            answered.get(entry_id, 0),
            asked_again[entry_id],
            unhelpful.get(entry_id, 0),
            low_margin[entry_id],
            tuple(dict.fromkeys(examples[entry_id]))[:EXAMPLES],
        )
        for entry_id in {*asked_again, *low_margin, *unhelpful}
    ]
    return sorted(found, key=lambda d: (-d.signs, -d.answered, d.entry_id))[:limit]
