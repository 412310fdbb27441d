"""Teaching the knowledge base from /insights in a real browser (headless Chromium against uvicorn on loopback):
a maintainer signs in, opens "Answered by…" under a question people asked, types in the entry picker, chooses
an entry and sees "Linked to …"; the search page then gives that entry first for the question; Undo takes the
link back. Screenshots go to test-artifacts/."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.insights import InsightsStore, Question, store_path
from kb.settings import Settings
from server import create_app
from tests.support.browser import DESKTOP, PHONE, Page, sign_in, type_query

TOKEN = "teach-browser-token-41c9"
BATCH = "roll-ddc4f935"  # 如何设置gradient_accumulation_steps/per_device_train_batch_size
FLAT = "my reward stays flat no matter what I change"  # no entry answers it


@pytest.fixture(scope="module")
def live(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]) -> str:
    data_dir = tmp_path_factory.mktemp("teach-browser-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    now = time.time()
    store.questions.add(
        [
            Question(FLAT, "en", "web", False, None, 0.1, 12.0, asked_at=now - 300),
            Question("如何续训", "zh", "slack", True, "slime-b0ab398d", 0.5, 11.0, asked_at=now - 100),
        ]
    )
    store.close()
    return serve(create_app(settings.with_(data_dir=data_dir, admin_token=TOKEN))).url


@pytest.fixture
def tab(browser: Any, live: str) -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def open_tab(**context: Any) -> Page:
        opened.append(Page(browser, live, **context))
        return opened[-1]

    yield open_tab
    for t in opened:
        t.close()  # no console errors, no page errors


def first_result(t: Page, question: str) -> str:
    t.goto("/")
    type_query(t.page, question)
    return str(t.page.locator(".result").first.get_attribute("id"))[2:]


def test_answered_by_links_a_question_from_the_insights_page(
    tab: Callable[..., Page], live: str, artifacts: Path
) -> None:
    t = tab(viewport=DESKTOP, locale="en-US")
    page = sign_in(t, TOKEN)
    item = page.locator("#recent li", has=page.locator("q", has_text=FLAT))
    assert item.locator(".teach-pick summary").inner_text() == "Answered by…"
    item.locator(".teach-pick summary").click()
    search = item.locator(".teach-search")
    assert search.evaluate("node => node === document.activeElement"), "the picker's search box has the focus"
    item.locator(".teach-choice").first.wait_for()  # at once: the entries nearest the question
    assert not item.locator(".teach-id").is_visible(), "the entry id field is for the page without JavaScript"
    search.press_sequentially("gradient accumulation batch size", delay=20)
    choice = item.locator(f'.teach-choice[data-id="{BATCH}"]')
    choice.wait_for()
    entry_question = choice.locator(".teach-choice-q").inner_text()
    assert "gradient_accumulation_steps" in entry_question
    t.screenshot(artifacts / "insights-teach-picker-desktop.png")
    choice.click()
    page.wait_for_url("**/insights?since=7d#recent")

    item = page.locator("#recent li", has=page.locator("q", has_text=FLAT))
    state = item.locator(".teach-state")
    assert state.inner_text() == f"Linked to {entry_question}"
    assert state.locator("a").get_attribute("href") == f"/entries/{BATCH}"
    assert page.locator("#links tbody tr.active", has_text=FLAT).count() == 1
    item.scroll_into_view_if_needed()
    t.screenshot(artifacts / "insights-teach-linked-desktop.png")

    assert first_result(t, FLAT) == BATCH, "the question searched again finds the entry it was linked to"
    t.goto(f"/entries/{BATCH}")
    assert page.locator("#also-asked", has_text=FLAT).count() == 1

    t.goto("/insights?since=7d")  # signed in still
    item = page.locator("#recent li", has=page.locator("q", has_text=FLAT))
    item.locator(".teach-undo button").click()
    page.wait_for_url("**/insights?since=7d#recent")
    item = page.locator("#recent li", has=page.locator("q", has_text=FLAT))
    assert item.locator(".teach-pick summary").inner_text() == "Answered by…"
    assert page.locator("#links tbody tr.removed", has_text=FLAT).count() == 1
    assert first_result(t, FLAT) != BATCH, "undone: searched as before"


def test_not_covered_and_the_picker_on_a_phone(tab: Callable[..., Page], live: str, artifacts: Path) -> None:
    t = tab(viewport=PHONE, locale="zh-CN", color_scheme="dark")
    page = sign_in(t, TOKEN)
    item = page.locator("#recent li", has=page.locator("q", has_text="如何续训"))
    item.locator(".teach-pick summary").click()
    item.locator(".teach-choice").first.wait_for()
    t.no_horizontal_scroll()
    page.keyboard.press("Escape")
    assert not item.locator(".teach-form").is_visible()
    item.locator(".teach-nc button").click()
    page.wait_for_url("**/insights?since=7d#recent")
    item = page.locator("#recent li", has=page.locator("q", has_text="如何续训"))
    assert item.locator(".teach-state").inner_text() == "已标记为 FAQ 没有涵盖"
    t.no_horizontal_scroll()
    item.scroll_into_view_if_needed()
    t.screenshot(artifacts / "insights-teach-phone-dark.png")
    answered = httpx.get(f"{live}/api/search", params={"q": "如何续训"}).json()["answered"]
    assert answered is False
    item.locator(".teach-undo button").click()
    page.wait_for_url("**/insights?since=7d#recent")
    assert httpx.get(f"{live}/api/search", params={"q": "如何续训"}).json()["answered"] is True

    # The recent questions' search box filters as one types.
    page.fill("#recent-find", "reward")
    assert page.locator("#recent li:visible").count() == 1
    assert page.locator("#recent li:visible q").inner_text() == FLAT
    page.fill("#recent-find", "no question says this")
    assert page.locator("[data-recent-none]").is_visible()
