"""`/insights`: what people asked, what the FAQ could not answer, which answers did not help,
and which entries are near-duplicates of each other (as the index build found them).

Behind `KB_ADMIN_TOKEN` (off without it): clients send `Authorization: Bearer <token>`,
browsers sign in with a form that sets an HttpOnly cookie. Each table is also a CSV export.
A gap can be dismissed (and restored) with a form on the page. Every form that changes
something takes the bearer token, or the SameSite=Strict sign-in cookie with the page's form
token; one from another site's page (its `Origin`) is refused (server/admin_auth.py).

The GitHub bot's suggested answers (its `suggest` mode) are listed with Post and Dismiss, forms
of the same kind (server/channels/github/suggestion_routes.py).

Every question the page lists (a gap's wordings, the answers that may be wrong, the
questions of not-helpful votes, the recent questions) can be linked to the entry that
answers it ("Answered by…", an entry picker searching `/insights/entries` as one types) or
marked not covered by the FAQ; a link can be undone and restored. These forms need the
sign-in cookie or the bearer token, the page's form token and this site's `Origin`; they
share the links' rate limit and database with the JSON API (server/routes/taught_links.py),
through server/link_deps.py.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from kb.duplicates import Duplicate
from kb.errors import QueryError, shown
from kb.harvest.accepted import from_tracker as from_tracker_answer
from kb.insights import DEFAULT_SINCE, LANGS, TABLES, Report, day, draft_entries, table, to_csv
from kb.insights.service import Insights
from kb.insights.taught_links import Link
from kb.knowledge import KnowledgeBase
from kb.syncs import last_sync
from kb.text import question_key
from kb.tuning import links_since

from ..admin_auth import check_on, sign_in, sign_out, signed_in, token_matches
from ..channels import registry
from ..deps import (
    AdminDep,
    AdminFormDep,
    AdminOnDep,
    FormTokenDep,
    InsightsDep,
    KBDep,
    RefitDep,
    ReloaderDep,
    SettingsDep,
    SignInLimitDep,
    WrittenDep,
)
from ..forms import form_token, with_form_token
from ..link_deps import LinkLimitDep, LinksDep, served_at_once
from ..refit import Refit
from ..rendering.chart import Series, stacked_bars
from ..rendering.strings import Translator
from ..rendering.templates import page, request_lang
from ..schemas import ErrorOut
from ..written import Written
from .channel_colours import css_url
from .gaps import offers
from .written import ASKED_MAX, faqs_of

__all__ = ["router", "SINCE_CHOICES", "RECENT", "LINKS_SHOWN"]

router = APIRouter(tags=["insights"])

SINCE_CHOICES = ("24h", "7d", "30d", "90d")
MAX_FIELD = 10_000  # characters of a form field (a token, a time window, a gap's label: a question as asked)
PRIVATE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}
LANG_NAMES = {"zh": "中文", "en": "English"}
Since = Annotated[str, Form(max_length=MAX_FIELD)]  # a form's time window, checked by parse_since
RECENT = 200  # recent questions listed
LINKS_SHOWN = 50  # links listed, newest first
PICKER_K = 8  # entries the picker offers
DATALIST_MAX = 500  # entries offered to type an id from without JavaScript (a <datalist>), at most
SECTIONS = ("gaps", "doubtful", "unhelpful", "recent", "links", "written", "adapter")  # where a form goes back to


def _charts(report: Report, t: Translator) -> list[dict[str, Any]]:
    """Questions per day, by channel and by language."""
    days = report.days()
    charts = []
    channels = {c.name: c.label(t.lang) for c in registry.CHANNELS}
    for name, counts in (
        ("channel", report.per_day("channel", tuple(channels))),
        ("lang", report.per_day("lang", LANGS)),
    ):
        label = channels.get if name == "channel" else LANG_NAMES.get
        series = [Series(key, label(key) or key, tuple(c)) for key, c in counts.items()]
        title = t(f"insights_chart_{name}")
        charts.append({"title": title, "svg": stacked_bars(title, days, series), "series": series})
    return charts


def _sign_in_page(request: Request, since: str, failed: bool) -> HTMLResponse:
    context = {"since": since, "failed": failed, "form_token": form_token(request)}
    response = page(request, "insights_sign_in.html", context, status_code=401)
    response.headers.update({**PRIVATE, "WWW-Authenticate": "Bearer"})
    return with_form_token(request, response)


@router.api_route("/insights", methods=["GET", "HEAD"], response_class=HTMLResponse, include_in_schema=False)
async def insights_page(
    request: Request,
    kb: KBDep,
    insights: InsightsDep,
    settings: SettingsDep,
    refit: RefitDep,
    written: WrittenDep,
    since: str = DEFAULT_SINCE,
    find: Annotated[str, Query(max_length=MAX_FIELD)] = "",
) -> HTMLResponse:
    """The insights page, or its sign-in form. `find` filters the recent questions (the page without JavaScript)."""
    check_on(settings)
    if not signed_in(request, settings):
        return _sign_in_page(request, since, failed=False)
    lang = request_lang(request)
    report = await insights.report(kb, since, lang)
    links, recent = await insights.run(insights.links.all, True), await insights.recent(RECENT, find)
    t = Translator(lang)
    context = {
        **_teach_context(kb, lang, links[::-1]),  # newest first
        "recent": recent,
        "recent_limit": RECENT,
        "find": find,
        "report": report,
        "since": since,
        "since_choices": SINCE_CHOICES if since in SINCE_CHOICES else (*SINCE_CHOICES, since),
        "charts": _charts(report, t),
        "drafts": [draft_entries(gap) for gap in report.gaps],
        "offers": await offers(kb, report.gaps, lang),
        "doubt_signs": ("asked_again", "unhelpful", "low_margin"),
        "channel_labels": {c.name: c.label(lang) for c in registry.CHANNELS},
        "channels_css": css_url(),
        "exports": [(name, f"/insights/{name}.csv?{urlencode({'since': since})}") for name in TABLES],
        "day": day,
        "lang_names": LANG_NAMES,
        "form_token": form_token(request),
        "adapter": _adapter_context(kb, links, refit),
        "duplicates": _duplicates_context(kb, lang),
        "written": await _written_context(kb, lang, links, written),
        "write_url": lambda questions: (
            "/insights/write?" + urlencode([("asked", q) for q in questions[:ASKED_MAX]] + [("since", since)])
        ),
        "last_sync": last_sync(settings.data_dir),
        "harvested": await _harvested_context(insights, settings.harvest_expire_days, written),
        "panels": await _panels(request, insights),
    }
    response = page(request, "insights.html", context)
    response.headers.update(PRIVATE)
    return with_form_token(request, response)


async def _panels(request: Request, insights: Insights) -> list[dict[str, Any]]:
    """The channels' own panels (their plugins' `panel`), in the registry's order: each one's context, with the
    `template` that draws it."""
    panels = []
    for channel in registry.CHANNELS:
        if channel.plugin is not None:
            context = await channel.plugin.panel(request, insights)
            if context is not None:
                panels.append({**context, "template": channel.plugin.panel_template})
    return panels


def _teach_context(kb: KnowledgeBase, lang: str, links: list[Link]) -> dict[str, Any]:
    """What the page's "Answered by…" and "Not covered" actions and its list of links need."""
    active = {question_key(link.question): link for link in links if link.active}

    def entry_question(entry_id: str) -> str:
        entry = kb.by_id.get(entry_id)
        return entry.localized(lang).question if entry else ""

    choices = [(e.id, e.localized(lang).question) for e in kb.entries] if len(kb.entries) <= DATALIST_MAX else []

    def link_of(text: str) -> Link | None:
        return active.get(question_key(text))

    return {
        "link_of": link_of,
        "entry_question": entry_question,
        "links": links[:LINKS_SHOWN],
        "links_total": len(links),
        "entry_choices": choices,
    }


async def _harvested_context(insights: Insights, expire_days: int, written: Written) -> dict[str, Any]:
    """The drafts from the tracker waiting, how many in each state, and how many entries came from the tracker."""
    drafts, counts = await insights.harvested(expire_days)
    from_tracker = sum(1 for answer in await written.answers() if from_tracker_answer(answer))
    return {"drafts": drafts, "counts": counts, "from_tracker": from_tracker}


def _duplicates_context(kb: KnowledgeBase, lang: str) -> dict[str, Any]:
    """The near-duplicate pairs of the build served, each with its two entries as a reader of
    `lang` sees them: those to look at, and those the manifests mark intended."""
    pairs = []
    for d in map(Duplicate.from_dict, kb.meta.duplicates):
        first, second = kb.by_id.get(d.first), kb.by_id.get(d.second)
        if first is not None and second is not None:
            pairs.append((d, first.localized(lang), second.localized(lang)))
    return {"found": [p for p in pairs if not p[0].intended], "intended": [p for p in pairs if p[0].intended]}


async def _written_context(kb: KnowledgeBase, lang: str, links: list[Link], written: Written) -> dict[str, Any]:
    """The answers written on the page, how many questions each has linked to it, and whether the last build with them failed."""
    linked: dict[str, int] = {}
    for link in links:
        if link.active and link.entry is not None:
            linked[link.entry] = linked.get(link.entry, 0) + 1
    return {
        "answers": await written.answers(),
        "linked": linked,
        "failed": written.failed,
        "file": str(written.file.path),
        "faq_titles": {name: titles.get(lang) or name for name, (_, titles) in faqs_of(kb).items()},
    }


def _adapter_context(kb: KnowledgeBase, links: list[Link], refit: Refit) -> dict[str, Any]:
    """What the page says of the query adapter: when it was fitted and on how many questions,
    the links made since, and whether a refit is running or failed."""
    adapter = kb.searcher.adapter
    state = refit.state
    return {
        "summary": adapter.summary() if adapter is not None else None,
        "links_since": links_since(adapter, [link.made_at for link in links if link.active]),
        "running": state.running,
        "started_at": state.started_at,
        "failed": state.failed,
    }


@router.post("/insights/adapter", include_in_schema=False)
async def insights_refit(
    _limit: LinkLimitDep,
    _: AdminFormDep,
    refit: RefitDep,
    since: Since = DEFAULT_SINCE,
) -> Response:
    """Refit the query adapter on what the knowledge base knows now (one refit at a time; the
    old adapter serves until the new one is written)."""
    refit.start()  # while one runs, the page says so and nothing more starts
    return _back(since, "adapter")


def _back(since: str, section: str) -> RedirectResponse:
    """Back to the page, at the section the form was in."""
    anchor = section if section in SECTIONS else "links"
    return RedirectResponse(f"/insights?{urlencode({'since': since})}#{anchor}", status_code=303, headers=PRIVATE)


Back = Annotated[str, Form(max_length=40)]


@router.post("/insights/links", include_in_schema=False)
async def insights_link(
    request: Request,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    kb: KBDep,
    insights: LinksDep,
    reloader: ReloaderDep,
    question: Annotated[str, Form(max_length=MAX_FIELD)] = "",
    entry_id: Annotated[str, Form(max_length=200)] = "",
    not_covered: Annotated[str, Form(max_length=10)] = "",
    since: Since = DEFAULT_SINCE,
    back: Back = "",
) -> Response:
    """Link a question to the entry that answers it ("Answered by…"), or mark it not covered by the FAQ."""
    entry = entry_id.strip()
    covered = not_covered.strip().lower() not in ("1", "true", "on", "yes")
    if covered and not entry:
        raise QueryError("entry_id", "choose the entry that answers the question, or mark it not covered by the FAQ")
    await insights.link(kb, question, entry if covered else None)
    await served_at_once(reloader)
    return _back(since, back)


@router.post("/insights/links/{link_id}/{action}", include_in_schema=False)
async def insights_link_change(
    request: Request,
    link_id: int,
    action: str,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    insights: LinksDep,
    reloader: ReloaderDep,
    since: Since = DEFAULT_SINCE,
    back: Back = "",
) -> Response:
    """Undo a link, or restore an undone one."""
    if action not in ("undo", "restore"):
        raise HTTPException(404, f"no link action {shown(action)}; the actions are undo and restore")
    await (insights.unlink if action == "undo" else insights.relink)(link_id)
    await served_at_once(reloader)
    return _back(since, back)


@router.get("/insights/entries", include_in_schema=False)
async def insights_entries(
    request: Request,
    _: AdminDep,
    kb: KBDep,
    q: Annotated[str, Query(max_length=MAX_FIELD)] = "",
    k: Annotated[int, Query(ge=1, le=50)] = PICKER_K,
) -> JSONResponse:
    """The entry picker's choices for what a maintainer typed: an entry's id, or words searched for.

    Searched like `/api/search`, but not recorded: what maintainers type to find an entry is
    not a question people asked."""
    lang = request_lang(request)
    text = q.strip()
    chosen = []
    if text in kb.by_id:
        chosen.append(kb.by_id[text])
    if text:
        try:
            result = await kb.search(text, k)
        except QueryError:
            result = None
        if result is not None:
            chosen += [hit.entry for hit in result.hits if hit.entry.id != text]
    entries = [
        {"id": e.id, "question": e.localized(lang).question, "framework": e.framework, "source": e.source}
        for e in chosen[:k]
    ]
    return JSONResponse({"entries": entries}, headers=PRIVATE)


@router.post("/insights/sign-in", include_in_schema=False)
async def insights_sign_in(
    request: Request,
    settings: SettingsDep,
    _limit: SignInLimitDep,
    _on: AdminOnDep,
    _form: FormTokenDep,
    token: Annotated[str, Form(max_length=MAX_FIELD)] = "",
    since: Since = DEFAULT_SINCE,
) -> Response:
    """Check the admin token from the sign-in form and set the cookie."""
    if not token_matches(settings, token):
        return _sign_in_page(request, since, failed=True)
    response = RedirectResponse(f"/insights?{urlencode({'since': since})}", status_code=303)
    sign_in(response, request, settings)
    return response


@router.post("/insights/sign-out", include_in_schema=False)
async def insights_sign_out(_on: AdminOnDep, _form: FormTokenDep) -> Response:
    """Forget the sign-in cookie."""
    response = RedirectResponse("/insights", status_code=303)
    sign_out(response)
    return response


@router.get(
    "/insights/{name}.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}, 401: {"model": ErrorOut}, 404: {"model": ErrorOut}},
)
async def insights_csv(
    name: str, _: AdminDep, kb: KBDep, insights: InsightsDep, since: str = DEFAULT_SINCE
) -> Response:
    """One insights table as CSV: `gaps`, `unhelpful`, `entries` or `daily` (needs the admin token)."""
    if name not in TABLES:
        raise HTTPException(404, f"no insights table {shown(name)}; the tables are {', '.join(TABLES)}")
    report = await insights.report(kb, since)
    # The byte-order mark lets spreadsheet programs read the Chinese text as UTF-8.
    body = "\ufeff" + to_csv(table(report, name))
    filename = f"kb-insights-{name}-{since.strip().lower()}.csv"  # `since` is checked: digits and h, d or w
    headers = {**PRIVATE, "Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(body, media_type="text/csv; charset=utf-8", headers=headers)
