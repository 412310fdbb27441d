"""The /insights page in a real browser (headless Chromium against uvicorn on loopback): signing in, the page in
both languages and schemes (screenshots), every column and chart label shown, votes cast with the search and
chat pages' buttons reaching the store, a gap dismissed and restored."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from kb.insights import InsightsStore, Question, store_path
from kb.settings import Settings
from server import create_app
from server.channels import CHANNELS
from tests.support.browser import DESKTOP, PHONE, Page, sign_in
from tests.support.seeded_insights import TOKEN, seed


@pytest.fixture(scope="module")
def live(insights_settings: Settings, serve: Callable[[Any], Any]) -> tuple[str, Any]:
    app = create_app(insights_settings)
    return serve(app).url, app


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_signing_in_and_the_insights_page_in_a_browser(
    admin_tab: Callable[..., Any], artifacts: Path, scheme: str
) -> None:
    phone = scheme == "dark"
    t = admin_tab(viewport=PHONE if phone else DESKTOP, locale="zh-CN" if phone else "en-US", color_scheme=scheme)
    page = t.page
    response = t.goto("/insights")
    assert response.status == 401 and page.locator("#token").is_visible()
    page.fill("#token", "not it")
    page.press("#token", "Enter")
    page.wait_for_selector(".notice.warn")
    page.fill("#token", TOKEN)
    page.press("#token", "Enter")
    page.wait_for_url("**/insights?since=30d")
    # The sign-in form comes with 401, which the browser reports; nothing else may go wrong.
    assert len(t.problems) == 2 and all("status of 401" in p for p in t.problems), t.problems
    t.problems.clear()
    assert page.locator(".stat-cards li").count() == 4
    assert page.locator("svg.chart").count() == 2 and page.locator("svg.chart rect").count() > 20
    first_gap = page.locator("#gaps tbody tr").first
    assert first_gap.locator(".gap-label").inner_text() == "如何续训"
    first_gap.locator("details.draft summary").click()
    assert first_gap.locator("details.draft pre").first.inner_text().startswith("## 如何续训？")
    fill = page.locator("svg.chart rect").first.evaluate("r => getComputedStyle(r).fill")
    assert fill not in ("rgb(0, 0, 0)", "none"), "series colours come from insights.css"
    if phone:
        t.no_horizontal_scroll()
    t.screenshot(artifacts / ("insights-phone-dark.png" if phone else "insights-desktop.png"))
    page.select_option("#since", "7d")
    page.locator(".window-form button").click()
    page.wait_for_url("**/insights?since=7d")


@pytest.mark.parametrize(("locale", "lang", "scheme"), [("en-US", "en", "light"), ("zh-CN", "zh", "dark")])
def test_every_registered_channel_has_a_coloured_swatch_and_a_label_in_the_page_language(
    admin_tab: Callable[..., Any], locale: str, lang: str, scheme: str
) -> None:
    t = admin_tab(locale=locale, color_scheme=scheme)
    page = sign_in(t, TOKEN)
    legend = page.locator("ul.legend").first  # the chart of questions by channel
    shown = legend.evaluate(
        """ul => Object.fromEntries([...ul.querySelectorAll("li")].map(li => [
            [...li.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join("").trim(),
            getComputedStyle(li.querySelector(".swatch")).backgroundColor,
        ]))"""
    )
    for channel in CHANNELS:
        colour = channel.colour if scheme == "light" else channel.colour_dark
        red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        assert shown.get(channel.label(lang)) == f"rgb({red}, {green}, {blue})", (channel.name, shown)


def stored(live: tuple[str, Any], sql: str) -> list[tuple[Any, ...]]:
    app = live[1]
    assert app.state.recorder.flush()
    with sqlite3.connect(app.state.recorder.store.path) as db:
        return db.execute(sql).fetchall()


def test_votes_from_the_search_and_chat_pages_reach_the_store(
    admin_tab: Callable[..., Any], live: tuple[str, Any], artifacts: Path
) -> None:
    from tests.support.browser import type_query

    t = admin_tab(viewport=DESKTOP, locale="en-US")
    page = t.page
    t.goto("/")
    type_query(page, "slime resume training from a checkpoint")
    first = page.locator(".result").first
    entry = first.get_attribute("id")[2:]
    first.locator(".votes [data-vote=down]").click()
    first.locator(".vote-why").wait_for()
    first.locator(".vote-reason", has_text="Out of date").click()
    first.locator(".vote-comment input").fill("the flag is --ckpt-step now")
    t.screenshot(artifacts / "search-vote-desktop.png")
    first.locator(".vote-why button").click()
    first.locator(".vote-done").wait_for()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not stored(live, "SELECT 1 FROM votes WHERE comment IS NOT NULL"):
        time.sleep(0.1)
    votes = stored(
        live,
        "SELECT entry_id, question, helpful, channel, reason, comment FROM votes WHERE channel = 'web' "
        "AND question = 'slime resume training from a checkpoint'",
    )
    assert votes == [
        (entry, "slime resume training from a checkpoint", 0, "web", "outdated", "the flag is --ckpt-step now")
    ]
    typed = stored(live, "SELECT text FROM questions WHERE channel = 'web' AND text LIKE 'slime resume%'")
    assert typed == [("slime resume training from a checkpoint",)], "typing is recorded once, as the finished question"

    t.goto("/chat")
    page.fill("#message", "How do I convert Megatron checkpoints to HF in ChatLearn?")
    page.press("#message", "Enter")
    page.wait_for_selector(".turn.bot .votes [data-vote=up]")
    page.locator(".turn.bot .votes [data-vote=up]").click()
    page.locator(".turn.bot .vote-done").wait_for()
    deadline = time.monotonic() + 10
    query = "SELECT helpful, channel FROM votes WHERE question = 'How do I convert Megatron checkpoints to HF in ChatLearn?'"
    while time.monotonic() < deadline and not stored(live, query):
        time.sleep(0.1)
    assert stored(live, query) == [(1, "web")]


def labels_inside_their_charts(page: Any) -> list[str]:
    """Every axis label of every chart that reaches outside its chart's viewBox."""
    return page.evaluate("""() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
        const box = svg.viewBox.baseVal;
        return [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBBox()])
          .filter(([, b]) => b.x < 0 || b.y < 0 || b.x + b.width > box.width || b.y + b.height > box.height)
          .map(([text, b]) => `${text}: ${Math.round(b.x)}..${Math.round(b.x + b.width)} x ${Math.round(b.y)}..${Math.round(b.y + b.height)}`);
    })""")


@pytest.mark.parametrize(("width", "name"), [(1280, "desktop"), (375, "phone")])
def test_every_column_and_every_chart_label_shows(
    admin_tab: Callable[..., Any], artifacts: Path, width: int, name: str
) -> None:
    t = admin_tab(viewport={"width": width, "height": 900}, locale="en-US")
    page = sign_in(t, TOKEN)
    t.no_horizontal_scroll()
    hidden = page.evaluate("""() => [...document.querySelectorAll('.itable td, .itable th')]
        .filter(c => c.closest('thead') === null && (c.getClientRects().length === 0
                     || c.getBoundingClientRect().right > c.closest('.table-wrap').getBoundingClientRect().right + 1))
        .map(c => c.dataset.label || c.textContent.trim().slice(0, 30))""")
    assert hidden == [], "cells cut off or hidden"
    if width < 600:
        labels = (
            page.locator("#gaps tbody tr")
            .first.locator("td[data-label]")
            .evaluate_all("cells => cells.slice(1).map(c => getComputedStyle(c, '::before').content)")
        )
        assert labels == ['"Entry offered "', '"Asked "', '"Languages "', '"Channels "', '"Last asked "'], (
            "each value named by its column"
        )
    assert labels_inside_their_charts(page) == []
    t.goto("/insights?since=90d")  # the narrowest bars: the last day's label comes closest to the edge
    assert labels_inside_their_charts(page) == []
    doubtful = page.locator("#doubtful tbody tr")
    assert doubtful.count() >= 3
    assert page.locator("#doubtful thead th").all_text_contents()[2:] == ["Asked again", "Not helpful", "Close call"]
    t.screenshot(artifacts / f"insights-{name}.png")


def test_a_gap_is_dismissed_for_good_and_can_be_restored(
    browser: Any, settings: Settings, entry_ids: list[str], tmp_path: Path, serve: Callable[[Any], Any], artifacts: Path
) -> None:
    (tmp_path / "index").symlink_to(settings.index_dir)
    seed(tmp_path, entry_ids, time.time())
    store = InsightsStore(store_path(tmp_path))
    store.questions.add(
        [
            Question("what's the weather in Beijing", "en", "web", False, None, None, 10.0, asked_at=time.time() - 90),
            Question("北京天气怎么样", "zh", "widget", False, None, None, 10.0, asked_at=time.time() - 80),
        ]
    )
    store.close()
    mine = settings.with_(data_dir=tmp_path, admin_token=TOKEN)
    t = Page(browser, serve(create_app(mine)).url, viewport={"width": 1280, "height": 900}, locale="en-US")
    page = sign_in(t, TOKEN)
    weather = page.locator("#gaps tbody tr", has_text="Beijing")
    assert weather.count() == 1 and "北京天气怎么样" in weather.inner_text(), "one topic in both languages"
    weather.locator("form.gap-action button").click()
    page.wait_for_url("**/insights?since=7d#gaps")
    assert page.locator("#gaps tbody tr", has_text="Beijing").count() == 0
    assert page.locator("details.dismissed summary").inner_text() == "Dismissed topics (1)"
    t.screenshot(artifacts / "insights-dismissed-desktop.png")
    t.close()

    # Another server on the same data directory, as after a restart: still dismissed.
    again = Page(browser, serve(create_app(mine)).url, viewport={"width": 375, "height": 800}, locale="en-US")
    page = sign_in(again, TOKEN)
    assert page.locator("#gaps tbody tr", has_text="Beijing").count() == 0
    page.locator("details.dismissed summary").click()
    again.screenshot(artifacts / "insights-dismissed-phone.png")
    page.locator("details.dismissed form.gap-action button").click()
    page.wait_for_url("**/insights?since=7d#gaps")
    assert page.locator("#gaps tbody tr", has_text="Beijing").count() == 1
    assert page.locator("details.dismissed").count() == 0
    again.close()
