"""`GET /api/entries/{id}`: one entry with its related entries and the other wordings of its question it has learned."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from kb.answer import RELATED

from ..deps import KBDep, base_url
from ..schemas import EntryOut, ErrorOut, alternate_out, entry_out

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["entries"])


@router.get("/entries/{entry_id}", response_model=EntryOut, responses={404: {"model": ErrorOut}})
async def get_entry(
    request: Request,
    kb: KBDep,
    entry_id: str,
    hl: Annotated[
        Literal["zh", "en"] | None,
        Query(
            description="the reader's language: the entry and its related entries in it where they have it "
            "(default: the entry's own language)",
        ),
    ] = None,
) -> EntryOut:
    """One entry by id, with the entries nearest to it and its alternate questions."""
    entry_id = kb.now_id(entry_id) or entry_id  # an id from before upstream reworded the question
    entry = kb.get(entry_id).localized(hl)
    out = entry_out(entry, kb.related(entry_id, RELATED, hl or entry.lang), base_url(request), hl)
    reader = hl or entry.lang
    alternates = sorted(kb.alternates(entry_id), key=lambda q: q.lang != reader)  # the reader's language first
    out.alternates = [alternate_out(q) for q in alternates]
    return out
