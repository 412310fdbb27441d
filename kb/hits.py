"""What a search returns: the hits, best first, and the best one's confidence, decided at a point (`kb.verdict`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .entries import Entry
from .provenance import original_url, version_note
from .verdict import AnswerState, Verdict, decide

if TYPE_CHECKING:  # numpy loads with the search, not with `kb --help`
    import numpy as np

__all__ = ["Hit", "NEAREST_MAX", "SHOW_MARGIN", "SHOW_MAX", "SearchResult", "Signals", "hit_fields"]

# Which hits deserve showing (`SearchResult.worth_showing`). When the best entry answers,
# the others within SHOW_MARGIN of its score, in the calibrated score's units (which weigh
# the dense margin about 79 times: 3.0 is about 0.04 of cosine). Chosen after `kb calibrate`
# on tests/data/real_tune.jsonl: it keeps every correct entry of 97% of the answered
# questions whose correct entry is in the top ten (dev: 98%, holdout: 99%) and shows about
# three entries a real question. When none answers, the nearest few.
SHOW_MARGIN = 3.0
SHOW_MAX = 10
NEAREST_MAX = 3


@dataclass(frozen=True)
class Signals:
    """The evidence behind a score, for `kb eval --explain`."""

    cosine: float  # query · entry
    background: float  # what general-domain sentences score for this query
    coverage: float  # share of the query's weight this entry contains
    question: float  # share of the query's weight this entry's question contains


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float
    rank: int
    matched: tuple[str, ...] = ()  # query terms found in the entry, for highlighting
    signals: Signals | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: tuple[Hit, ...]
    lang: str = "en"  # the language the query is written in
    named: str | None = None  # the corpus framework the query names ("ROLL"), if any
    searched: str = ""  # what was matched: the query without tracker noise, a pasted trace reduced
    confidence: float = 0.0  # the chance that the first hit answers, calibrated (kb.confidence)
    judged: bool = False  # ranked again with a judge's scores (its confidence is the judged weights')
    # The confidence the first hit must reach to answer: the threshold of the channel's operating point
    # (`Weights.threshold`; 1.0, only a certain answer, when none is given), and the calibration's floor
    # (`Weights.floor`) it must reach to be shown as one that may answer (`AnswerState.LIKELY`).
    point: float = 1.0
    floor: float = 1.0
    # The model's vector of what was searched (before any query adapter), for what is compared beside the
    # entries without embedding the question again ("see also": kb.see_also); None when not kept.
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)
    # What was searched (`kb.plan.READS`): a question, or a whole issue as a tracker's bot reads it.
    reads: str = "question"

    @property
    def verdict(self) -> Verdict:
        """What this result says of its first hit (`kb.verdict.decide`), at its `point` above its `floor`."""
        return decide(self.confidence, self.point, self.floor, found=bool(self.hits))

    @property
    def state(self) -> AnswerState:
        return self.verdict.state

    @property
    def answered(self) -> bool:
        """The first hit answers: its confidence reaches the point."""
        return self.verdict.answered

    def at(self, point: float) -> "SearchResult":
        """This result decided at `point` (the threshold of an operating point, `Weights.threshold`)."""
        return self if point == self.point else replace(self, point=point)

    @property
    def elsewhere(self) -> bool:
        """The query names a framework whose FAQ has no answer: the first hit (the answer, or the
        nearest entry when the search is sure of none) belongs to another framework's FAQ."""
        if self.named is None:
            return False
        # Sure or not, an answer or the nearest entry from the named FAQ itself is not "elsewhere".
        return not self.hits or self.hits[0].entry.framework != self.named

    def in_language(self, hl: str | None = None) -> "SearchResult":
        """The same hits, each entry in the reader's language `hl` (default: the query's)
        where it has that version. Which entries, their order, scores and verdict stay."""
        hl = hl or self.lang
        shown = [(h, h.entry.localized(hl)) for h in self.hits]
        if all(entry is h.entry for h, entry in shown):  # every entry is in that language already
            return self
        return replace(self, hits=tuple(h if entry is h.entry else replace(h, entry=entry) for h, entry in shown))

    def worth_showing(self) -> tuple[Hit, ...]:
        """The hits a reader should see, best first: when the best answers, it and those
        within SHOW_MARGIN of its score (at most SHOW_MAX); when none answers, the
        NEAREST_MAX nearest, as suggestions that may not answer."""
        if not self.answered:
            return self.hits[:NEAREST_MAX]
        best = self.hits[0].score
        return tuple(h for h in self.hits[:SHOW_MAX] if best - h.score <= SHOW_MARGIN)


def hit_fields(hit: Hit, hl: str | None = None) -> dict[str, Any]:
    """A hit as plain data, the fields every channel gives (the JSON API adds the rendered
    answer and the entry's page on the server). `hl` is the reader's language: an entry
    shown in another, or a translation, says so in `note`."""
    e = hit.entry
    return {
        "id": e.id,
        "question": e.question,
        "answer": e.answer,
        "score": hit.score,
        "source": {
            "name": e.source,
            "title": e.source_title_in(hl or e.lang),
            "titles": e.source_titles or {e.lang: e.source_title},
            "url": e.source_url,
            "framework": e.framework,
            "version": e.source_version,
        },
        "url": e.url,
        "file": e.file,
        "section": e.section,
        "tags": list(e.tags),
        "lang": e.lang,
        "languages": list(e.languages),
        "note": version_note(e, hl),
        "translated_by": e.translated_by or None,
        "reviewed": bool(e.translated_by == "machine" and e.reviewed),
        "original_url": original_url(e) or None,
        "matched": list(hit.matched),
    }
