"""Search results in a real browser (headless Chromium, uvicorn on loopback): a plain "no
answer" with at most three nearest entries, only the entries close to an answer, and a
short answer shown whole. Screenshots at 1280 and 375 px go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from tests.support.browser import DESKTOP, Page, type_query

PHONE = {"width": 375, "height": 740}
WIDTHS = [("desktop", {"viewport": DESKTOP}), ("phone", {"viewport": PHONE, "is_mobile": True, "has_touch": True})]


def visible_cards(page) -> int:
    return page.locator("#results > .result").count()


@pytest.mark.parametrize(("width", "context"), WIDTHS)
def test_no_answer_says_so_and_offers_three_nearest(tab: Callable[..., Page], artifacts: Path, width, context) -> None:
    t = tab(locale="en-US", **context)
    t.goto("/")
    type_query(t.page, "asdfqwerzxcv")
    t.page.wait_for_selector("[data-no-answer]:not([hidden])")
    assert t.page.locator(".no-answer-title").inner_text() == "The FAQ has no confident answer to this."
    assert t.page.locator(".no-answer-nearest").inner_text() == "Nearest entries, which may not answer it:"
    assert 1 <= visible_cards(t.page) <= 3
    assert t.page.locator("[data-status]").inner_text() == ""
    t.no_horizontal_scroll()
    t.screenshot(artifacts / f"results-no-answer-{width}.png")
    t.goto("/search?q=asdfqwerzxcv")  # the same, rendered by the server
    assert t.page.locator(".no-answer-title").is_visible() and 1 <= visible_cards(t.page) <= 3


@pytest.mark.parametrize(("width", "context"), WIDTHS)
def test_an_answer_shows_the_close_entries_and_short_answers_whole(
    tab: Callable[..., Page], artifacts: Path, width, context
) -> None:
    t = tab(locale="en-US", **context)
    t.goto("/")
    type_query(t.page, "sglang illegal memory access")
    assert t.page.locator("[data-no-answer]").is_hidden()
    assert 1 <= visible_cards(t.page) < 10
    first = t.page.locator("#results > .result").first
    answer = first.locator(".result-answer")
    code = answer.locator("code", has_text="--sglang-mem-fraction-static")
    assert code.is_visible()
    # Nothing of the answer is cut or faded: its whole height is shown, the code inside it.
    assert answer.evaluate("a => a.scrollHeight <= a.clientHeight + 1 && getComputedStyle(a).maskImage === 'none'")
    box, inner = answer.bounding_box(), code.bounding_box()
    assert inner["y"] + inner["height"] <= box["y"] + box["height"]
    t.no_horizontal_scroll()
    t.screenshot(artifacts / f"results-answer-{width}.png")


@pytest.mark.parametrize("typed", [False, True])
def test_the_first_results_long_answer_is_shown_whole_down_to_its_fix(tab: Callable[..., Page], typed: bool) -> None:
    t = tab(locale="en-US", viewport=DESKTOP)
    if typed:  # the results drawn as one types (search.js)
        t.goto("/")
        type_query(t.page, "Unable to pre-compile async_io")
    else:  # the page the server renders
        t.goto("/search?q=" + "Unable to pre-compile async_io")
    answer = t.page.locator("#results > .result .result-answer").first
    assert answer.evaluate("a => !a.classList.contains('long') && getComputedStyle(a).maskImage === 'none'")
    assert answer.evaluate("a => a.scrollHeight <= a.clientHeight + 1 && a.scrollHeight > 300")  # long, and whole
    for fix in ("Solution 1", "Solution 2", "Solution 4"):
        assert answer.get_by_text(fix).first.is_visible(), fix


@pytest.mark.parametrize(("width", "context"), WIDTHS)
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_home_page_names_the_shipped_frameworks(
    tab: Callable[..., Page], artifacts: Path, width, context, locale
) -> None:
    t = tab(locale=locale, **context)
    t.goto("/")
    # The heading is the site's name, as the header gives it; the tagline names the frameworks.
    title = {"en-US": "RLHF Framework FAQ", "zh-CN": "RLHF 框架 FAQ"}
    tagline = {
        "en-US": "What the ChatLearn, ROLL, slime and DeepSpeed FAQs already answer, in one search.",
        "zh-CN": "ChatLearn、ROLL、slime 和 DeepSpeed 的 FAQ 已经回答过的问题，一处搜索。",
    }
    assert t.page.locator("h1").inner_text() == title[locale]
    assert t.page.locator("p.tagline").inner_text() == tagline[locale]
    assert t.page.locator(".example").count() == 4  # one question from each source, up to four
    t.no_horizontal_scroll()
    t.screenshot(artifacts / f"home-{locale[:2]}-{width}.png")


# The rectangles of each line of an element's text: where the browser broke it.
LINE_ENDS = """node => {
  const ends = [];
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  let text = "";
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    for (let i = 0; i < t.length; i++) {
      const range = document.createRange();
      range.setStart(t, i); range.setEnd(t, i + 1);
      const box = range.getClientRects()[0];
      if (box) ends.push([box.top, text.length]);
      text += t.data[i];
    }
  }
  const breaks = [];
  for (let i = 1; i < ends.length; i++) if (ends[i][0] > ends[i - 1][0] + 2) breaks.push(ends[i][1]);
  return {text, breaks};
}"""


@pytest.mark.parametrize("how", ["live", "server"])
def test_at_375_px_names_wrap_at_their_parts_and_a_card_code_block_scrolls(
    tab: Callable[..., Page], artifacts: Path, how: str
) -> None:
    """A long name in inline code breaks after a `.` or `_` of it, never mid-word; a code block in a card ends
    (and its scrollbar shows) above the card's cut, and scrolls sideways; no card is wider than the page."""
    t = tab(locale="en-US", viewport=PHONE, is_mobile=True, has_touch=True)
    for query, name in (
        ("how to set max_token_in_packing for FSDP packing", "packing"),
        ("Unable to pre-compile async_io", "async-io"),
    ):
        if how == "live":
            t.goto("/")
            type_query(t.page, query)
        else:
            t.page.goto(f"{t.base_url}/search?q={query}")
        t.no_horizontal_scroll()
        card = t.page.locator("#results > .result").first
        assert card.evaluate("c => c.scrollWidth <= c.clientWidth")
        if name == "packing":
            code = card.locator("code", has_text="max_token_in_packing").first
            lines = code.evaluate(LINE_ENDS)
            assert lines["breaks"], lines  # too long for one line at 375 px
            for at in lines["breaks"]:
                assert lines["text"][at - 1] in "._/=", lines  # each line ends at a part of the name
        else:
            pre = card.locator("pre").first
            fits = pre.evaluate(
                "p => ({wide: p.scrollWidth > p.clientWidth, ox: getComputedStyle(p).overflowX,"
                " bottom: p.getBoundingClientRect().bottom,"
                " cut: p.closest('.result-answer').getBoundingClientRect().bottom})"
            )
            assert fits["wide"] and fits["ox"] == "auto" and fits["bottom"] <= fits["cut"], fits
            pre.evaluate("p => { p.scrollLeft = 120; }")
            assert pre.evaluate("p => p.scrollLeft") == 120
        t.screenshot(artifacts / f"results-375-{name}-{how}.png")


def test_a_chinese_page_words_the_live_results_translation_note_in_chinese(tab: Callable[..., Page]) -> None:
    """An English question typed on a Chinese page: English entries, with the note that the English is the
    maintainers' translation in Chinese, the page's language (the API words it in the reader's, English)."""
    t = tab(locale="zh-CN")
    t.goto("/")
    type_query(t.page, "Unable to pre-compile async_io")
    note = t.page.locator("#results > .result .only-in").first
    assert note.inner_text() == "本条由本知识库的维护者译自中文原文。 原文"
    assert note.get_attribute("lang") == "zh-CN"
