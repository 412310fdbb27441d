"""`GET /ask/?q=`: the FAQ's answer as plain text, recorded under the channel `ask`."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from kb import asking
from server.deps import EventsDep, KBDep

router = APIRouter(prefix="/ask")


@router.get("/", response_class=PlainTextResponse)
async def ask(q: str, kb: KBDep, events: EventsDep) -> str:
    """The first entry's answer, or a line saying the FAQ has none."""
    found = await asking.search(kb, events, q, channel="ask")
    if not found.result.answered:
        return "The FAQ has no confident answer to this."
    return found.hits[0].entry.answer
