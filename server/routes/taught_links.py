"""`/admin/links`: the admin JSON API that teaches the knowledge base with links.

A link ties a question people ask to the entry that answers it, or marks it not covered by
the FAQ (`kb.insights.teach`). Links are kept in the insights database, so every replica
sharing it serves a new link within `KB_RELOAD_INTERVAL` seconds; the replica that made the
change serves it at once (`Reloader.relearn`).

The JSON API takes the admin token as a bearer token only: the /insights sign-in cookie is
for the page's own forms, which check the page's form token and the `Origin` instead. A
POST's body must be `application/json`. Every call counts against `LINK_LIMIT` per client,
whatever `KB_RATE_LIMIT` says (server/link_deps.py, shared with the /insights page's forms).
The insights database off or out of reach (503) and a link that is not there (404) are
answered by server/error_handler.py.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request

from kb.errors import LinkNotFound

from ..deps import BearerDep, KBDep, ReloaderDep
from ..link_deps import LinkLimitDep, LinksDep, served_at_once
from ..link_schemas import LinkIn, LinkOut, LinksOut, link_out
from ..request_checks import is_json
from ..schemas import ErrorOut

__all__ = ["router"]

router = APIRouter(prefix="/admin", tags=["admin"])


async def require_json(request: Request) -> None:
    """415 for a body that is not JSON (a form or plain text, as another site's page could post)."""
    if not is_json(request.headers):
        raise HTTPException(415, "body: send the link as JSON, with `Content-Type: application/json`")


JsonBodyDep = Annotated[None, Depends(require_json)]
LinkId = Annotated[int, Path(ge=1, le=2**62, description="the link's id")]


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
    links = await insights.run(insights.links.all, include_removed)
    return LinksOut(links=[link_out(link) for link in links])


@router.get("/links/{link_id}", response_model=LinkOut, responses=_ERRORS)
async def get_link(_limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, link_id: LinkId) -> LinkOut:
    """One link, active or not (needs the bearer token)."""
    link = await insights.run(insights.links.get, link_id)
    if link is None:
        raise LinkNotFound(link_id)
    return link_out(link)


@router.delete("/links/{link_id}", response_model=LinkOut, responses=_ERRORS)
async def delete_link(
    _limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, reloader: ReloaderDep, link_id: LinkId
) -> LinkOut:
    """Undo a link (needs the bearer token): the question is searched as before it was linked.

    Its row is kept (`active: false`): `POST /admin/links/{id}/restore` brings it back.
    """
    link = await insights.unlink(link_id)
    await served_at_once(reloader)
    return link_out(link)


@router.post("/links/{link_id}/restore", response_model=LinkOut, responses=_ERRORS)
async def restore_link(
    _limit: LinkLimitDep, _admin: BearerDep, insights: LinksDep, reloader: ReloaderDep, link_id: LinkId
) -> LinkOut:
    """Bring back an undone link (needs the bearer token); a newer link of the same question is undone."""
    link = await insights.relink(link_id)
    await served_at_once(reloader)
    return link_out(link)
