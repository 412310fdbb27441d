"""The hostile FAQ (tests/data/hostile/) in real Chromium: no payload runs on the pages or in the widget.

Every payload sets `window.__xss` or opens a dialog if it runs. The pages are opened as
served (entries, search results rendered by the server and by the page's script from
`answer_html`, the chat answering through its script), and the widget is opened on
another site's page that has no Content-Security-Policy of its own, so nothing but the
widget's own care stands between an answer and the host page. The tab fails the test on
any dialog, script error or console error (a CSP violation is one).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

import pytest

from kb.settings import Settings
from tests.support.browser import DESKTOP, HostSite, Page, load
from tests.support.hostile import HOSTILE_QUERY

NOTHING_RAN = "() => window.__xss === undefined"


@pytest.fixture(scope="module")
def sites(hostile_settings: Settings, serve: Callable[[Any], Any]) -> tuple[HostSite, str]:
    """(a host site that embeds the widget, the FAQ server on the hostile index)."""
    from server import create_app

    host = HostSite(serve)
    host.kb_url = serve(create_app(hostile_settings.with_(allowed_origins=host.url))).url
    return host, host.kb_url


@pytest.fixture
def tab(browser: Any) -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def open_tab(base_url: str) -> Page:
        opened.append(Page(browser, base_url, viewport=DESKTOP, locale="en-US"))
        return opened[-1]

    yield open_tab
    for page in opened:
        page.close()  # fails the test on a dialog, a page error or a console error


def entry_ids(hostile_settings: Settings) -> list[str]:
    lines = (hostile_settings.index_dir / "entries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines]


def test_entry_pages_run_nothing(
    tab: Callable[..., Page], sites: tuple[HostSite, str], hostile_settings: Settings
) -> None:
    _, kb_url = sites
    t = tab(kb_url)
    for entry_id in entry_ids(hostile_settings):
        t.goto(f"/entries/{entry_id}")
        t.page.wait_for_load_state("load")
        assert t.page.evaluate(NOTHING_RAN), entry_id
        assert t.page.locator(".entry-answer img, .entry-answer svg, .entry-answer iframe").count() == 0
        assert t.page.locator("a[href^='javascript' i], a[href^='data' i]").count() == 0
        assert "window.__xss" in t.page.locator("main").inner_text(), "the payloads are shown as text"


def test_search_results_rendered_by_the_page_script_run_nothing(
    tab: Callable[..., Page], sites: tuple[HostSite, str]
) -> None:
    _, kb_url = sites
    t = tab(kb_url)
    page = t.page
    t.goto("/search?" + urlencode({"q": HOSTILE_QUERY}))
    assert page.locator("#q").input_value() == HOSTILE_QUERY
    page.locator("#q").fill("")
    page.locator("#q").press_sequentially("resume training <img src=x onerror=alert(9)>", delay=10)
    page.wait_for_function("() => document.querySelectorAll('.result .result-answer').length >= 1")
    page.wait_for_timeout(300)
    assert page.evaluate(NOTHING_RAN)
    answers = page.locator(".result .result-answer")
    assert answers.locator("img, svg, iframe, script").count() == 0
    assert "<script>window.__xss = 'answer-script'</script>" in "".join(answers.all_inner_texts())


def test_the_chat_page_runs_nothing(tab: Callable[..., Page], sites: tuple[HostSite, str]) -> None:
    _, kb_url = sites
    t = tab(kb_url)
    page = t.page
    t.goto("/chat")
    page.fill("#message", HOSTILE_QUERY)
    page.press("#message", "Enter")
    page.wait_for_selector(".turn.bot .answer")
    page.wait_for_timeout(300)
    assert page.evaluate(NOTHING_RAN)
    assert page.locator(".turn.user").first.inner_text().strip() == HOSTILE_QUERY
    assert page.locator(".turn.bot .answer").locator("img, svg, iframe, script").count() == 0
    assert "window.__xss = 'answer-img'" in page.locator(".turn.bot .answer").inner_text()


def test_the_widget_on_another_site_runs_nothing_and_sends_nothing_of_the_host(
    tab: Callable[..., Page], sites: tuple[HostSite, str], browser: Any
) -> None:
    host, kb_url = sites
    t = tab(host.url)
    t.context.add_cookies([{"name": "host_session", "value": "host-secret-cookie", "url": host.url}])
    sent: list[Any] = []
    t.page.on("request", lambda request: sent.append(request) if request.url.startswith(kb_url) else None)
    t.goto("/?lang=en&token=host-secret-token")
    page = load(t)
    page.locator(".launcher").click()
    page.locator("#kbw-q").fill(HOSTILE_QUERY)
    page.locator("#kbw-q").press("Enter")
    page.wait_for_selector(".msg.bot .answer")
    page.wait_for_timeout(300)
    assert page.evaluate(NOTHING_RAN)
    answer = page.locator(".msg.bot .answer")
    assert answer.locator("img, svg, iframe, script, button").count() == 0
    assert "<script>window.__xss = 'answer-script'</script>" in answer.inner_text()
    assert page.locator(".msg.user").inner_text() == HOSTILE_QUERY
    # What the FAQ server learns of the host page through the widget's calls: the page's
    # origin and the question asked; no cookie, no path or query of the page. (Both sites
    # are on 127.0.0.1, where cookies ignore the port: the browser does send the host's
    # cookie with the <script> tag that loads widget.js, as it would to any same-host URL.)
    calls = [request for request in sent if request.url.startswith(f"{kb_url}/api/")]
    chat = [request for request in calls if request.url.startswith(f"{kb_url}/api/chat")]
    assert len(chat) == 1 and len(calls) >= 2  # the config, the question
    assert json.loads(chat[0].post_data) == {"message": HOSTILE_QUERY, "history": []}
    for request in calls:
        headers = request.all_headers()
        assert "cookie" not in headers, request.url
        assert not any("host-secret" in value for value in headers.values()), headers
        assert headers.get("referer", f"{host.url}/") == f"{host.url}/"
