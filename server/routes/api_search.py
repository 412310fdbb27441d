"""`GET /api/search`: the best entries for a question, an error message or a flag."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from kb import asking

from ..deps import ChannelParam, base_url, channel_of, get_events, get_kb
from ..schemas import ErrorOut, SearchOut, hit_out, see_also_out

__all__ = ["router"]

router = APIRouter(prefix="/api", tags=["search"])

# The search runs on the event loop except for the embedding, which is awaited: while the
# model runs, the loop reads the next requests, and queries that wait together are embedded
# in one batch.
#
# The route takes the knowledge base, the listeners and the channel itself rather than through
# FastAPI dependencies (KBDep, EventsDep, ChannelDep): FastAPI resolves each dependency
# anew on every request, and this is the route a new question waits on. The `channel`
# parameter is declared as ChannelDep declares it.


@router.get("/search", response_model=SearchOut, responses={422: {"model": ErrorOut}})
async def search(
    request: Request,
    q: Annotated[str, Query(description="the question, error message or flag (Chinese or English)")],
    k: Annotated[int | None, Query(ge=1, le=50, description="how many entries (default KB_TOP_K)")] = None,
    tag: Annotated[list[str], Query(description="only entries with this tag; repeat for all of several")] = [],
    source: Annotated[str | None, Query(description="only entries from this source (e.g. `slime`)")] = None,
    lang: Annotated[
        Literal["zh", "en"] | None, Query(description="only entries with a version in this language")
    ] = None,
    hl: Annotated[
        Literal["zh", "en"] | None,
        Query(
            description="the reader's language: each entry is given in it where it has that version "
            "(default: the question's language); changes what is shown, never which entries or their order",
        ),
    ] = None,
    live: Annotated[
        str | None,
        Query(
            max_length=64,
            description="an id for one search box, sent with the searches made as the reader types: "
            "a run of them that extend one another is recorded once, for the insights page",
        ),
    ] = None,
    judge: Annotated[
        bool,
        Query(
            description="false: the first stage's order alone, without waiting for the second-stage judge "
            "(KB_RERANK_MODEL, KB_RERANK); the search page's results sent as the reader types ask for it",
        ),
    ] = True,
    channel: ChannelParam = None,
) -> SearchOut:
    """Search the FAQ entries."""
    found = await asking.search(
        await get_kb(request),
        await get_events(request),
        q,
        channel=channel_of(request, channel),
        k=k,
        tags=tag,
        source=source or None,
        lang=lang,
        hl=hl,
        judged=judge,
        live=live,
    )
    root = base_url(request)
    return SearchOut(
        query=found.result.query,
        answered=found.result.answered,
        confidence=found.result.confidence,
        state=found.result.state,
        hl=found.hl,
        hits=[hit_out(h, root, found.hl) for h in found.hits],
        shown=found.shown,
        note=found.note or None,
        see_also=see_also_out(found.see_also),
    )
