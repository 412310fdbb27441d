"""The gaps a maintainer dismissed, as the insights store keeps them (table `dismissed_gaps`), by question text.

A dismissed question (case and spacing aside) is left out of the report's gaps for good, until restored.
"""

from __future__ import annotations

import time
from typing import Iterable

from ..text import question_key
from .part import StorePart

__all__ = ["DismissedGaps"]


class DismissedGaps(StorePart):
    """The store's part for dismissed gaps (`store.gaps`)."""

    def dismiss(self, texts: Iterable[str], at: float | None = None) -> None:
        """Hide the unanswered questions with these texts (case and spacing aside) from the gaps, for good."""
        when = time.time() if at is None else at
        self._write(
            (
                "INSERT INTO dismissed_gaps VALUES (?, ?) ON CONFLICT (text) DO UPDATE SET dismissed_at = excluded.dismissed_at",
                [(question_key(t), when) for t in texts],
            )
        )

    def restore(self, texts: Iterable[str]) -> None:
        self._write(("DELETE FROM dismissed_gaps WHERE text = ?", [(question_key(t),) for t in texts]))

    def dismissed(self) -> set[str]:
        """The dismissed question texts, lower-cased and trimmed."""
        return {row[0] for row in self._db.rows("SELECT text FROM dismissed_gaps")}
