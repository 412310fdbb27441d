"""What the browser tests share: Chromium's path and flags, viewport sizes, a checked tab, typing a query,
and a host site that embeds the widget from another origin.

Importing this module skips the importing test module when playwright is missing; a test that launches
Chromium (the `browser` fixture) skips when Chromium is missing. Not at import: a module skipped while it is
collected counts as skipped even where `-m "not browser"` deselects its tests (`make test-fast`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


sync_api = pytest.importorskip("playwright.sync_api")


def skip_without_chromium() -> None:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed")


def type_query(page: Any, query: str) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("/")
    box = page.locator("#q")
    assert box.evaluate("node => node === document.activeElement")
    box.press_sequentially(query, delay=15)
    page.wait_for_url("**/search?q=*")
    # Done when the results (or "no answer" with the nearest, or "none found") are drawn for this query.
    page.wait_for_function(
        "q => new URLSearchParams(location.search).get('q') === q"
        " && !document.querySelector('[data-status]').textContent.includes('…')"
        " && (document.querySelector('#results > .result') || !document.querySelector('[data-empty]').hidden)",
        arg=query,
    )


class Page:
    """A browser tab that records console errors, page errors and dialogs (none are expected)."""

    def __init__(self, browser: Any, base_url: str, **context: Any):
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.base_url = base_url
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))

    def goto(self, path: str) -> Any:
        return self.page.goto(self.base_url + path)

    def screenshot(self, path: Path) -> None:
        # From the top: a full-page capture of a scrolled page draws the sticky header mid-page.
        self.page.evaluate("() => window.scrollTo(0, 0)")
        self.page.wait_for_timeout(150)
        self.page.screenshot(path=str(path), full_page=True)

    def screenshot_bottom(self, path: Path) -> None:
        # The chat keeps its box stuck to the bottom of the window: capture the window as seen.
        self.page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        self.page.wait_for_timeout(400)
        self.page.screenshot(path=str(path))

    def no_horizontal_scroll(self) -> None:
        width, inner = self.page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, f"page is {width}px wide in a {inner}px window"

    def close(self) -> None:
        self.context.close()
        assert self.problems == []


HOST_PAGE = """<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Another project's docs</title>
<link rel="icon" href="data:,">
<script>window.__globalsBefore = Object.keys(window);</script>
<style>
  /* The host's own styles, which must not reach into the widget (nor the widget's into the page). */
  * {{ font-family: Georgia, serif; line-height: 1.9; }}
  body {{ margin: 0; background: #fbfaf7; color: #2b2b2b; }}
  main {{ max-width: 720px; margin: 0 auto; padding: 32px 24px 120px; }}
  h1 {{ font-size: 34px; margin: 0 0 12px; }}
  p {{ font-size: 17px; }}
  button {{ background: orange !important; border: 4px dashed red !important; border-radius: 0 !important; padding: 20px !important; }}
  div {{ padding: 18px !important; }}
  textarea {{ display: none !important; }}
  a {{ color: #0a0 !important; }}
  .toolbar {{ position: fixed; left: 0; right: 0; bottom: 0; height: 48px; z-index: 999999; background: #1f2937;
             color: #fff; display: flex; align-items: center; padding: 0 20px !important; font-size: 14px; }}
</style>
</head>
<body>
<main>
<h1>Trainer documentation</h1>
<p>This page belongs to another site. It loads the FAQ widget from the FAQ server with one script tag,
and its own stylesheet sets fonts, buttons, padding and a fixed toolbar that would all clash with a
widget drawn in the page itself.</p>
<p>Use the button in the corner to ask the FAQ a question about resuming training, memory errors or
checkpoint conversion.</p>
</main>
<div class="toolbar">Host toolbar (z-index 999999)</div>
<script src="{kb}/widget.js" {attributes} defer></script>
</body>
</html>
"""


class HostSite:
    """A static site on its own port that embeds the widget from the FAQ server at `kb_url`."""

    def __init__(self, serve: Callable[[Any], Any]):
        self.kb_url = ""

        async def page(request: Request) -> HTMLResponse:
            attributes = 'data-lang="auto" data-title="Training FAQ"'
            lang = request.query_params.get("lang", "en")
            if request.url.path == "/left":
                attributes = 'data-lang="zh" data-title="训练 FAQ" data-position="left" data-accent="#e11d48"'
            return HTMLResponse(HOST_PAGE.format(kb=self.kb_url, attributes=attributes, lang=lang))

        self.url = serve(Starlette(routes=[Route("/", page), Route("/left", page)])).url


def load(t: Page, path: str = "/") -> Any:
    t.goto(path)
    page = t.page
    page.wait_for_function("() => window.KBWidget && document.querySelector('kb-faq-widget')")
    return page


def sign_in(t: Page, token: str) -> Any:
    """Sign in to /insights with the admin token, as a maintainer types it; the page, signed in."""
    page = t.page
    t.goto("/insights?since=7d")
    page.fill("#token", token)
    page.press("#token", "Enter")
    page.wait_for_url("**/insights?since=7d")
    t.problems[:] = [p for p in t.problems if "status of 401" not in p]  # the sign-in form comes with 401
    return page
