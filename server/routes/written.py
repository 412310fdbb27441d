"""`/insights/write` and `/insights/written/…`: answers a maintainer writes where the gaps are shown.

Beside "Answered by…" and "Not covered by the FAQ", each question the insights page lists (and
each group of them) has "Write the answer": a form for the question and its answer in Chinese,
English or both, tags and the FAQ it belongs to. Saving keeps it in the written answers' Q&A file
(`KB_WRITTEN_ANSWERS`), builds and swaps in an index with it (server/written.py), and links the
questions it answers to it, as "Answered by…" does. A written answer is edited or removed from
the page's "Written answers", and downloads as an entry of an upstream FAQ file
(`/insights/written/<id>.md?lang=zh`), to propose it there.

Admin only: the pages need the sign-in cookie or the bearer token, and each form that changes
something the page's form token and this site's `Origin` too (server/admin_auth.py). An answer
that cannot be saved (an empty question or answer, a text over its limit) is shown again in its
form, with a message naming the field, and nothing is saved.

Two tabs editing one answer lose no edit: the edit form carries the version it was opened on, and a save over
another version (another tab's edit, or a removal) is refused with 409: the form comes back with the text being
saved in it, the version saved meanwhile shown above it, and that version as the one a save now goes over. A
tracker's draft decided meanwhile (accepted in another tab, or dismissed) is not accepted a second time: the
form comes back with its text, saying so, and a save then writes a new answer.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from kb.errors import AnswerRefused, InsightsOff, InsightsUnreachable, shown
from kb.harvest.drafts import Draft
from kb.insights import DEFAULT_SINCE
from kb.insights.harvested import KeptDraft
from kb.knowledge import KnowledgeBase
from kb.text import detect_lang
from kb.written import (
    LANGS,
    MAX_ANSWER,
    MAX_QUESTION,
    MAX_TAGS,
    SOURCE,
    AnswerChanged,
    WrittenAnswer,
    snippet,
    written_answer,
)

from ..deps import AdminDep, AdminFormDep, InsightsDep, KBDep, ReloaderDep, WrittenDep
from ..forms import form_token, with_form_token
from ..link_deps import LinkLimitDep, served_at_once
from ..rendering.strings import Translator
from ..rendering.templates import page, request_lang

__all__ = ["router", "ASKED_MAX", "MAX_FIELD", "faqs_of", "show_form"]

router = APIRouter(tags=["insights"])
log = logging.getLogger("kb.server")

PRIVATE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}
ASKED_MAX = 20  # questions one answer is written for at once (a group's wordings)
MAX_FIELD = 10_000  # characters of a form field that is not a text of the answer (a question asked, a window)
# What the form may carry: well over what kb.written allows, so that a text too long is shown again in its
# form with the field named (kb.written's limits), and the request's size stays bounded.
Text = Annotated[str, Form(max_length=10 * MAX_ANSWER)]
Line = Annotated[str, Form(max_length=MAX_FIELD)]
Tags = Annotated[str, Form(max_length=MAX_FIELD)]
AskedWordings = Annotated[list[str], Form(max_length=ASKED_MAX)]
Since = Annotated[str, Form(max_length=MAX_FIELD)]


def _posted(
    question_zh: Line = "",
    answer_zh: Text = "",
    question_en: Line = "",
    answer_en: Text = "",
    tags: Tags = "",
    faq: Annotated[str, Form(max_length=200)] = "",
) -> dict[str, str]:
    """A written answer's fields as its form (a new answer's or an edit's) posted them."""
    return {
        "question_zh": question_zh,
        "answer_zh": answer_zh,
        "question_en": question_en,
        "answer_en": answer_en,
        "tags": tags,
        "faq": faq,
    }


Posted = Annotated[dict[str, str], Depends(_posted)]


def faqs_of(kb: KnowledgeBase) -> dict[str, tuple[str, dict[str, str]]]:
    """The FAQs a written answer may belong to: the build's sources but the written ones, with their frameworks and titles."""
    written = {e.source for e in kb.entries if e.source == SOURCE or e.source.endswith(f"-{SOURCE}")}
    return {s.name: (s.framework, dict(s.titles)) for s in kb.sources if s.name not in written}


def _form(
    request: Request,
    kb: KnowledgeBase,
    answer: WrittenAnswer | None,
    values: dict[str, str],
    asked: list[str],
    since: str,
    refused: AnswerRefused | None = None,
    harvested: str = "",
    changed: str = "",
    theirs: WrittenAnswer | None = None,
    decided: KeptDraft | None = None,
) -> HTMLResponse:
    """The form; `refused` (422) names the field at fault; `changed` (409) says the answer (`theirs`, the version
    saved meanwhile; None: removed) or the tracker's draft (`decided`) changed after the form was opened."""
    lang = request_lang(request)
    t = Translator(lang)
    message = ""
    if refused is not None:
        reason = t(f"written_error_{refused.reason}", **{k: str(v) for k, v in refused.values.items()})
        field = t(f"written_{refused.field}") if refused.field != "faq" else t("written_faq")
        message = t("written_refused", field=field, reason=reason)
    elif changed == "harvested" and decided is not None:
        message = t("harvested_changed", key=decided.key, how=t(f"harvested_changed_{decided.status}"))
    elif changed:
        message = t("written_changed" if theirs is not None else "written_changed_removed")
    faqs = faqs_of(kb)
    context = {
        "answer": answer,
        "values": values,
        "asked": asked,
        "since": since,
        "faqs": [(name, titles.get(lang) or name) for name, (_, titles) in faqs.items()],
        "refused": message if refused is not None else "",
        "refused_field": refused.field if refused is not None else "",
        "form_token": form_token(request),
        "limits": {"question": MAX_QUESTION, "answer": MAX_ANSWER, "tags": MAX_TAGS},
        "harvested": harvested,  # the tracker's draft (`owner/name#number`) that saving this accepts
        "version": answer.version if answer is not None else "",  # what a save of the edit goes over
        "changed": changed,
        "changed_message": message if changed else "",
        "theirs": theirs,
        "decided": decided,
    }
    status = 422 if refused is not None else 409 if changed else 200
    response = page(request, "insights_write.html", context, status_code=status)
    response.headers.update(PRIVATE)
    return with_form_token(request, response)


def show_form(
    request: Request, kb: KnowledgeBase, values: dict[str, str], asked: list[str], since: str, harvested: str = ""
) -> HTMLResponse:
    """The form for a new answer with `values` filled in, for the questions `asked` (and the tracker's draft
    `harvested`, which saving it accepts)."""
    return _form(request, kb, None, values, asked[:ASKED_MAX], since, harvested=harvested)


def _values(answer: WrittenAnswer) -> dict[str, str]:
    values = {f"question_{lang}": answer.questions.get(lang, "") for lang in LANGS}
    values |= {f"answer_{lang}": answer.answers.get(lang, "") for lang in LANGS}
    return values | {"tags": ", ".join(answer.tags), "faq": answer.faq}


@router.get("/insights/write", response_class=HTMLResponse, include_in_schema=False)
async def write_form(
    request: Request,
    _: AdminDep,
    kb: KBDep,
    asked: Annotated[list[str], Query(max_length=ASKED_MAX)] = [],  # noqa: B006 (FastAPI copies it)
    since: Annotated[str, Query(max_length=MAX_FIELD)] = DEFAULT_SINCE,
) -> HTMLResponse:
    """The form to write the answer to the questions `asked` (a question the page lists, or a group's)."""
    asked = [q for q in (a.strip() for a in asked) if q][:ASKED_MAX]
    values = {f"question_{detect_lang(asked[0])}": " ".join(asked[0].split())} if asked else {}
    return _form(request, kb, None, values, asked, since)


@router.post("/insights/write", include_in_schema=False)
async def write_answer(
    request: Request,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    kb: KBDep,
    written: WrittenDep,
    insights: InsightsDep,
    reloader: ReloaderDep,
    form: Posted,
    asked: AskedWordings = [],  # noqa: B006 (FastAPI copies it)
    since: Since = DEFAULT_SINCE,
    harvested: Annotated[str, Form(max_length=300)] = "",
) -> Response:
    """Save a new written answer, serve a build with it, and link the questions it answers to it."""
    return await _save(request, kb, written, insights, reloader, None, form, asked, since, harvested)


@router.get("/insights/written/{answer_id}.md", include_in_schema=False)
async def written_snippet(
    answer_id: str,
    _: AdminDep,
    written: WrittenDep,
    lang: Annotated[str, Query(max_length=2)] = "zh",
    layout: Annotated[str, Query(max_length=20)] = "headings",
) -> Response:
    """A written answer as an entry of an upstream FAQ file, to propose it there."""
    answer = await _found(written, answer_id)
    text = snippet(answer, lang, layout)
    headers = {**PRIVATE, "Content-Disposition": f'attachment; filename="{answer.id}.{lang}.md"'}
    return Response(text, media_type="text/markdown; charset=utf-8", headers=headers)


@router.get("/insights/written/{answer_id}", response_class=HTMLResponse, include_in_schema=False)
async def edit_form(
    request: Request,
    answer_id: str,
    _: AdminDep,
    kb: KBDep,
    written: WrittenDep,
    since: Annotated[str, Query(max_length=MAX_FIELD)] = DEFAULT_SINCE,
) -> HTMLResponse:
    """The form to edit a written answer."""
    answer = await _found(written, answer_id)
    return _form(request, kb, answer, _values(answer), [], since)


@router.post("/insights/written/{answer_id}", include_in_schema=False)
async def edit_answer(
    request: Request,
    answer_id: str,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    kb: KBDep,
    written: WrittenDep,
    insights: InsightsDep,
    reloader: ReloaderDep,
    form: Posted,
    since: Since = DEFAULT_SINCE,
    version: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    """Save a written answer's new text over the version the form was opened on, and serve a build with it."""
    answer = await written.get(answer_id)
    if answer is None and version:  # removed after the form was opened: the text comes back, to save as a new one
        return _form(request, kb, None, form, [], since, changed="written")
    if answer is None:
        raise HTTPException(404, f"no written answer {shown(answer_id)}")
    return await _save(request, kb, written, insights, reloader, answer, form, [], since, version=version)


@router.post("/insights/written/{answer_id}/remove", include_in_schema=False)
async def remove_answer(
    answer_id: str, _limit: LinkLimitDep, _: AdminFormDep, written: WrittenDep, since: Since = DEFAULT_SINCE
) -> Response:
    """Remove a written answer, and serve a build without it (the links to it stay, as to any entry that has gone)."""
    if await written.remove(answer_id) is None:
        raise HTTPException(404, f"no written answer {shown(answer_id)}")
    return _back(since)


async def _harvested(insights: InsightsDep, key: str) -> KeptDraft | None:
    """The tracker's draft named `owner/name#number`, whatever its state; None for none."""
    repo, _, number = key.partition("#")
    if not repo or not number.isdigit():
        return None
    return await insights.run(insights.drafts.get, repo, int(number))


async def _found(written: WrittenDep, answer_id: str) -> WrittenAnswer:
    answer = await written.get(answer_id)
    if answer is None:
        raise HTTPException(404, f"no written answer {shown(answer_id)}")
    return answer


def _back(since: str) -> RedirectResponse:
    return RedirectResponse(f"/insights?{urlencode({'since': since})}#written", status_code=303, headers=PRIVATE)


async def _save(
    request: Request,
    kb: KnowledgeBase,
    written: WrittenDep,
    insights: InsightsDep,
    reloader: ReloaderDep,
    old: WrittenAnswer | None,
    values: dict[str, str],
    asked: list[str],
    since: str,
    harvested: str = "",
    version: str = "",
) -> Response:
    """Check and save an answer (`old`'s new text over its `version`, or a new one) and link `asked` to it; an
    answer refused, or changed meanwhile, is shown again in its form, with a message saying why. `harvested`
    (`owner/name#number`): the tracker's draft this answer accepts, whose thread it links; one decided
    meanwhile is not accepted again."""
    asked = [q for q in (a.strip() for a in asked) if q][:ASKED_MAX]
    try:
        answer = written_answer(
            {lang: values[f"question_{lang}"] for lang in LANGS},
            {lang: values[f"answer_{lang}"] for lang in LANGS},
            values["tags"],
            values["faq"],
            faqs_of(kb),
            old.id if old is not None else "",
        )
    except AnswerRefused as refused:
        return _form(request, kb, old, values, asked, since, refused, harvested)
    kept = await _harvested(insights, harvested)
    draft: Draft | None = kept.draft if kept is not None else None
    if kept is not None and draft is not None:
        if kept.status != "new":
            return _form(request, kb, None, values, asked, since, changed="harvested", decided=kept)
        answer = replace(answer, extra={"url": draft.url, "harvested": [draft.url, *(a.url for a in draft.alternates)]})
    try:
        await written.keep(answer, version)  # saved first: a stop before the build leaves it to start-up to build
    except AnswerChanged as changed:
        return _form(request, kb, changed.current, values, asked, since, changed="written", theirs=changed.current)
    if kept is not None and draft is not None:
        # Decided once the answer is saved: of two saves at once (two tabs) one accepts it; the other's is removed.
        if not await insights.run(insights.drafts.decide, draft.repo, draft.number, "accepted", answer.id):
            if old is None:
                await written.remove(answer.id)
            decided = await _harvested(insights, harvested) or kept
            return _form(request, kb, None, values, asked, since, changed="harvested", decided=decided)
    await written.serve()
    served = reloader.served.kb
    if asked and answer.id in served.by_id:
        try:
            for question in asked:
                await insights.link(served, question, answer.id)
        except (InsightsOff, InsightsUnreachable) as exc:  # the answer is saved and served all the same
            log.warning("the written answer %s is served, but its questions were not linked: %s", answer.id, exc)
        await served_at_once(reloader)
    return _back(since)
