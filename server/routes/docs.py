"""`/docs` and `/redoc`: the API's documentation pages, with Swagger UI and ReDoc served from this server.

Their scripts and styles come from the `fastapi-offline` package (`/static/api-docs/`), not
a CDN, so the pages work on a machine with no internet and load nothing from elsewhere.
Each page has a Content-Security-Policy that allows this server only, plus the one inline
script Swagger UI is started with (by its hash). ReDoc writes its styles into the page as
it renders, so its page also allows inline styles; scripts stay this server's only.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ..rendering.intro import site

__all__ = ["router", "ASSETS_URL", "assets", "policy"]

router = APIRouter(include_in_schema=False)

ASSETS_URL = "/static/api-docs"
_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.DOTALL)
_POLICY = (
    "default-src 'self'; script-src 'self'{scripts}; style-src 'self'{styles}; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)


def assets() -> StaticFiles:
    """Swagger UI's and ReDoc's files, as the `fastapi-offline` package ships them."""
    return StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static")


def policy(html: str, inline_styles: bool = False) -> str:
    """The page's Content-Security-Policy: this server, and the inline scripts and styles of `html` by hash."""
    hashes: dict[str, str] = {"script": "", "style": ""}
    for kind, content in _INLINE.findall(html):
        digest = base64.b64encode(hashlib.sha256(content.encode("utf-8")).digest()).decode()
        hashes[kind] += f" 'sha256-{digest}'"
    styles = " 'unsafe-inline'" if inline_styles else hashes["style"]
    return _POLICY.format(scripts=hashes["script"], styles=styles)


def _name(request: Request) -> str:
    """The site's name, as its pages give it in English (the API's documentation is in English)."""
    served = (request.scope.get("state") or {}).get("served")
    return site(served.kb if served is not None else None, request.app.state.settings, "en").name


def _page(response: HTMLResponse, inline_styles: bool = False) -> HTMLResponse:
    response.headers["Content-Security-Policy"] = policy(bytes(response.body).decode("utf-8"), inline_styles)
    return response


@router.api_route("/docs", methods=["GET", "HEAD"])
async def swagger_ui(request: Request) -> HTMLResponse:
    """The API's operations, to read and try (Swagger UI)."""
    app = request.app
    return _page(
        get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title=f"{_name(request)} · API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
    )


@router.api_route("/redoc", methods=["GET", "HEAD"])
async def redoc(request: Request) -> HTMLResponse:
    """The API's reference on one page (ReDoc)."""
    app = request.app
    return _page(
        get_redoc_html(
            openapi_url=app.openapi_url,
            title=f"{_name(request)} · API reference",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        ),
        inline_styles=True,
    )
