""" "See also" in a real browser (headless Chromium, uvicorn on loopback, drafts in the server's insights database): the
search page while typing and the chat page show a question the FAQ does not cover the resolved thread near it, in
English and Chinese, marked as not the FAQ's answer, and nothing once the question is one the FAQ answers; the widget,
on a page of another origin, shows the same. Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from kb.harvest import Draft
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from tests.support.browser import DESKTOP, HostSite, Page, load, type_query

THREAD = "https://github.com/THUDM/slime/issues/11"
TITLE = "How do I run slime on Huawei Ascend NPUs?"
NOT_COVERED = "How to run slime on NPU"
ANSWERED = "how do I resume training in slime?"
WORDS = {
    "en": ("A resolved issue that may help", "From the project's tracker: not the FAQ's answer."),
    "zh": ("可能有帮助的已解决 issue", "来自项目的 issue 区，不是 FAQ 的答案。"),
}


@pytest.fixture(scope="module")
def sites(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]
) -> tuple[str, HostSite]:
    """(the FAQ server's URL, a host site embedding its widget from another origin)."""
    from server import create_app

    data_dir = tmp_path_factory.mktemp("see-also-browser")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(
        [
            Draft(
                "THUDM/slime",
                11,
                THREAD,
                "issue",
                f"{TITLE}\n\nWe have 910B NPU cards: can slime run on them?",
                "Use `--device npu` to run slime on NPU.",
                {"answer": "thanked"},
                1.76e9,
            )  # fmt: skip
        ]
    )
    store.close()
    host = HostSite(serve)
    host.kb_url = serve(create_app(settings.with_(data_dir=data_dir, allowed_origins=host.url))).url
    return host.kb_url, host


@pytest.fixture
def tab(browser: Any) -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def open_tab(base_url: str, **context: Any) -> Page:
        opened.append(Page(browser, base_url, **context))
        return opened[-1]

    yield open_tab
    for page in opened:
        page.close()


def shown(box: Any, lang: str) -> None:
    """The box says what it is in `lang` and links the thread, titled with its question."""
    title, note = WORDS[lang]
    assert box.locator(".see-also-title").inner_text() == title
    assert box.locator(".see-also-note").inner_text() == note
    link = box.locator("a").first
    assert link.get_attribute("href") == THREAD and link.inner_text() == TITLE
    assert box.locator(".see-also-where").first.inner_text() == "THUDM/slime#11"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_search_page_shows_it_below_a_question_the_faq_does_not_cover(
    tab: Callable[..., Page], sites: tuple[str, HostSite], lang: str, artifacts: Path
) -> None:
    t = tab(sites[0], viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US")
    t.goto("/")
    type_query(t.page, NOT_COVERED)
    t.page.wait_for_selector("[data-see-also-area] [data-see-also]")
    shown(t.page.locator("[data-see-also-area] [data-see-also]"), lang)
    assert t.page.locator("[data-no-answer]").is_visible()  # beside the FAQ's own "no answer", not as an answer
    t.screenshot(artifacts / f"see-also-search-{lang}.png")
    type_query(t.page, ANSWERED)
    t.page.wait_for_selector("[data-no-answer]", state="hidden")
    assert t.page.locator("[data-see-also]").count() == 0


def test_the_chat_page_shows_it_under_its_no_answer(
    tab: Callable[..., Page], sites: tuple[str, HostSite], artifacts: Path
) -> None:
    t = tab(sites[0], viewport=DESKTOP, locale="en-US")
    t.goto("/chat")
    t.page.fill("#message", NOT_COVERED)
    t.page.press("#message", "Enter")
    t.page.wait_for_selector(".turn.bot [data-see-also]")
    reply = t.page.locator(".turn.bot").last
    assert reply.locator(".notice").first.inner_text() == "The FAQ has no confident answer to this."
    shown(reply.locator("[data-see-also]"), "en")
    t.screenshot_bottom(artifacts / "see-also-chat.png")


def test_the_widget_on_another_site_shows_it(tab: Callable[..., Page], sites: tuple[str, HostSite]) -> None:
    t = tab(sites[1].url, viewport=DESKTOP, locale="en-US")
    page = load(t)
    page.locator(".launcher").click()
    box = page.locator("#kbw-q")
    box.fill(NOT_COVERED)
    box.press("Enter")
    page.wait_for_selector(".msg.bot .see-also")
    see_also = page.locator(".msg.bot .see-also").last
    assert see_also.locator(".label").inner_text() == WORDS["en"][0]
    assert see_also.locator(".mode").inner_text() == WORDS["en"][1]
    link = see_also.locator("a").first
    assert link.get_attribute("href") == THREAD and link.inner_text() == TITLE
    assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
