"""`POST /github/webhook`: GitHub's deliveries for the repositories the webhook (or App) is installed on.

Each delivery is verified over its raw body (`X-Hub-Signature-256`, the webhook's secret) and
answered at once: 202 for an issue, a Discussion or a `/faq` comment, whose answer follows in the
background (the search, then the API call: GitHub gives a delivery 10 s), and a push to a
repository and branch that sources.toml's sources follow, which are synced in the background
(push.py, server/syncing.py), and an issue closed, whose thread is harvested into a draft for /insights in the
background (harvest.py); a ping, an installation, a push no source follows or any other
event is acknowledged and left. A delivery whose `X-GitHub-Delivery` id was seen before (a
redelivery, or a captured one sent again), or whose signed body was (a captured one sent again under
a new id: the signature covers the body only), is acknowledged and not acted on again: the ids are kept in the
insights database, so this holds across the processes and replicas sharing it (in this process alone without
one, or while it cannot be reached). A close is queued in that database before it is acknowledged, and harvested
from there (close_queue.py): a stop or a flood loses none. In suggest mode the answers are kept for /insights,
where a maintainer posts or dismisses them (suggestion_routes.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from contextlib import AsyncExitStack
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from kb.errors import KBError
from kb.events import Events, Voted
from kb.harvest.threads import MAX_COMMENTS
from kb.insights.offload import off_loop
from kb.insights.service import Insights
from kb.knowledge import KnowledgeBase

from ...bots.delivery_ids import DeliveryIds, Guard, keep_guard, kept
from ...deps import EventsDep, KBDep, get_insights
from ...link_deps import served_at_once
from ...schemas import ErrorOut
from ...settings import ServerSettings
from ...syncing import PushSyncs, synced_folders
from ...votes import take_vote
from . import suggestion_routes
from .app_auth import AppTokens, read_private_key
from .backlog import Backlog, IssueLocks
from .bot import Suggestions, Teach, Vote, respond
from .client import GitHubAPI, GitHubUnavailable, IssueThread, connections
from .close_queue import CloseQueue
from .events import BadGitHubEvent, Closed, Command, Opened, Other, read_event
from .faq_limits import FaqLimits
from .harvest import harvest_closed
from .push import Push, followed, read_push, sources_pushed
from .signature import verify
from .suggestions import KeptSuggestions

__all__ = ["router", "install", "start", "REPLAY_WINDOW"]

log = logging.getLogger("kb.server")
router = APIRouter(tags=["github"])
router.include_router(suggestion_routes.router)

REPLAY_WINDOW = 7 * 24 * 3600.0  # GitHub redelivers a delivery, by hand, for up to 3 days; a week is kept
_ERRORS: dict[int | str, dict[str, Any]] = {400: {"model": ErrorOut}, 401: {"model": ErrorOut}}


def install(app: FastAPI, settings: ServerSettings) -> None:
    """The deliveries seen, the log budget for refused ones, the syncs pushes ask for, and the API: as a GitHub App
    (its installation tokens) when KB_GITHUB_APP_ID is set, else with KB_GITHUB_TOKEN, else none (nothing is posted)."""
    app.state.github = keep_guard(app, "github", Guard(DeliveryIds(REPLAY_WINDOW)))
    app.state.github_pushes = PushSyncs(settings)
    app.state.github_connections = connections(settings.github_api_url)
    app.state.github_logins = {}
    app.state.github_issue_locks = IssueLocks()
    app.state.github_backlog = Backlog()
    app.state.github_faq_limits = FaqLimits(settings.github_faq_issue_seconds, settings.github_faq_per_user_hour)
    app.state.github_tokens = (
        AppTokens(app.state.github_connections, settings.github_app_id, read_private_key(settings.github_private_key))
        if settings.github_app_id
        else None
    )


def api_for(request: Request, event: Opened | Command | Closed) -> GitHubAPI | None:
    """The API as the App's installation the event came through, or as KB_GITHUB_TOKEN's user; None without either."""
    return suggestion_routes.api_as(request, issue_of(event).installation)


async def start(app: FastAPI, stack: AsyncExitStack) -> None:
    """Issues claimed in the insights database while their comment is written (one writer across the processes
    sharing it); the API client's connections closed, and a push's sync stopped, when the app stops."""
    app.state.github_issue_locks.store = app.state.recorder.store
    closes = app.state.github_closes = CloseQueue(app.state.recorder.store)
    stack.push_async_callback(app.state.github_connections.aclose)
    stack.push_async_callback(app.state.github_pushes.stop)
    if closes.on:  # the closes this process, or one that stopped, did not harvest
        draining = asyncio.create_task(closes.drain(partial(_queued_harvest, app)))

        async def stop() -> None:
            draining.cancel()
            await asyncio.gather(draining, return_exceptions=True)

        stack.push_async_callback(stop)


async def _queued_harvest(app: FastAPI, asked: Opened, _taken: object) -> str:
    """A queued close harvested by the queue's own turn: its comments read with an API of its own."""
    api = suggestion_routes.api_of(app, asked.installation)
    thread = IssueThread(api, asked.repo, asked.number, MAX_COMMENTS) if api else None
    insights = getattr(app.state, "insights", None) or Insights(app.state.recorder)
    reloader = app.state.reloader
    return await harvest_closed(asked, thread, reloader.served.kb, insights, reloader, app.state.settings)


GuardDep = Annotated[Guard, Depends(kept("github"))]


def teacher(request: Request, kb: KnowledgeBase) -> Teach:
    """How a maintainer's `/faq link` or `/faq not-covered` teaches: a link in the insights database, served at once."""

    async def teach(question: str, entry_id: str | None) -> str:
        try:
            link = await (await get_insights(request)).link(kb, question, entry_id)
        except KBError as exc:
            return f"not taught: {exc}"
        await served_at_once(request.app.state.reloader)
        return f"taught: {link.question[:80]!r} -> {link.entry or 'not covered'}"

    return teach


def voter(request: Request) -> Vote:
    """How a reaction to the bot's comment is taken: as every channel's vote (per voter limits, written at once)."""

    async def vote(voted: Voted) -> str:
        try:
            await take_vote(request, await get_insights(request), voted, voter=voted.voter)
        except (HTTPException, KBError) as exc:
            return f"not kept: {getattr(exc, 'detail', exc)}"
        return "kept"

    return vote


async def _answer(
    kb: KnowledgeBase,
    events: Events,
    settings: ServerSettings,
    event: Opened | Command | Closed,
    api: Any,
    root: str,
    guard: Guard,
    teach: Teach,
    vote: Vote,
    suggestions: Suggestions | None,
    thread: IssueThread | None,
) -> None:
    """Background task: the bot's answer to an event, posted (or kept as a suggestion, or only logged, as the mode
    says)."""
    try:
        outcome = await respond(kb, events, settings, event, api, root, teach, vote, suggestions, thread)
    except GitHubUnavailable as exc:
        guard.refused.warning(
            log, "GitHub: the answer to %s#%s was not posted: %s", issue_of(event).repo, issue_of(event).number, exc
        )
        return
    except KBError as exc:  # the insights database, where a suggestion is kept, is off or out of reach
        guard.refused.warning(
            log, "GitHub: the answer to %s#%s was not kept: %s", issue_of(event).repo, issue_of(event).number, exc
        )
        return
    log.info("GitHub %s#%s: %s %s", issue_of(event).repo, issue_of(event).number, outcome.reason, outcome.url)


async def _harvest(
    asked: Opened,
    thread: IssueThread | None,
    kb: KnowledgeBase,
    insights: Insights,
    reloader: Any,
    settings: ServerSettings,
    guard: Guard,
    closes: CloseQueue | None = None,
) -> None:
    """Background task: a closed issue harvested into a draft for /insights (harvest.py), or why not, logged; with a
    queue, the queued close taken (a failure is tried again from there)."""

    async def harvest(queued: Opened, _taken: object) -> str:
        return await harvest_closed(queued, thread, kb, insights, reloader, settings)

    try:
        if closes is not None and closes.on:
            outcome = await closes.harvest_taken(asked, harvest)
        else:
            outcome = await harvest(asked, None)
    except (GitHubUnavailable, KBError) as exc:
        guard.refused.warning(log, "GitHub: %s#%s was not harvested: %s", asked.repo, asked.number, exc)
        return
    log.info("GitHub %s#%s: %s", asked.repo, asked.number, outcome)


def issue_of(event: Opened | Command | Closed) -> Opened:
    """The issue or Discussion an event is about."""
    return event if isinstance(event, Opened) else event.asked


async def suggestions_of(request: Request) -> Suggestions | None:
    """Where suggest mode keeps its answers: the insights database (None when there is none)."""
    insights: Insights = await get_insights(request)
    return KeptSuggestions(insights) if insights.feedback_on else None


def _pushed(request: Request, push: Push, delivery: str) -> dict[str, Any]:
    """A push: the sources following the repository and ref pushed to synced in the background, or why none is."""
    settings: ServerSettings = request.app.state.settings
    names, why = sources_pushed(push, followed(synced_folders(settings)))
    if not names:
        log.info("GitHub push %s to %s %s: nothing synced: %s", delivery[:64], push.repo, push.ref, why)
        return {"ok": True, "done": f"nothing to sync: {why}"}
    log.info("GitHub push %s to %s %s: syncing %s", delivery[:64], push.repo, push.ref, ", ".join(names))
    request.app.state.github_pushes.start(names, request.app.state.reloader)
    return {"ok": True, "done": f"syncing {', '.join(names)}"}


async def _first(request: Request, guard: Guard, key: str) -> bool:
    """Whether a delivery's `key` (its id, or its body's hash) is new: in the insights database, so across the
    processes sharing it; in this process alone without one, or while it cannot be reached (logged)."""
    store = request.app.state.recorder.store
    if store is None:
        return guard.delivered.first(key)
    try:
        return bool(await off_loop(store.deliveries.first, _key(key), time.time(), REPLAY_WINDOW))
    except store.database_errors as exc:
        guard.refused.warning(log, "GitHub: deliveries checked in this process alone: %s", exc)
        return guard.delivered.first(key)


async def _queued(
    request: Request, event: Opened | Command | Closed, guard: Guard, keys: list[str]
) -> CloseQueue | None:
    """A close queued in the insights database before it is acknowledged; the queue (None without one). A full queue
    is a 503, the delivery's keys forgotten so that GitHub's redelivery is taken."""
    closes: CloseQueue | None = getattr(request.app.state, "github_closes", None)
    if closes is None or not closes.on or not isinstance(event, Closed):
        return closes
    if not await closes.queue(event.asked):
        guard.refused.warning(
            log, "GitHub: %s#%s refused: the queue of closes is full", event.asked.repo, event.asked.number
        )
        store = request.app.state.recorder.store
        await off_loop(store.deliveries.forget, [_key(k) for k in keys])
        raise HTTPException(503, "the queue of closes waiting to be harvested is full; deliver it again later")
    return closes


def _key(key: str) -> str:
    """What the database keeps of a delivery's key: a fixed-size hash of it."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _faq_refusal(request: Request, event: Opened | Command | Closed, guard: Guard) -> str:
    """Why a `/faq` question is not answered now (its issue's or its commenter's limit, logged), or ""; a maintainer's
    teaching and a bot's command are never limited here."""
    if not isinstance(event, Command) or event.bot or event.text.split(maxsplit=1)[:1] in (["link"], ["not-covered"]):
        return ""
    asked = event.asked
    refused: str = request.app.state.github_faq_limits.refusal(asked.repo, asked.number, event.author)
    if refused:
        guard.refused.warning(log, "GitHub: /faq on %s#%s not answered: %s", asked.repo, asked.number, refused)
    return refused


@router.post("/github/webhook", status_code=202, responses=_ERRORS)
async def webhook(
    request: Request, kb: KBDep, events: EventsDep, guard: GuardDep, background: BackgroundTasks
) -> dict[str, Any]:
    """Take a delivery from GitHub (signed with the webhook's secret)."""
    settings: ServerSettings = request.app.state.settings
    body = await request.body()  # at most KB_MAX_BODY_BYTES (RequestLimits)
    headers = request.headers
    # else a 401 (server/error_handler.py)
    verify(settings.github_webhook_secret, headers.get("x-hub-signature-256"), body)
    delivery = headers.get("x-github-delivery", "")
    if not delivery:
        raise BadGitHubEvent("the X-GitHub-Delivery header is missing")
    signed = "body:" + hashlib.sha256(body).hexdigest()  # the same signed body, sent again under a new id
    for key, seen in ((delivery, "was received before"), (signed, "carries a body received before")):
        if not await _first(request, guard, key):
            log.info("GitHub delivery %s %s; not answered again", delivery[:64], seen)
            return {"ok": True, "done": "delivered before"}
    name = headers.get("x-github-event", "")
    if name == "push":
        return _pushed(request, await run_in_threadpool(read_push, body), delivery)
    event = await run_in_threadpool(read_event, name, body)  # linear in the body, but not on the event loop
    if isinstance(event, Other):
        return {"ok": True, "done": f"nothing to answer ({event.what})"}
    backlog: Backlog = request.app.state.github_backlog
    asked = issue_of(event)
    refused = _faq_refusal(request, event, guard)
    if refused:
        return {"ok": True, "done": f"not answered: {refused}"}
    closes = await _queued(request, event, guard, [delivery, signed])
    api = api_for(request, event)
    # A close's votes and its harvest both read the issue's comments: once, for both.
    thread = IssueThread(api, asked.repo, asked.number, MAX_COMMENTS) if isinstance(event, Closed) and api else None
    answer = partial(
        _answer,
        kb,
        events,
        settings,
        event,
        api,
        settings.base_url.rstrip("/") + "/" if settings.base_url else "",  # links only where KB_BASE_URL says
        guard,
        teacher(request, kb),
        voter(request),
        await suggestions_of(request),
        thread,
    )
    if not backlog.take():
        guard.refused.warning(
            log, "GitHub: %s#%s not answered: %d answers are in flight already", asked.repo, asked.number, backlog.limit
        )
        return {"ok": True, "done": f"not answered: {backlog.limit} answers are in flight already"}
    background.add_task(backlog.run, answer)
    if isinstance(event, Closed) and backlog.take():  # its thread harvested too, in a turn of its own
        insights = await get_insights(request)
        reloader = request.app.state.reloader
        harvest = partial(_harvest, event.asked, thread, kb, insights, reloader, settings, guard, closes)
        background.add_task(backlog.run, harvest)
    return {"ok": True, "done": "answering"}
