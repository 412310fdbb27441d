"""What a search says of its first hit, decided here and nowhere else: from its confidence, the channel's point and
the calibration's floor.

A state's value is the word every JSON body and the OpenAPI schema give (`"answered"`, `"likely"`, `"not_covered"`)
and the key of its wording in strings.toml, which each channel wraps in its own markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["AnswerState", "Verdict", "decide"]


class AnswerState(StrEnum):
    """What a search says of its first hit, from surest to least."""

    ANSWERED = "answered"  # the confidence reaches the channel's point: the first hit is the answer
    LIKELY = "likely"  # between the floor and the point: shown first, marked "may answer, not certain"
    NOT_COVERED = "not_covered"  # below the floor (where the questions the FAQ does not cover lie), or nothing found

    @property
    def uncertain(self) -> bool:
        """Neither the answer nor not covered: every channel shows the first entry whole under this state's wording
        (its key in strings.toml is the state's value), then the other entries."""
        return self not in (AnswerState.ANSWERED, AnswerState.NOT_COVERED)


@dataclass(frozen=True)
class Verdict:
    """A search's state and what decided it: the first hit's `confidence` against the `point` (the confidence the
    channel's operating point asks for) and the `floor` (the calibration's, below which the FAQ does not cover)."""

    state: AnswerState
    confidence: float
    point: float
    floor: float

    @property
    def answered(self) -> bool:
        return self.state is AnswerState.ANSWERED


def decide(confidence: float, point: float, floor: float, found: bool = True) -> Verdict:
    """The verdict on a first hit of `confidence` at `point` above `floor`; with nothing `found`, not covered."""
    if found and confidence >= min(point, 1.0):  # a certain answer (confidence 1) answers at any point
        state = AnswerState.ANSWERED
    elif found and confidence >= floor:
        state = AnswerState.LIKELY
    else:
        state = AnswerState.NOT_COVERED
    return Verdict(state, confidence, point, floor)
