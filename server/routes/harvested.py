"""`/insights/harvested/…`: the drafts `kb harvest` made from the tracker, accepted in one click, edited or dismissed.

The insights page lists the drafts waiting ("Drafts from the tracker"), the most asked first. **Accept**
makes a draft a written answer (server/written.py): its question and the maintainer's answer, the thread as
the entry's link, served by a new build at once; the other threads that asked the same are linked to it as
alternate questions (origin `tracker`). A draft whose question an entry already answers is accepted as
alternate questions of that entry instead. **Edit** opens the written answer's form with the draft filled in;
saving it accepts the draft. **Dismiss** drops it, and a later harvest does not offer the thread again.

Admin only, as the page's other forms: the sign-in cookie or the bearer token, the page's form token and this
site's `Origin` (server/admin_auth.py). A draft already decided (a second click) goes back to the page unchanged;
of two Accepts at once, or an Accept and a save of its edit form, one accepts it, and the edit form comes back with
its text, saying so (server/routes/written.py). The answer is saved before the draft is decided and built after: a
server stopped in between builds it at start-up (server/accepting.py), so no accepted draft is left unanswered.
"""

from __future__ import annotations

import logging
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from kb.errors import AnswerRefused, shown
from kb.harvest.accepted import answer_of, entry_question, faq_of
from kb.insights import DEFAULT_SINCE
from kb.insights.harvested import KeptDraft
from kb.text import detect_lang

from ..accepting import asked_elsewhere, link_threads
from ..deps import AdminDep, AdminFormDep, InsightsDep, KBDep, ReloaderDep, WrittenDep
from ..link_deps import LinkLimitDep, served_at_once
from .written import MAX_FIELD, faqs_of, show_form

__all__ = ["router"]

router = APIRouter(tags=["insights"])
log = logging.getLogger("kb.server")

PRIVATE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}
Repo = Annotated[str, Form(max_length=200)]
Number = Annotated[int, Form(ge=1, le=2**31)]
Since = Annotated[str, Form(max_length=MAX_FIELD)]


def _back(since: str) -> RedirectResponse:
    return RedirectResponse(f"/insights?{urlencode({'since': since})}#harvested", status_code=303, headers=PRIVATE)


async def _waiting(insights: InsightsDep, repo: str, number: int) -> KeptDraft:
    kept = await insights.run(insights.drafts.get, repo, number)
    if kept is None:
        raise HTTPException(404, f"no draft from the tracker for {shown(repo)}#{number}")
    return kept


@router.post("/insights/harvested/accept", include_in_schema=False)
async def accept(
    _limit: LinkLimitDep,
    _: AdminFormDep,
    kb: KBDep,
    insights: InsightsDep,
    written: WrittenDep,
    reloader: ReloaderDep,
    repo: Repo,
    number: Number,
    since: Since = DEFAULT_SINCE,
) -> RedirectResponse:
    """Accept a draft: a written answer served at once, its other threads' questions linked to it."""
    kept = await _waiting(insights, repo, number)
    if kept.status != "new":
        return _back(since)
    draft = kept.draft
    if draft.entry_id and draft.entry_id in kb.by_id:  # an entry answers it already: its questions become alternates
        # Linked first (linking again replaces a link), then decided: a stop in between leaves the draft waiting.
        for question, url in ((draft.question, draft.url), *((a.question, a.url) for a in draft.alternates)):
            await insights.link_from_tracker(kb, question, draft.entry_id, url)
        await insights.run(insights.drafts.decide, repo, number, "accepted", draft.entry_id)
        await served_at_once(reloader)
        await reloader.rethread()
        return _back(since)
    try:
        answer = answer_of(draft, faqs_of(kb))
    except AnswerRefused as refused:
        raise HTTPException(422, f"the draft cannot be accepted as it is ({refused}); edit it") from None
    # Saved first (its id is the thread's: two clicks save one answer), then decided: of two clicks at once one
    # accepts it, and a stop before the build leaves the answer saved, which start-up builds (server/accepting.py).
    await written.keep(answer)
    if not await insights.run(insights.drafts.decide, repo, number, "accepted", answer.id):
        await _undo(insights, written, repo, number, answer.id)
        return _back(since)
    await written.serve()
    served = reloader.served.kb
    asked = asked_elsewhere(draft, answer)
    if answer.id in served.by_id and asked:
        await link_threads(insights, served, answer.id, asked)
        await served_at_once(reloader)
    await reloader.rethread()  # an accepted draft is an entry now, no longer "see also"
    return _back(since)


async def _undo(insights: InsightsDep, written: WrittenDep, repo: str, number: int, answer_id: str) -> None:
    """The answer saved for a draft decided otherwise meanwhile (dismissed, or accepted as another answer) removed;
    left when the draft became this very answer (another click of the same Accept)."""
    decided = await insights.run(insights.drafts.get, repo, number)
    if decided is None or decided.written_id != answer_id:
        await written.remove(answer_id)


@router.post("/insights/harvested/dismiss", include_in_schema=False)
async def dismiss(
    _limit: LinkLimitDep,
    _: AdminFormDep,
    insights: InsightsDep,
    reloader: ReloaderDep,
    repo: Repo,
    number: Number,
    since: Since = DEFAULT_SINCE,
) -> RedirectResponse:
    """Dismiss a draft: it leaves the page and "see also", and the thread is not offered again."""
    await _waiting(insights, repo, number)
    await insights.run(insights.drafts.decide, repo, number, "dismissed")
    await reloader.rethread()
    return _back(since)


@router.get("/insights/harvested/edit", response_class=HTMLResponse, include_in_schema=False)
async def edit(
    request: Request,
    _: AdminDep,
    kb: KBDep,
    insights: InsightsDep,
    repo: Annotated[str, Query(max_length=200)],
    number: Annotated[int, Query(ge=1, le=2**31)],
    since: Annotated[str, Query(max_length=MAX_FIELD)] = DEFAULT_SINCE,
) -> HTMLResponse:
    """The written answer's form with the draft filled in; saving it accepts the draft."""
    draft = (await _waiting(insights, repo, number)).draft
    lang = detect_lang(draft.question)
    question = entry_question(draft)
    values = {f"question_{lang}": question, f"answer_{lang}": draft.answer}
    values["faq"] = faq_of(draft.repo, faqs_of(kb))
    asked = [a.question for a in draft.alternates]
    if " ".join(draft.question.split()) != question:
        asked.insert(0, draft.question)  # the body's wording, linked to the answer as an alternate
    return show_form(request, kb, values, asked, since, harvested=f"{repo}#{number}")
