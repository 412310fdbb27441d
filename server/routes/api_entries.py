"""`GET /api/entries/{id}`: one entry with its related entries."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ..deps import KBDep, base_url
from ..schemas import EntryOut, ErrorOut, entry_out

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["entries"])

RELATED = 3


@router.get("/entries/{entry_id}", response_model=EntryOut, responses={404: {"model": ErrorOut}})
async def get_entry(request: Request, kb: KBDep, entry_id: str) -> EntryOut:
    """One entry by id, with the entries nearest to it."""
    entry = kb.get(entry_id)
    return entry_out(entry, kb.related(entry_id, RELATED), base_url(request))
