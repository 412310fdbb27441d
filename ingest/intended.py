"""Intended duplicates: the `[[intended_duplicates]]` tables of a sources manifest.

Each names two entries meant to be alike (the same answer in two frameworks' FAQs) by
their ids, as the pages and `kb ingest` show them, and says why:

    [[intended_duplicates]]
    entries = ["roll-5af528c9", "chatlearn-8b7488c3"]
    why = "Each framework's FAQ answers it for its own converter"

`kb ingest` then does not report the pair as a near-duplicate (`kb.duplicates`); a mark
naming an entry that no longer exists, or a pair that is no longer alike, is a warning.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict, field_validator

from kb.duplicates import IntendedPair
from kb.tomlfile import DataModel, load_toml, nonempty

__all__ = ["IntendedTable", "load_intended"]


class IntendedTable(DataModel):
    """An `[[intended_duplicates]]` table: two entries meant to be alike, and why."""

    entries: list[str]
    why: str

    _why = field_validator("why")(nonempty)

    @field_validator("entries")
    @classmethod
    def _two(cls, value: list[str]) -> list[str]:
        ids = [v.strip() for v in value]
        if len(ids) != 2 or not all(ids) or ids[0] == ids[1]:
            raise ValueError(f"field 'entries' must give the ids of two different entries, got {value!r}")
        return ids


class _Marks(DataModel):
    """The manifest as far as its marks go (`ingest.manifest` checks the rest)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    intended_duplicates: list[IntendedTable] = []


def load_intended(manifest: Path) -> list[IntendedPair]:
    """The pairs a sources manifest marks as intended duplicates, each with its file and line
    (none when there is no manifest)."""
    if not manifest.is_file():
        return []
    doc = load_toml(manifest, _Marks, "the sources manifest")
    return [
        IntendedPair(mark.entries[0], mark.entries[1], mark.why, f"{manifest}:{doc.line(('intended_duplicates', n))}")
        for n, mark in enumerate(doc.model.intended_duplicates)
    ]
