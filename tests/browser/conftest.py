"""The browser tests' fixtures: one headless Chromium a module, the shipped FAQ served on loopback, tabs.

Every test here is marked `browser` (tests/conftest.py), so `make test-fast` leaves them out.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from kb.settings import Settings


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's), launched once a module; each test opens contexts of its own.

    Not once a session: playwright's sync API runs an event loop in this thread while it is
    open, and the tests after a browser module call `asyncio.run`."""
    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, skip_without_chromium, sync_api

    skip_without_chromium()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def base_url(settings: Settings, serve: Callable[[Any], Any]) -> str:
    """The app on the shipped FAQs, on a loopback port (a module may serve another app under this name)."""
    from server import create_app

    return serve(create_app(settings)).url


@pytest.fixture
def tab(browser: Any, base_url: str) -> Iterator[Callable[..., Any]]:
    """Opens tabs on `base_url`; each is closed after the test, failing it on a console error, page error or dialog."""
    from tests.support.browser import Page

    opened: list[Page] = []

    def open_tab(**context: Any) -> Page:
        opened.append(Page(browser, base_url, **context))
        return opened[-1]

    yield open_tab
    for page in opened:
        page.close()


@pytest.fixture
def admin_tab(browser: Any, live: tuple[str, Any]) -> Iterator[Callable[..., Any]]:
    """Opens tabs on the module's own app (its `live` fixture: the URL and the app), for tests that sign in to the
    insights page; each test starts with the sign-in limit's full allowance, as a new client would
    (tests/server/test_ratelimit.py tests the limit). Closed after the test as `tab`'s are."""
    from server.ratelimit import SIGN_IN_LIMIT, ClientLimit
    from tests.support.browser import Page

    live[1].state.sign_in_limit = ClientLimit(*SIGN_IN_LIMIT)
    opened: list[Page] = []

    def open_tab(**context: Any) -> Page:
        opened.append(Page(browser, live[0], **context))
        return opened[-1]

    yield open_tab
    for page in opened:
        page.close()
