"""The taught links as the insights store keeps them (table `links`): made, undone, restored and read back.

A link ties a question a maintainer saw to the entry that answers it, or marks it not covered
(the value is `kb.insights.taught_links.Link`). Links are written one at a time, across processes
and replicas alike (an exclusive transaction), so a question never has two active links.
numpy and the `Link` value are imported when a link is read or written, so `kb --help` stays quick.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Sequence

from ..text import question_key
from .part import StorePart, Transaction
from .records import LANGS, MAX_TEXT

if TYPE_CHECKING:
    import numpy as np

    from .taught_links import Link

__all__ = ["Links"]


class Links(StorePart):
    """The store's part for the taught links (`store.links`)."""

    _LINK_COLUMNS = "id, made_at, question, lang, entry_id, origin, url, model, vector, removed_at"

    def add(
        self,
        question: str,
        lang: str,
        entry: str | None,
        vector: np.ndarray,
        model: str,
        origin: str = "asked",
        url: str = "",
        at: float | None = None,
    ) -> Link:
        """Link `question` to `entry` (None: not covered by the FAQ), with its vector made by `model`.

        An active link of the same question (case and surrounding spaces aside) is removed in the
        same transaction: linking a question again moves it."""
        from ..learning.questions import ORIGINS
        from .taught_links import Link, vector_bytes, vector_of

        text = question.strip()[:MAX_TEXT].rstrip()
        if not text:
            raise ValueError("a link's question is empty")
        if lang not in LANGS:
            raise ValueError(f"unknown lang {lang!r} (expected one of {', '.join(LANGS)})")
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin {origin!r} (expected one of {', '.join(ORIGINS)})")
        when = time.time() if at is None else at
        data = vector_bytes(vector)
        with self._db.transaction(exclusive=True) as db:
            self._unlink(db, text, when)
            link_id = db.execute(
                "INSERT INTO links (made_at, question, lang, entry_id, origin, url, model, vector) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (when, text, lang, entry, origin, url, model, data),
            ).fetchone()[0]
        return Link(int(link_id), when, text, lang, entry, origin, url, model, vector_of(data))

    @staticmethod
    def _unlink(db: Transaction, question: str, at: float, keep: int | None = None) -> None:
        """Remove the active links of `question` (by `question_key`), but `keep`, in the caller's transaction."""
        key = question_key(question)
        # Compared here, as `question_key` does (SQL's lower() may leave non-ASCII letters be), among the
        # few of the same length: lower() keeps a text's length but for one letter, İ, made i and U+0307.
        if "\u0307" in key:
            active = db.execute("SELECT id, question FROM links WHERE removed_at IS NULL").fetchall()
        else:
            active = db.execute(
                "SELECT id, question FROM links WHERE removed_at IS NULL AND length(question) = ?", (len(key),)
            ).fetchall()
        ids = [(at, link_id) for link_id, text in active if link_id != keep and question_key(text) == key]
        if ids:
            db.executemany("UPDATE links SET removed_at = ? WHERE id = ?", ids)

    def remove(self, link_id: int, at: float | None = None) -> Link | None:
        """Undo a link: it stops counting but its row is kept (`restore`); None when there is no such link."""
        when = time.time() if at is None else at
        with self._db.transaction(exclusive=True) as db:
            db.execute("UPDATE links SET removed_at = ? WHERE id = ? AND removed_at IS NULL", (when, link_id))
        return self.get(link_id)

    def restore(self, link_id: int) -> Link | None:
        """Make a removed link active again, removing any other active link of its question; None when there is none."""
        with self._db.transaction(exclusive=True) as db:
            row = db.execute("SELECT question, removed_at FROM links WHERE id = ?", (link_id,)).fetchone()
            if row is None:
                return None
            if row[1] is not None:
                self._unlink(db, row[0], time.time(), keep=link_id)
                db.execute("UPDATE links SET removed_at = NULL WHERE id = ?", (link_id,))
        return self.get(link_id)

    def get(self, link_id: int) -> Link | None:
        """One link, active or removed; None when there is none with this id."""
        found = self._read(f"SELECT {self._LINK_COLUMNS} FROM links WHERE id = ?", (link_id,))
        return found[0] if found else None

    def all(self, include_removed: bool = False) -> list[Link]:
        """The active links (and the removed ones too, with `include_removed`), oldest first."""
        where = "" if include_removed else " WHERE removed_at IS NULL"
        return self._read(f"SELECT {self._LINK_COLUMNS} FROM links{where} ORDER BY id")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Link]:
        from .taught_links import Link, vector_of

        return [
            Link(int(i), made_at, question, lang, entry, origin, url, model, vector_of(data), removed_at)
            for i, made_at, question, lang, entry, origin, url, model, data, removed_at in self._db.rows(sql, params)
        ]

    def linked_to_entries(self) -> set[str]:
        """The questions an active link ties to an entry ("Answered by…", a written answer saved for them), as
        `question_key` gives them: answered now, whatever the search said when they were asked."""
        rows = self._db.rows("SELECT question FROM links WHERE removed_at IS NULL AND entry_id IS NOT NULL")
        return {question_key(text) for (text,) in rows}

    def state(self) -> tuple[int, int, int]:
        """A fingerprint of the active links, cheap to read: (the highest id, how many are active, the sum of
        their ids). It changes whenever a link is added, removed or restored, so a server polls it and reloads
        the links only then."""
        highest, active, total = self._db.rows(
            "SELECT (SELECT coalesce(max(id), 0) FROM links), count(*), coalesce(sum(id), 0) FROM links "
            "WHERE removed_at IS NULL"
        )[0]
        return int(highest), int(active), int(total)
