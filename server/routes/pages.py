"""The HTML pages: search, an entry, chat, and the language toggle. Each works without JavaScript."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from kb import asking
from kb.answer import RELATED
from kb.chat import subject_entry
from kb.errors import QueryError, shown
from kb.hits import SHOW_MAX
from kb.knowledge import KnowledgeBase
from kb.learning.questions import LearnedQuestion
from kb.noise import strip_noise
from kb.see_also import Resolved
from kb.tags import tag_table

from ..deps import ChatDep, EventsDep, FormTokenDep, InsightsDep, KBDep, base_url, feedback_context
from ..forms import form_token, with_form_token
from ..permalinks import permalinks
from ..rendering.intro import intro
from ..rendering.strings import CONTENT_COOKIE, COOKIE, LANGS
from ..rendering.templates import content_lang, page, request_lang
from ..schemas import ChatTurn
from ..sessions import with_session

__all__ = ["router"]

router = APIRouter(include_in_schema=False)

PAGE_METHODS = ["GET", "HEAD"]  # HEAD: the same headers and no body, for uptime monitors
PAGE_K = SHOW_MAX  # results searched for on the server-rendered page; those worth showing are shown
MAX_HISTORY_FIELD = 200_000  # characters of the earlier turns the form carries back
MAX_ID = 200
MAX_ALTERNATES = 12  # alternate questions listed on an entry's page (all are in /api/entries/{id})


def _facets(kb: KnowledgeBase) -> dict[str, Any]:
    """The filter choices: sources with entry counts, and tags by how often they occur."""
    per_source = Counter(e.source for e in kb.entries)
    topics = tag_table().tags
    per_tag = Counter(t for e in kb.entries for t in e.tags if t in topics)
    return {
        "sources": [(s, per_source[s.name]) for s in kb.sources],
        "tags": sorted(per_tag.items(), key=lambda item: (-item[1], item[0])),
    }


@router.api_route("/", methods=PAGE_METHODS, response_class=HTMLResponse)
async def home(request: Request, kb: KBDep, insights: InsightsDep) -> Response:
    """The search page; with a question (`/?q=`, as a browser's site search may send it), its results at `/search`."""
    params = request.query_params
    if any(params.get(name, "").strip() for name in ("q", "source", "tag")):
        return RedirectResponse(f"/search?{request.url.query}", status_code=302)
    context = {
        "q": "",
        "source": "",
        "tag": "",
        "result": None,
        "hits": [],
        "reader": "",
        "elsewhere": "",
        "intro": intro(kb, request_lang(request)),
        **_facets(kb),
        **feedback_context(insights),
    }
    return with_session(request, page(request, "search.html", context), insights)


@router.api_route("/search", methods=PAGE_METHODS, response_class=HTMLResponse)
async def search_page(
    request: Request, kb: KBDep, insights: InsightsDep, events: EventsDep, q: str = "", source: str = "", tag: str = ""
) -> HTMLResponse:
    """Search results rendered on the server, so the search works as a plain form."""
    result, hits, reader, note = None, [], content_lang(request), ""
    see_also: tuple[Resolved, ...] = ()
    if q.strip():
        found = await asking.search(  # entries in the question's language; a monitor's HEAD is not someone asking
            kb,
            events,
            q,
            channel="web",
            k=PAGE_K,
            tags=[tag] if tag else [],
            source=source or None,
            asked=request.method == "GET",
        )
        result, reader, hits, note = found.result, found.hl, list(found.worth_showing), found.note
        see_also = found.see_also
    elif source or tag:
        hits = asking.browse(kb, source, tag, reader)
    context = {
        "q": q,
        "source": source,
        "tag": tag,
        "result": result,
        "hits": hits,
        "reader": reader,
        "elsewhere": note,
        "see_also": see_also,
        "intro": intro(kb, request_lang(request)),
        **_facets(kb),
        **feedback_context(insights),
    }
    return with_session(request, page(request, "search.html", context), insights)


def _as_searched(questions: list[LearnedQuestion]) -> list[LearnedQuestion]:
    """The questions as the search reads them (an issue title without its `[BUG]` tag), each wording once."""
    seen: set[str] = set()
    shown = []
    for question in questions:
        text = strip_noise(question.question)
        if text.casefold() not in seen:
            seen.add(text.casefold())
            shown.append(replace(question, question=text))
    return shown


@router.api_route("/entries/{entry_id}", methods=PAGE_METHODS, response_class=HTMLResponse)
async def entry_page(request: Request, kb: KBDep, entry_id: str, hl: str = "") -> Response:
    """One entry: the full answer, its source, tags, related entries and the other wordings of its question
    it has learned ("Also asked as"), in the reader's language.

    `?hl=en|zh` picks the version (and is remembered in a cookie); else the one chosen
    before; else the page's language. The id of an entry before upstream reworded its question
    redirects (308) to the entry's page now."""
    now = kb.now_id(entry_id)
    if now is not None:
        moved = request.url.replace(path=request.url.path.removesuffix(entry_id) + now)
        return RedirectResponse(str(moved), status_code=308)
    if hl and hl not in LANGS:
        raise QueryError("hl", f"unknown language {shown(hl)}; expected one of {', '.join(LANGS)}")
    reader = hl or content_lang(request)
    entry = kb.get(entry_id).localized(reader)
    related = kb.related(entry_id, RELATED, reader)
    alternates = sorted(_as_searched(kb.alternates(entry_id)), key=lambda q: q.lang != reader)  # reader's first
    context = {
        "entry": entry,
        "related": related,
        "reader": reader,
        "permalink": f"{base_url(request)}entries/{entry.id}",
        "alternates": alternates[:MAX_ALTERNATES],
        "more_alternates": max(0, len(alternates) - MAX_ALTERNATES),
    }
    response = page(request, "entry.html", context)
    if hl:
        response.set_cookie(CONTENT_COOKIE, hl, max_age=365 * 24 * 3600, samesite="lax", httponly=False)
    return response


@router.api_route("/chat", methods=PAGE_METHODS, response_class=HTMLResponse)
async def chat_page(request: Request, kb: KBDep, insights: InsightsDep, q: str = "", about: str = "") -> HTMLResponse:
    """The chat page; `?about=<entry id>` starts a conversation about that entry (an entry page's follow-up link)."""
    context = {
        "turns": [],
        "history_json": "[]",
        "draft": q,
        "about": _subject(request, kb, about),
        "form_token": form_token(request),
        "intro": intro(kb, request_lang(request)),
        **feedback_context(insights),
    }
    return with_form_token(request, with_session(request, page(request, "chat.html", context), insights))


def _subject(request: Request, kb: KnowledgeBase, about: str) -> Any:
    """The entry a conversation is about, in the reader's language; None for none."""
    entry = subject_entry(kb, about)
    return entry.localized(content_lang(request)) if entry else None


@router.post("/chat", response_class=HTMLResponse)
async def chat_form(
    request: Request,
    kb: KBDep,
    chat: ChatDep,
    insights: InsightsDep,
    events: EventsDep,
    _form: FormTokenDep,
    message: Annotated[str, Form()] = "",
    history_field: Annotated[str, Form(alias="history", max_length=MAX_HISTORY_FIELD)] = "[]",
    about: Annotated[str, Form(max_length=MAX_ID)] = "",
) -> HTMLResponse:
    """A chat turn posted as a plain form (the page without JavaScript)."""
    history = _history(history_field)
    root = base_url(request)
    # In the question's language.
    reply = await asking.chat(chat, events, message, history, channel="web", href=permalinks(root), about=about)
    turns: list[dict[str, Any]] = [{"role": t["role"], "content": t["content"]} for t in history]
    turns.append({"role": "user", "content": message})
    turns.append({"role": "assistant", "content": reply.answer, "reply": reply})
    new_history = history + [{"role": "user", "content": message}, {"role": "assistant", "content": reply.answer}]
    context = {
        "turns": turns,
        "history_json": json.dumps(new_history, ensure_ascii=False),
        "draft": "",
        "about": _subject(request, chat.kb, about),
        "form_token": form_token(request),
        "intro": intro(kb, request_lang(request)),
        **feedback_context(insights),
    }
    return with_form_token(request, with_session(request, page(request, "chat.html", context), insights))


def _history(raw: str) -> list[dict[str, str]]:
    """Earlier turns from the form's hidden field; anything malformed (nested too deeply for the parser included)
    is dropped."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # ValueError: not JSON, or an integer of over 4,300 digits
        return []
    turns = []
    for item in data if isinstance(data, list) else []:
        try:
            turns.append(ChatTurn.model_validate(item).model_dump())
        except ValueError:
            continue
    return turns  # the chat reads the newest of them (kb.chat.recent_turns)


@router.get("/lang/{code}")
async def set_language(code: str, next: str = "/") -> RedirectResponse:
    """Remember the reader's language in a cookie and go back to the page they were on."""
    if code not in LANGS:
        raise QueryError("lang", f"unknown language {shown(code)}; expected one of {', '.join(LANGS)}")
    # Only paths on this site: no scheme, no "//host" and no backslash tricks.
    if not next.startswith("/") or next.startswith("//") or "\\" in next:
        next = "/"
    response = RedirectResponse(next, status_code=303)
    response.set_cookie(COOKIE, code, max_age=365 * 24 * 3600, samesite="lax", httponly=False)
    return response
