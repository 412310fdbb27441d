"""The site under its owner's name, one language per screen: headless Chromium against real uvicorn servers.

A one-source folder of one's own (one English Markdown file, no manifest) is served under
that source's name: the header, the heading and the tagline name it, nothing names this
project or its frameworks, and the footer promises no link to a pinned copy. The shipped
corpus in the Chinese interface shows no English source title or section name: the home
page, a search asked in English, an entry read in English, the chat and the widget.
Screenshots go to test-artifacts/site-*.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from ingest.manifest import load_manifest
from ingest.sources import parse_sources
from kb.settings import SHIPPED_SOURCES, Settings
from server.settings import ServerSettings
from tests.support.browser import DESKTOP, Page, type_query

OWN_FAQ = (
    "## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
    "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only. Copy one with:\n\n"
    "```bash\nrsync -a /mnt/shared/ckpt/llama-70b/ ~/ckpt/\n```\n"
)
SHIPPED_WORDS = ("RLHF", "ChatLearn", "ROLL", "slime", "DeepSpeed", "framework", "team-faq FAQ", "pinned copy")
UNLINKED = "Every answer is quoted from the FAQ it comes from, with its file and line."
# Everything a page shows: its text, its <title>, and the titles (tooltips) of its elements.
SHOWN = "() => [document.title, document.body.innerText, ...[...document.querySelectorAll('[title]')].map(n => n.title)].join('\\n')"


@pytest.fixture(scope="module")
def own_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """An index of a folder holding one FAQ file, `team-faq.md`, with no manifest and no title heading."""
    from ingest import build_index

    folder = tmp_path_factory.mktemp("own-site")
    (folder / "team-faq.md").write_text(OWN_FAQ, encoding="utf-8")
    settings = ServerSettings(data_dir=tmp_path_factory.mktemp("own-site-data"), sources_dir=folder, rate_limit="off")
    build_index(settings)
    return settings


@pytest.fixture(scope="module")
def own_url(own_settings: Settings, serve: Callable[..., Any]) -> str:
    from server import create_app

    return serve(create_app(own_settings)).url


@pytest.fixture(scope="module")
def shipped_url(settings: Settings, serve: Callable[..., Any]) -> str:
    from server import create_app

    return serve(create_app(settings)).url


@pytest.fixture
def open_page(browser: Any) -> Iterator[Callable[..., Page]]:  # noqa: F811 (the fixture imported above)
    """`open_page(url, **context)`: a tab on that server; each is closed (and checked for script errors) after."""
    opened: list[Page] = []

    def open_one(url: str, **context: Any) -> Page:
        opened.append(Page(browser, url, **context))
        return opened[-1]

    yield open_one
    for page in opened:
        page.close()


def english_names() -> set[str]:
    """The shipped sources' English titles and the entries' English section names that differ
    from their Chinese ones: none may appear in the Chinese interface."""
    titles = {s.title_in("en") for s in load_manifest(SHIPPED_SOURCES) if s.title_in("en") != s.title_in("zh")}
    sections = set()
    for entry in parse_sources(SHIPPED_SOURCES):
        english = entry.section_in("en")
        if (
            english and english != entry.section_in("zh") and len(english) > 3
        ):  # not "FAQ", which the Chinese name holds
            sections.add(english)
    return titles | sections


def assert_no_english_names(page: Any, where: str) -> None:
    shown = page.evaluate(SHOWN)
    found = sorted(name for name in english_names() if name in shown)
    assert found == [], f"{where} shows English source titles or sections: {found}"


def assert_own_name_only(t: Page) -> None:
    shown = t.page.evaluate(SHOWN)
    assert t.page.locator(".brand-name").inner_text() == "Team FAQ"
    for word in SHIPPED_WORDS:
        assert word not in shown, word
    assert t.page.locator(".site-footer p").first.inner_text() == UNLINKED
    assert t.page.locator("meta[name=description]").get_attribute("content") != ""


def test_a_folder_of_ones_own_is_served_under_its_name(
    open_page: Callable[..., Page], own_url: str, artifacts: Path
) -> None:
    t = open_page(own_url, viewport=DESKTOP, locale="en-US")
    t.goto("/")
    assert t.page.locator("h1").inner_text() == "Team FAQ"
    assert t.page.locator(".tagline").inner_text() == "What this FAQ already answers, in one search."
    assert t.page.title() == "Team FAQ"
    assert_own_name_only(t)
    t.screenshot(artifacts / "site-own-home.png")

    type_query(t.page, "shared checkpoints")
    first = t.page.locator("#results > .result").first
    assert first.locator(".source").inner_text().split() == ["Team", "FAQ", "team-faq.md"]
    assert first.locator(".source").get_attribute("title") == "Team FAQ"
    assert_own_name_only(t)
    t.screenshot(artifacts / "site-own-search.png")

    first.locator(".result-link").click()
    t.page.wait_for_url("**/entries/*")
    assert t.page.locator("h1.entry-q").inner_text() == "Where are the shared checkpoints?"
    assert t.page.locator(".crumbs a").nth(1).inner_text() == "Team FAQ"
    assert t.page.title() == "Where are the shared checkpoints? · Team FAQ"
    assert_own_name_only(t)
    t.screenshot(artifacts / "site-own-entry.png")

    for path, title in (("/docs", "Team FAQ · API"), ("/redoc", "Team FAQ · API reference")):
        assert f"<title>{title}</title>" in httpx.get(own_url + path).text


def test_the_site_name_and_tagline_settings_win(own_settings: Settings, serve: Callable[..., Any]) -> None:
    from server import create_app

    settings = own_settings.with_(site_name="Acme Platform", site_tagline="Ask the platform team.")
    url = serve(create_app(settings)).url
    for lang in ("en", "zh"):
        home = httpx.get(url + "/", headers={"Accept-Language": lang}).text
        assert '<span class="brand-name">Acme Platform</span>' in home and "<h1>Acme Platform</h1>" in home
        assert '<p class="tagline">Ask the platform team.</p>' in home


def test_the_chinese_interface_names_sources_and_sections_in_chinese(
    open_page: Callable[..., Page], shipped_url: str, artifacts: Path
) -> None:
    t = open_page(shipped_url, viewport=DESKTOP, locale="zh-CN")
    page = t.page
    t.goto("/")
    assert page.locator(".brand-name").inner_text() == "RLHF 框架 FAQ"  # the shipped corpus keeps its name
    assert page.locator("h1").inner_text() == "RLHF 框架 FAQ"  # the heading agrees with the header
    titles = page.locator(".source-card-title").all_inner_texts()
    assert "ROLL 问答" in titles and "slime 问答" in titles
    assert_no_english_names(page, "the home page")
    t.screenshot(artifacts / "site-zh-home.png")

    # An English question: the entries come in English, the interface names their sources in Chinese.
    type_query(page, "how do I resume training")
    question = page.locator("#results > .result .result-q").first.inner_text()
    assert question.isascii(), question  # the entry in the question's language
    assert_no_english_names(page, "live results")
    t.screenshot(artifacts / "site-zh-search.png")
    t.goto("/search?q=how+do+I+resume+training")
    assert_no_english_names(page, "the search page")

    # A ROLL entry read in English: its page's labels, source and section stay Chinese.
    hit = httpx.get(shipped_url + "/api/search", params={"q": "ROLL GPU resource configuration", "hl": "en"}).json()[
        "hits"
    ][0]
    assert hit["source"]["titles"] == {"zh": "ROLL 问答", "en": "ROLL Q&A"} and hit["section"]
    t.goto(f"/entries/{hit['id']}?hl=en")
    assert page.locator("h1.entry-q").inner_text() == hit["question"]
    assert "ROLL 问答" in page.locator(".facts").inner_text()
    assert_no_english_names(page, "an entry read in English")
    t.screenshot(artifacts / "site-zh-entry.png")

    t.goto("/chat")
    page.fill("#message", "How do I resume training in slime?")
    page.press("#message", "Enter")
    page.wait_for_selector(".turn.bot .reply-source .source")
    assert page.locator(".turn.bot .reply-source .source").first.get_attribute("title") == "slime 问答"
    assert_no_english_names(page, "the chat")
    t.screenshot_bottom(artifacts / "site-zh-chat.png")


def test_the_widgets_source_line_is_in_its_labels_language(
    open_page: Callable[..., Page], shipped_url: str, artifacts: Path
) -> None:
    t = open_page(shipped_url, viewport=DESKTOP, locale="zh-CN")
    page = t.page
    t.goto("/widget-demo")
    page.wait_for_function("() => window.KBWidget && document.querySelector('kb-faq-widget')")
    page.locator(".launcher").click()
    box = page.locator("#kbw-q")
    box.fill("slime 如何续训？")
    box.press("Enter")
    page.wait_for_selector(".msg.bot .meta a.source")
    line = page.locator(".msg.bot .meta").first.inner_text()
    assert line.startswith("来源") and "slime 问答" in line, line
    shown = page.evaluate("() => document.querySelector('kb-faq-widget').shadowRoot.textContent")
    assert [name for name in english_names() if name in shown] == []
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "site-zh-widget.png"))


PHONE = {"width": 375, "height": 812}
# Where each line of an element's text starts: the characters just before each line break.
BREAKS_AFTER = """(element) => {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) chars.push([node, i]);
  }
  const range = document.createRange();
  let top = null, before = [], previous = "";
  for (const [node, i] of chars) {
    range.setStart(node, i); range.setEnd(node, i + 1);
    const rect = range.getClientRects()[0];
    if (rect && top !== null && rect.top > top + 2) before.push(previous);
    if (rect) top = rect.top;
    previous = node.data[i];
  }
  return before;
}"""


def test_on_a_phone_flags_stay_whole_and_the_permalink_breaks_after_its_slashes(
    open_page: Callable[..., Page], shipped_url: str, settings: Settings
) -> None:
    from kb.knowledge import KnowledgeBase

    with_flags = [e.id for e in KnowledgeBase.open(settings).entries if "`--" in e.answer][:6]
    assert with_flags
    t = open_page(shipped_url, viewport=PHONE, locale="en-US")
    split: list[str] = []
    for entry in with_flags:
        t.goto(f"/entries/{entry}")
        permalink = t.page.locator(".permalink code")
        assert permalink.evaluate(BREAKS_AFTER) and set(permalink.evaluate(BREAKS_AFTER)) <= {"/"}
        assert permalink.inner_text() == f"{shipped_url}/entries/{entry}"  # the text copied is the link itself
        for code in t.page.locator(".prose code").all():
            text = code.inner_text()
            if text.startswith("--") and len(text) <= 30 and code.evaluate(BREAKS_AFTER):
                split.append(f"{entry}: {text}")
    assert split == []
