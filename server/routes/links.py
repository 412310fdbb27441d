"""`/admin/links`: the admin JSON API that teaches the knowledge base, and what the /insights page's forms share with it.

A link ties a question people ask to the entry that answers it, or marks it not covered by
the FAQ (`kb.insights.teach`). Links are kept in the insights database, so every replica
sharing it serves a new link within `KB_RELOAD_INTERVAL` seconds; the replica that made the
change serves it at once (`Reloader.relearn`).

The JSON API takes the admin token as a bearer token only: the /insights sign-in cookie is
for the page's own forms, which check the page's form token and the `Origin` instead. A
POST's body must be `application/json`. Every call counts against `LINK_LIMIT` per client,
whatever `KB_RATE_LIMIT` says.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Annotated, Any, Iterator

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request

from kb.errors import InsightsOff, InsightsUnreachable, LinkNotFound
from kb.insights.service import Insights

from ..deps import BearerDep, InsightsDep, KBDep, ReloaderDep
from ..limits import is_json
from ..ratelimit import ClientLimit
from ..reload import Reloader
from ..schemas import ErrorOut, LinkIn, LinkOut, LinksOut, link_out

__all__ = [
    "router",
    "LINK_LIMIT",
    "LinkLimitDep",
    "LinksDep",
    "links_on",
    "unavailable",
    "served_at_once",
    "link_not_found",
]

log = logging.getLogger("kb.server")

router = APIRouter(prefix="/admin", tags=["admin"])

LINK_LIMIT = ("link requests", 60, 60.0)  # what, how many, in how many seconds (as `VOTE_LIMIT`)


async def limit_links(request: Request) -> None:
    """At most LINK_LIMIT link requests per client (429 beyond), counted before the token is compared."""
    state = request.app.state
    limit = getattr(state, "link_limit", None)
    if limit is None:
        limit = state.link_limit = ClientLimit(*LINK_LIMIT)
    limit.check(request.scope)


async def require_json(request: Request) -> None:
    """415 for a body that is not JSON (a form or plain text, as another site's page could post)."""
    if not is_json(request.headers):
        raise HTTPException(415, "body: send the link as JSON, with `Content-Type: application/json`")


@contextmanager
def unavailable() -> Iterator[None]:
    """503, saying why, when the insights database is off or its server cannot be reached."""
    try:
        yield
    except (InsightsOff, InsightsUnreachable) as exc:
        raise HTTPException(503, str(exc)) from None


async def links_on(insights: InsightsDep) -> Insights:
    """The insights, where links are kept; 503 with the reason when the server has no database."""
    with unavailable():
        insights.check_links()
    return insights


LinkLimitDep = Annotated[None, Depends(limit_links)]
JsonBodyDep = Annotated[None, Depends(require_json)]
LinksDep = Annotated[Insights, Depends(links_on)]
LinkId = Annotated[int, Path(ge=1, le=2**62, description="the link's id")]


def link_not_found(link_id: int) -> HTTPException:
    return HTTPException(404, str(LinkNotFound(link_id)))


async def served_at_once(reloader: Reloader) -> None:
    """Serve the links as they now are from this replica (the others see them at their next check)."""
    try:
        await reloader.relearn()
    except Exception as exc:  # kept in the database: the watch teaches the build them at its next check
        log.warning("the links changed but could not be read back at once (%s); the next reload check tries again", exc)


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no admin token, or another (the /insights sign-in cookie is not enough)"},
    404: {"model": ErrorOut, "description": "admin off (no KB_ADMIN_TOKEN), or no link with this id"},
    503: {"model": ErrorOut, "description": "the insights database, where links are kept, cannot be used or reached"},
}


@router.post(
    "/links",
    status_code=201,
    response_model=LinkOut,
    responses={
        **_ERRORS,
        415: {"model": ErrorOut, "description": "the body is not JSON"},
        422: {"model": ErrorOut, "description": "no entry with the id given, an empty question, or a bad field"},
    },
)
async def create_link(
    _limit: LinkLimitDep,
    _admin: BearerDep,
    _json: JsonBodyDep,
    body: LinkIn,
    kb: KBDep,
    insights: LinksDep,
    reloader: ReloaderDep,
) -> LinkOut:
    """Link a question to the entry that answers it, or mark it not covered by the FAQ (needs the bearer token).

    The question asked again, or in close wording, then finds that entry (or is told the FAQ
    has no answer), on this server at once and on every replica sharing the insights database
    within `KB_RELOAD_INTERVAL` seconds. An active link of the same question (case and
    surrounding spaces aside) is replaced: linking again moves it.
    """
    with unavailable():
        link = await insights.link(kb, body.question, None if body.not_covered else body.entry_id)
    await served_at_once(reloader)
    return link_out(link)


@router.get("/links", response_model=LinksOut, responses=_ERRORS)
async def list_links(
    _limit: LinkLimitDep,
    _admin: BearerDep,
    insights: LinksDep,
    include_removed: Annotated[
        bool, Query(alias="all", description="the undone and replaced links too (`active: false`)")
    ] = False,
) -> LinksOut:
    """The links, oldest first (needs the bearer token)."""
    with unavailable():
        links = await insights.links(include_removed)
    return LinksOut(links=[link_out(link) for link in links])


@router.get("/links/{link_id}", response_model=LinkOut, responses=_ERRORS)
async def get_link(_limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, link_id: LinkId) -> LinkOut:
    """One link, active or not (needs the bearer token)."""
    with unavailable():
        link = await insights.link_of(link_id)
    if link is None:
        raise link_not_found(link_id)
    return link_out(link)


@router.delete("/links/{link_id}", response_model=LinkOut, responses=_ERRORS)
async def delete_link(
    _limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, reloader: ReloaderDep, link_id: LinkId
) -> LinkOut:
    """Undo a link (needs the bearer token): the question is searched as before it was linked.

    Its row is kept (`active: false`): `POST /admin/links/{id}/restore` brings it back.
    """
    try:
        with unavailable():
            link = await insights.unlink(link_id)
    except LinkNotFound:
        raise link_not_found(link_id) from None
    await served_at_once(reloader)
    return link_out(link)


@router.post("/links/{link_id}/restore", response_model=LinkOut, responses=_ERRORS)
async def restore_link(
    _limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, reloader: ReloaderDep, link_id: LinkId
) -> LinkOut:
    """Bring back an undone link (needs the bearer token); a newer link of the same question is undone."""
    try:
        with unavailable():
            link = await insights.relink(link_id)
    except LinkNotFound:
        raise link_not_found(link_id) from None
    await served_at_once(reloader)
    return link_out(link)
