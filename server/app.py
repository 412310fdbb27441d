"""The FastAPI application: `create_app(settings)` wires the routers, pages, middleware and the error handler.

Nothing is loaded at import time. The settings are resolved once, in `create_app` (from
the `KB_*` environment when none are given), and everything reads that one object: the
middleware is given it, routes reach it on `app.state` through server/deps.py. The
knowledge base (index and embedder) is opened once when the app starts, held by the
reloader (which swaps in new builds, see server/reload.py) on `app.state` with the
templates and the recorder of questions and votes (closed when the app stops).
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack, asynccontextmanager
from typing import AsyncIterator

from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from kb.events import Events
from kb.insights import Recorder
from kb.insights.service import Insights
from kb.llm import LLM
from kb.settings import Settings

from . import surfaces
from .accepting import settle_accepts
from .channels import Channel, ChannelPlugin, registry
from .error_handler import install_error_handler
from .harvesting import harvest_every
from .metrics import Metrics, RequestMetrics, State
from .middleware import ALLOWED_HEADERS, APICors, PinBuild, RateLimit, RequestLimits, SecurityHeaders
from .ratelimit import ANSWER_VOTE_LIMIT, SESSION_LIMIT, SIGN_IN_LIMIT, VOTE_LIMIT, ClientLimit
from .refit import Refit
from .reload import Reloader
from .rendering.templates import STATIC_DIR, create_templates
from .routes import ROUTERS, docs
from .settings import ServerSettings
from .syncing import sync_every
from .written import Written

__all__ = ["create_app"]

log = logging.getLogger("kb.server")

DESCRIPTION = """\
Search the FAQ documents this server indexes, in Chinese or English,
and ask questions answered from them. Errors come back as
`{"ok": false, "error": "...", "status": N}` with the same status code.
"""


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for these settings (`None`: read `KB_*` from the environment, as `kb serve` has uvicorn do);
    the library's settings alone get the server's defaults (`ServerSettings.of`)."""
    resolved = ServerSettings.of(settings) if settings is not None else ServerSettings.from_env()
    app = FastAPI(
        title=resolved.site_name or "FAQ knowledge base",  # the pages name the site after the index served
        summary="Bilingual FAQ search and chat",
        description=DESCRIPTION,
        version="1.0",
        lifespan=_lifespan,
        docs_url=None,  # served from this server's own copies of the assets: server/routes/docs.py
        redoc_url=None,
    )
    app.state.settings = resolved
    app.state.metrics = Metrics()
    app.state.templates = create_templates(
        c.plugin.templates for c in registry.CHANNELS if c.plugin and c.plugin.templates
    )
    app.state.sign_in_limit = ClientLimit(*SIGN_IN_LIMIT)
    app.state.vote_limit = ClientLimit(*VOTE_LIMIT)
    app.state.answer_vote_limit = ClientLimit(*ANSWER_VOTE_LIMIT)
    app.state.session_limit = ClientLimit(*SESSION_LIMIT)
    app.mount(docs.ASSETS_URL, docs.assets(), name="api-docs")  # before /static, which would take its paths
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in ROUTERS:
        _docstrings_as_summaries(router)
        app.include_router(router)
    app.state.channel_plugins = _mount_channels(app, resolved)
    install_error_handler(app)
    _add_middleware(app, resolved)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """What runs while the app serves: the insights, the reloader and the channels' tasks, closed in turn at the end."""
    settings: ServerSettings = app.state.settings
    llm = _open(app, settings)
    for channel in registry.CHANNELS:
        if channel.status is not None:
            log.info("%s", channel.status(settings))
    surfaces.log_status(settings)
    stack = AsyncExitStack()
    for plugin in app.state.channel_plugins:
        await plugin.start(app, stack)
    tasks = _background(settings, app.state.reloader)
    tasks.append(asyncio.create_task(_settle(app)))
    try:
        yield
    finally:
        await stack.aclose()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # a sync's or harvest's process killed and reaped
        await app.state.reloader.settle()  # a read the watch began ends before the database closes under it
        await app.state.refit.wait()  # a refit writing a build finishes it
        app.state.recorder.close()
        app.state.reloader.close()
        if llm is not None:
            llm.close()


def _open(app: FastAPI, settings: ServerSettings) -> LLM | None:
    """The recorder, the events, the reloader (which opens the index) and what rebuilds it, on `app.state`; the LLM."""
    llm = LLM(settings) if LLM.configured(settings) else None
    app.state.recorder = Recorder.open(
        settings, frozenset(c.name for c in registry.CHANNELS if c.keeps_chat_ids(settings))
    )
    # What is asked and voted, to the insights and the metrics.
    app.state.events = Events([app.state.recorder.hear, app.state.metrics.hear])
    app.state.reloader = Reloader(settings, llm, app.state.recorder.store, points=registry.points())
    app.state.refit = Refit(app.state.reloader)
    app.state.written = Written(app.state.reloader)
    app.state.metrics.watch(State(lambda: app.state.reloader, lambda: app.state.recorder))
    return llm


async def _settle(app: FastAPI) -> None:
    """Start-up, in the background: what a stop cut short of an accept or a written answer's build, settled."""
    insights = app.state.insights = getattr(app.state, "insights", None) or Insights(app.state.recorder)
    try:
        await settle_accepts(insights, app.state.written, app.state.reloader)
    except Exception as exc:  # the server serves the build it has; the next change builds the file
        log.warning("settling the written answers at start-up failed: %s: %s", type(exc).__name__, exc)


def _background(settings: ServerSettings, reloader: Reloader) -> list[asyncio.Task[None]]:
    """The tasks the settings ask for: watching for a new index, syncing the sources, harvesting the tracker."""
    tasks = []
    if settings.reload_interval:
        tasks.append(asyncio.create_task(reloader.watch(settings.reload_interval)))
    if settings.sync_interval:
        tasks.append(asyncio.create_task(sync_every(settings, reloader)))
    if settings.harvest_interval and settings.harvest_repo_list:
        tasks.append(asyncio.create_task(harvest_every(settings)))
    return tasks


def _add_middleware(app: FastAPI, settings: ServerSettings) -> None:
    """Outermost last: security headers on everything; then the count of responses; then the build pin; then CORS
    (the API's, and the cross-site channels', which send a token), so a 429 or 413 from the two limits reaches the
    widget's page with its CORS headers."""
    cross_site = [c for c in registry.CHANNELS if c.cross_site]
    app.add_middleware(RequestLimits, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(RateLimit, settings=settings)
    app.add_middleware(
        APICors,
        origins=settings.origins,
        prefix=tuple(c.prefix for c in cross_site),
        headers=(*ALLOWED_HEADERS, "Authorization", *(h for c in cross_site for h in c.headers)),
        exposed=tuple(h for c in cross_site for h in c.exposed),
    )
    app.add_middleware(APICors, origins=settings.origins)
    app.add_middleware(PinBuild)
    app.add_middleware(RequestMetrics, metrics=app.state.metrics)
    app.add_middleware(SecurityHeaders)


def _mount_channels(app: FastAPI, settings: ServerSettings) -> list[ChannelPlugin]:
    """The plugins of the channels that are on: each one's state installed and its routes included. Each channel that
    is off: its paths answer 404 saying which settings turn it on, and none of its routes are imported."""
    mounted = []
    for channel in registry.CHANNELS:
        if channel.plugin is None:
            continue
        if not channel.on(settings):
            _answer_off(app, channel)
            continue
        mounted.append(channel.plugin)
        channel.plugin.install(app, settings)
        router = channel.plugin.router()
        if router is not None:
            _docstrings_as_summaries(router)
            app.include_router(router)
    return mounted


def _answer_off(app: FastAPI, channel: Channel) -> None:
    """Every path under the channel's prefix (or the path itself) answers 404 with its `off` message."""

    async def off() -> None:
        raise HTTPException(404, channel.off)

    path = channel.prefix + "{rest:path}" if channel.prefix.endswith("/") else channel.prefix
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    app.add_api_route(
        path, off, methods=methods, include_in_schema=False, name=f"{channel.name}-off", response_model=None
    )


def _docstrings_as_summaries(router: APIRouter) -> None:
    """Each route's one-line docstring is its OpenAPI summary (FastAPI would use the name)."""
    for route in router.routes:
        if isinstance(route, APIRoute) and route.endpoint.__doc__:
            doc = route.endpoint.__doc__.strip()
            route.summary = route.summary or doc.splitlines()[0]
            if route.description.strip() == doc:
                route.description = ""
