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
from contextlib import AsyncExitStack, asynccontextmanager
from typing import AsyncIterator

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route

from kb.events import Events
from kb.insights import Recorder
from kb.llm import LLM
from kb.settings import Settings

from . import surfaces
from .dingtalk import DingTalkBot
from .errors import install_error_handler
from .feishu import FeishuBot
from .mcp_http import MCP_PATH, MCPEndpoint
from .mcp_tools import create_mcp
from .metrics import Metrics, RequestMetrics, State
from .middleware import AGENT_HEADERS, APICors, PinBuild, RateLimit, RequestLimits, SecurityHeaders
from .ratelimit import ANSWER_VOTE_LIMIT, SESSION_LIMIT, SIGN_IN_LIMIT, VOTE_LIMIT, ClientLimit, LogBudget
from .refit import Refit
from .reload import Reloader
from .rendering.templates import STATIC_DIR, create_templates
from .routes import ROUTERS, dingtalk, docs, feishu, slack
from .settings import ServerSettings

__all__ = ["create_app"]

DESCRIPTION = """\
Search the FAQ documents this server indexes, in Chinese or English,
and ask questions answered from them. Errors come back as
`{"ok": false, "error": "...", "status": N}` with the same status code.
"""


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for these settings (`None`: read `KB_*` from the environment, as `kb serve` has uvicorn do);
    the library's settings alone get the server's defaults (`ServerSettings.of`)."""
    resolved = ServerSettings.of(settings) if settings is not None else ServerSettings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        llm = LLM(resolved) if LLM.configured(resolved) else None
        app.state.recorder = Recorder.open(resolved)
        # What is asked and voted, to the insights and the metrics.
        app.state.events = Events([app.state.recorder.hear, metrics.hear])
        app.state.reloader = Reloader(resolved, llm, app.state.recorder.store)
        app.state.refit = Refit(app.state.reloader)
        metrics.watch(State(lambda: app.state.reloader, lambda: app.state.recorder))
        for channel in (slack, feishu, dingtalk, surfaces):
            channel.log_status(resolved)
        app.state.feishu = FeishuBot.of(resolved)  # lark-oapi is imported only when the bot is on
        app.state.dingtalk = DingTalkBot.of(resolved)
        stack = AsyncExitStack()
        await mcp.start(create_mcp(lambda: app.state.reloader.served.kb, app.state.events), stack)
        watch = (
            asyncio.create_task(app.state.reloader.watch(resolved.reload_interval))
            if resolved.reload_interval
            else None
        )
        try:
            yield
        finally:
            await stack.aclose()
            if watch is not None:
                watch.cancel()
            await app.state.refit.wait()  # a refit writing a build finishes it
            app.state.recorder.close()
            app.state.reloader.close()
            if llm is not None:
                llm.close()

    app = FastAPI(
        title=resolved.site_name or "FAQ knowledge base",  # the pages name the site after the index served
        summary="Bilingual FAQ search and chat",
        description=DESCRIPTION,
        version="1.0",
        lifespan=lifespan,
        docs_url=None,  # served from this server's own copies of the assets: server/routes/docs.py
        redoc_url=None,
    )
    app.state.settings = resolved
    app.state.metrics = metrics = Metrics()
    mcp = MCPEndpoint(resolved)
    app.state.templates = create_templates()
    app.state.slack_refused_log = LogBudget()
    app.state.slack_response_urls = slack.ResponseUrls(resolved.slack_response_base)
    app.state.sign_in_limit = ClientLimit(*SIGN_IN_LIMIT)
    app.state.vote_limit = ClientLimit(*VOTE_LIMIT)
    app.state.answer_vote_limit = ClientLimit(*ANSWER_VOTE_LIMIT)
    app.state.session_limit = ClientLimit(*SESSION_LIMIT)
    app.mount(docs.ASSETS_URL, docs.assets(), name="api-docs")  # before /static, which would take its paths
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in ROUTERS:
        _docstrings_as_summaries(router)
        app.include_router(router)
    app.router.routes.append(Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    install_error_handler(app)
    # Outermost last: security headers on everything; then the count of responses; then the
    # build pin; then CORS (the API's, and the agents' and chat front ends', which send a token),
    # so a 429 or 413 from the two limits reaches the widget's page with its CORS headers.
    app.add_middleware(RequestLimits, max_body_bytes=resolved.max_body_bytes)
    app.add_middleware(RateLimit, settings=resolved)
    app.add_middleware(APICors, origins=resolved.origins, prefix=(MCP_PATH, "/v1/"), headers=AGENT_HEADERS)
    app.add_middleware(APICors, origins=resolved.origins)
    app.add_middleware(PinBuild)
    app.add_middleware(RequestMetrics, metrics=metrics)
    app.add_middleware(SecurityHeaders)
    return app


def _docstrings_as_summaries(router: APIRouter) -> None:
    """Each route's one-line docstring is its OpenAPI summary (FastAPI would use the name)."""
    for route in router.routes:
        if isinstance(route, APIRoute) and route.endpoint.__doc__:
            doc = route.endpoint.__doc__.strip()
            route.summary = route.summary or doc.splitlines()[0]
            if route.description.strip() == doc:
                route.description = ""
