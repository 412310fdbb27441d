"""The gaps on `/insights` ("Questions the FAQ could not answer"): what the FAQ offers each, and the forms that act on
one: "This one answers it" (every wording linked to the entry offered, served at once), Dismiss and Restore.

The forms are the page's (server/routes/insights.py): the sign-in cookie or the bearer token, the page's form token
and this site's `Origin`; a link shares the links' rate limit and database (server/link_deps.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from kb.errors import QueryError, shown
from kb.insights import DEFAULT_SINCE
from kb.knowledge import KnowledgeBase
from kb.verdict import AnswerState

from ..deps import AdminFormDep, InsightsDep, KBDep, ReloaderDep
from ..link_deps import LinkLimitDep, LinksDep, served_at_once

__all__ = ["router", "Offer", "offers"]

router = APIRouter(tags=["insights"])

PRIVATE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}  # as the insights page's own responses
MAX_FIELD = 10_000  # characters of a form's field: a gap's label is a question as asked
Since = Annotated[str, Form(max_length=MAX_FIELD)]  # the page's time window, checked by parse_since


@dataclass(frozen=True)
class Offer:
    """What the FAQ offers a gap's question now: its first entry, how likely that entry answers it, and its state."""

    entry_id: str
    question: str  # the entry's question in the page's language
    confidence: float
    state: AnswerState  # LIKELY (the entry may answer) or NOT_COVERED (nothing near); ANSWERED since


async def offers(kb: KnowledgeBase, gaps: list[Any], lang: str) -> list[Offer | None]:
    """For each gap, the entry the FAQ offers its most asked wording, with its confidence (None: no entry comes near)."""
    offers: list[Offer | None] = []
    for gap in gaps:
        try:
            result = await kb.search(gap.label, k=1)
        except QueryError:  # a question the search refuses now (a limit lowered since)
            offers.append(None)
            continue
        if not result.hits:
            offers.append(None)
            continue
        entry = result.hits[0].entry
        offers.append(Offer(entry.id, entry.localized(lang).question, result.confidence, result.state))
    return offers


@router.post("/insights/gaps/answered", include_in_schema=False)
async def insights_gap_answered(
    request: Request,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    kb: KBDep,
    links: LinksDep,
    reloader: ReloaderDep,
    since: Since = DEFAULT_SINCE,
    label: Annotated[str, Form(max_length=MAX_FIELD)] = "",
    entry_id: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """ "This one answers it": every wording of the gap named `label` linked to the entry offered (as "Answered
    by…" links one question), served at once; the gap leaves the list."""
    entry = entry_id.strip()
    if not entry:
        raise QueryError("entry_id", "choose the entry that answers the question")
    report = await links.report(kb, since)
    gap = next((g for g in report.gaps if g.label == label), None)
    if gap is None:
        raise HTTPException(404, f"no gaps named {shown(label)} in the last {since}")
    for question in gap.questions:
        await links.link(kb, question.text, entry)
    await served_at_once(reloader)
    return _back(since)


@router.post("/insights/gaps/{action}", include_in_schema=False)
async def insights_gap(
    request: Request,
    action: str,
    _: AdminFormDep,
    kb: KBDep,
    insights: InsightsDep,
    since: Since = DEFAULT_SINCE,
    label: Annotated[str, Form(max_length=MAX_FIELD)] = "",
) -> Response:
    """Dismiss a gap (its questions leave the list, now and after a restart) or restore a dismissed one."""
    if action not in ("dismiss", "restore"):
        raise HTTPException(404, f"no gap action {shown(action)}; the actions are dismiss and restore")
    gap = await (insights.dismiss if action == "dismiss" else insights.restore)(kb, since, label)
    if gap is None:
        where = "gaps" if action == "dismiss" else "dismissed gaps"
        raise HTTPException(404, f"no {where} named {shown(label)} in the last {since}")
    return _back(since)


def _back(since: str) -> RedirectResponse:
    """Back to the page's gaps."""
    return RedirectResponse(f"/insights?{urlencode({'since': since})}#gaps", status_code=303, headers=PRIVATE)
