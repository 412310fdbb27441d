"""The chat widget: `/widget.js` for other sites' pages, the `/api/widget-config` it reads, and `/widget-demo`."""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from functools import lru_cache

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from kb.stacktrace import MAX_PASTE_CHARS

from ..deps import InsightsDep, SettingsDep, base_url
from ..rendering.templates import STATIC_DIR, page
from ..schemas import WidgetConfigOut

__all__ = ["router", "script_source", "SCRIPT_MAX_AGE", "FEEDBACK_PATH"]

router = APIRouter(tags=["widget"])

SCRIPT_FILE = STATIC_DIR / "widget.js"
REPLY_FILE = STATIC_DIR / "reply.js"  # the reply's rendering, shared with the chat page
SCRIPT_MAX_AGE = 3600  # seconds; host pages cannot version the URL, so keep it short and revalidate by ETag
FEEDBACK_PATH = "/api/feedback"
DEMO_ATTRIBUTES = 'data-lang="auto" data-title="Training FAQ"'  # the demo's widget and the line it offers to copy


@dataclass(frozen=True)
class _Script:
    raw: bytes
    gzipped: bytes
    etag: str


@lru_cache(maxsize=1)
def _script() -> _Script:
    """The widget script, read and compressed once (on the first request, not at import)."""
    raw = script_source()
    return _Script(raw, gzip.compress(raw, 9, mtime=0), f'W/"{hashlib.sha1(raw).hexdigest()[:16]}"')


def script_source() -> bytes:
    """What `/widget.js` serves: the widget with the chat page's reply rendering, in one function so the
    host page gets one script and no global but `KBWidget`. The rendering's comments (written for its
    readers, not for other sites' visitors) are left out."""
    reply = _without_comments(REPLY_FILE.read_bytes())
    return b"(function () {\n" + reply + b"\n" + SCRIPT_FILE.read_bytes() + b"})();\n"


def _without_comments(source: bytes) -> bytes:
    """`source` without its `/* ... */` comments and the blank lines they leave (reply.js has none in strings)."""
    kept = []
    while (start := source.find(b"/*")) >= 0:
        end = source.index(b"*/", start) + 2
        kept.append(source[:start])
        source = source[end:]
    kept.append(source)
    lines = b"".join(kept).split(b"\n")
    return b"\n".join(line.rstrip() for line in lines if line.strip())


def _accepts_gzip(accept_encoding: str) -> bool:
    for part in accept_encoding.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in (
            "q=0",
            "q=0.0",
            "q=0.00",
            "q=0.000",
        ):
            return True
    return False


@router.api_route("/widget.js", methods=["GET", "HEAD"], include_in_schema=False)
async def widget_script(request: Request) -> Response:
    """The chat widget script: one `<script src=".../widget.js" defer>` tag on any page."""
    script = _script()
    headers = {
        "Cache-Control": f"public, max-age={SCRIPT_MAX_AGE}",
        "ETag": script.etag,
        "Vary": "Accept-Encoding",
        "X-Content-Type-Options": "nosniff",
        # Pages that isolate themselves (Cross-Origin-Embedder-Policy) may still load it.
        "Cross-Origin-Resource-Policy": "cross-origin",
    }
    sent = [tag.strip() for tag in request.headers.get("if-none-match", "").split(",")]
    if script.etag in sent or "*" in sent:
        return Response(status_code=304, headers=headers)
    body = script.raw
    if _accepts_gzip(request.headers.get("accept-encoding", "")):
        body, headers["Content-Encoding"] = script.gzipped, "gzip"
    return Response(body, media_type="text/javascript; charset=utf-8", headers=headers)


@router.get("/api/widget-config", response_model=WidgetConfigOut)
async def widget_config(response: Response, settings: SettingsDep, insights: InsightsDep) -> WidgetConfigOut:
    """What the widget may offer on this server (feedback buttons, the longest question)."""
    response.headers["Cache-Control"] = "no-cache"
    # Votes are taken while the insights store is open (see kb/insights/service.py).
    return WidgetConfigOut(
        feedback=insights.feedback_on, max_message_chars=settings.max_query_chars, max_paste_chars=MAX_PASTE_CHARS
    )


@router.get("/widget-demo", response_class=HTMLResponse, include_in_schema=False)
async def widget_demo(request: Request) -> HTMLResponse:
    """A page with the widget on it, and the line that embeds it: the same tag, attributes and all."""
    root = base_url(request)
    context = {"root": root, "attributes": Markup(DEMO_ATTRIBUTES), "snippet": _snippet(root)}
    return page(request, "widget_demo.html", context)


def _snippet(root: str) -> str:
    return f'<script src="{root}widget.js" {DEMO_ATTRIBUTES} defer></script>'
