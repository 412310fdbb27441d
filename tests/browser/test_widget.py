"""The widget in a real browser, on a page from another origin: headless Chromium, two uvicorn servers.

A small "host site" runs on its own loopback port (a real second origin) and embeds the
widget with the one `<script>` tag, under a stylesheet and a fixed toolbar that would
clash with a widget drawn in the page itself. The widget is opened, asked a question in
English and in Chinese, answers with a source link, keeps the keyboard inside its panel,
and closes on Esc. Screenshots at desktop and phone widths (light and dark) go to
test-artifacts/. A second host, not in KB_ALLOWED_ORIGINS, gets a console error that says
which setting to change.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.insights import store_path
from kb.settings import Settings
from tests.support.browser import DESKTOP, HostSite, Page, load

PHONE = {"width": 375, "height": 740}
EN_QUESTION = "how do I resume training in slime?"
ZH_QUESTION = "slime 训练时 OOM 怎么办？"


@pytest.fixture(scope="module")
def sites(settings: Settings, serve: Callable[[Any], Any]) -> tuple[HostSite, HostSite, str]:
    """(allowed host, blocked host, FAQ server URL): three loopback ports, three origins."""
    from server import create_app

    allowed, blocked = HostSite(serve), HostSite(serve)
    kb_url = serve(create_app(settings.with_(allowed_origins=allowed.url))).url
    allowed.kb_url = blocked.kb_url = kb_url
    assert len({allowed.url, blocked.url, kb_url}) == 3
    return allowed, blocked, kb_url


@pytest.fixture
def tab(browser: Any) -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def open_tab(base_url: str, **context: Any) -> Page:
        opened.append(Page(browser, base_url, **context))
        return opened[-1]

    yield open_tab
    for page in opened:
        page.close()


def shadow(page: Any, script: str) -> Any:
    """Evaluate `script` with `root` bound to the widget's shadow root."""
    return page.evaluate(
        f"() => {{ const root = document.querySelector('kb-faq-widget').shadowRoot; return ({script}); }}"
    )


def ask(page: Any, question: str) -> Any:
    """Ask and wait for the answer (one answer more than the panel had)."""
    answers = "document.querySelector('kb-faq-widget').shadowRoot.querySelectorAll('.msg.bot .meta a.source').length"
    before = page.evaluate(f"() => {answers}")
    box = page.locator("#kbw-q")
    box.fill(question)
    box.press("Enter")
    page.wait_for_function(f"n => {answers} > n", arg=before)
    return page.locator(".msg.bot").last


def expected_best(client: TestClient, question: str) -> dict[str, Any]:
    body = client.post("/api/chat", json={"message": question}).json()
    assert body["answered"] is True
    return body["sources"][0]


def test_widget_answers_on_another_origin_and_stays_out_of_the_page(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str], client: TestClient, artifacts: Path
) -> None:
    allowed, _, kb_url = sites
    want = expected_best(client, EN_QUESTION)
    t = tab(allowed.url, viewport=DESKTOP, locale="en-US")
    page = load(t)

    new_globals = page.evaluate(
        "() => Object.keys(window).filter(k => !window.__globalsBefore.includes(k) && k !== '__globalsBefore')"
    )
    assert new_globals == ["KBWidget"]
    launcher = page.locator(".launcher")
    assert launcher.get_attribute("aria-label") == "Ask the FAQ"
    assert launcher.get_attribute("aria-expanded") == "false" and launcher.get_attribute("aria-haspopup") == "dialog"
    # The host's `button { background: orange !important }` and `* { font-family: Georgia }` stay outside.
    assert launcher.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(79, 70, 229)"
    assert "Georgia" not in launcher.evaluate("b => getComputedStyle(b).fontFamily")

    launcher.click()  # also proves the host's z-index 999999 toolbar does not cover it
    panel = page.locator(".panel")
    assert (
        panel.is_visible() and panel.get_attribute("role") == "dialog" and panel.get_attribute("aria-modal") == "true"
    )
    assert launcher.get_attribute("aria-expanded") == "true"
    assert page.locator("#kbw-title").inner_text() == "Training FAQ"
    assert shadow(page, "root.activeElement && root.activeElement.id") == "kbw-q"
    assert page.locator("#kbw-q").evaluate("t => getComputedStyle(t).display") != "none"

    reply = ask(page, EN_QUESTION)
    source = reply.locator(".meta a.source")
    assert source.get_attribute("href") == want["url"] and want["url"].startswith("https://")
    assert source.get_attribute("target") == "_blank"
    assert reply.locator(".meta a.entry").get_attribute("href") == f"{kb_url}/entries/{want['id']}"
    assert reply.locator(".answer").inner_text().strip()
    assert reply.locator(".list li").count() == 0, "no other entry comes near enough to be related"
    assert reply.locator(".votes button").count() == 2, "helpful / not helpful: the server takes votes"
    assert page.locator(".msg.user").inner_text() == EN_QUESTION
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "widget-desktop.png"))

    # Tab and Shift+Tab go round the panel's controls and never leave it.
    for key in ["Tab"] * 14 + ["Shift+Tab"] * 14:
        page.keyboard.press(key)
        assert shadow(page, "!!root.activeElement && root.getElementById('kbw-panel').contains(root.activeElement)"), (
            key
        )
    page.keyboard.press("Escape")
    assert not panel.is_visible()
    assert launcher.get_attribute("aria-expanded") == "false"
    assert shadow(page, "root.activeElement && root.activeElement.className") == "launcher"

    # The keyboard opens it again, with the conversation kept.
    page.keyboard.press("Enter")
    assert panel.is_visible() and page.locator(".msg.bot").count() == 1


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_widget_fills_a_phone_screen_and_follows_the_colour_scheme(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str], client: TestClient, artifacts: Path, scheme: str
) -> None:
    allowed, _, _ = sites
    want = expected_best(client, ZH_QUESTION)
    t = tab(allowed.url, viewport=PHONE, locale="zh-CN", color_scheme=scheme, is_mobile=True, has_touch=True)
    page = load(t, "/?lang=zh-CN")
    launcher = page.locator(".launcher")
    assert launcher.get_attribute("aria-label") == "向 FAQ 提问"
    box = launcher.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"] and box["y"] + box["height"] <= PHONE["height"]
    launcher.tap()
    panel = page.locator(".panel").bounding_box()
    assert (panel["x"], panel["y"], panel["width"], panel["height"]) == (0, 0, PHONE["width"], PHONE["height"])
    assert not launcher.is_visible(), "the full-screen panel has its own close button"
    background = page.locator(".panel").evaluate("p => getComputedStyle(p).backgroundColor")
    assert background == ("rgb(23, 26, 33)" if scheme == "dark" else "rgb(255, 255, 255)")

    reply = ask(page, ZH_QUESTION)
    assert reply.locator(".meta a.source").get_attribute("href") == want["url"]
    assert reply.locator(".meta .label").first.inner_text() == "来源"
    t.no_horizontal_scroll()
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / f"widget-phone-{scheme}.png"))
    page.locator(".close").tap()
    assert launcher.is_visible()


@pytest.mark.parametrize(("viewport", "name"), [(DESKTOP, "desktop"), (PHONE, "phone")])
def test_with_data_lang_auto_the_labels_follow_the_question_and_votes_are_drawn_icons(
    tab: Callable[..., Page],
    sites: tuple[HostSite, HostSite, str],
    artifacts: Path,
    viewport: dict[str, int],
    name: str,
) -> None:
    """An English host page: a Chinese question gets Chinese labels, an English one English labels again."""
    allowed, _, _ = sites
    t = tab(allowed.url, viewport=viewport, locale="en-US")
    page = load(t, "/?lang=en")
    page.locator(".launcher").click()
    assert page.locator("#kbw-q").get_attribute("placeholder") == "Ask a question…"

    reply = ask(page, ZH_QUESTION)
    assert reply.locator(".meta .label").first.inner_text() == "来源"
    assert reply.locator(".meta a.entry").inner_text() == "查看完整条目"
    assert [b.inner_text() for b in reply.locator(".votes button").all()] == ["有帮助", "没帮助"]
    assert page.locator("#kbw-q").get_attribute("placeholder") == "输入问题……"
    assert page.locator(".close").get_attribute("aria-label") == "关闭"
    assert page.locator("#kbw-title").inner_text() == "Training FAQ", "the host's own title stays"
    for button in reply.locator(".votes button").all():
        drawn = button.locator("svg").bounding_box()
        assert drawn and drawn["width"] >= 12 and drawn["height"] >= 12, "a thumb icon, not a character"
    t.no_horizontal_scroll()
    reply.locator(".votes").scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / f"widget-auto-zh-{name}.png"))

    page.locator("#kbw-q").fill(EN_QUESTION)
    page.locator("#kbw-q").press("Enter")
    page.wait_for_function(
        "() => document.querySelector('kb-faq-widget').shadowRoot.querySelectorAll('.msg.bot .meta a.source').length == 2"
    )
    latest = page.locator(".msg.bot").last
    assert latest.locator(".meta .label").first.inner_text() == "Source"
    assert [b.inner_text() for b in latest.locator(".votes button").all()] == ["Helpful", "Not helpful"]
    assert page.locator(".msg.bot").first.locator(".meta .label").first.inner_text() == "来源", (
        "earlier answers keep theirs"
    )
    assert page.locator("#kbw-q").get_attribute("placeholder") == "Ask a question…"


def test_data_attributes_set_language_position_and_accent(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str]
) -> None:
    allowed, _, _ = sites
    t = tab(allowed.url, viewport=DESKTOP, locale="en-US")
    page = load(t, "/left")
    launcher = page.locator(".launcher")
    assert launcher.get_attribute("aria-label") == "向 FAQ 提问"  # data-lang="zh" wins over the page's English
    assert launcher.bounding_box()["x"] < 40
    assert launcher.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(225, 29, 72)"
    launcher.click()
    assert page.locator("#kbw-title").inner_text() == "训练 FAQ"
    assert page.locator(".panel").bounding_box()["x"] < 40
    reply = ask(page, EN_QUESTION)
    assert reply.locator(".meta .label").first.inner_text() == "来源", "a fixed data-lang keeps its labels"


def test_a_page_from_an_origin_not_allowed_gets_a_clear_console_error(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str]
) -> None:
    _, blocked, kb_url = sites
    t = tab(blocked.url, viewport=DESKTOP, locale="en-US")
    messages: list[str] = []
    t.page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
    page = load(t)
    for _ in range(100):
        if any(m.startswith("KBWidget:") for m in messages):
            break
        page.wait_for_timeout(50)
    explained = [m for m in messages if m.startswith("KBWidget:")]
    assert explained == [
        f"KBWidget: the FAQ server {kb_url} does not allow calls from this page's origin ({blocked.url}). "
        f"Add {blocked.url} to KB_ALLOWED_ORIGINS on the FAQ server (a comma-separated list of origins) and restart it."
    ]
    page.locator(".launcher").click()
    assert page.locator(".blocked").inner_text() == "This site is not set up to use the FAQ server."
    # The browser's own CORS report is expected here; nothing else may go wrong.
    t.problems[:] = [
        p
        for p in t.problems
        if "KB_ALLOWED_ORIGINS" not in p and "CORS" not in p and "Failed to load resource" not in p
    ]


def test_the_widget_votes_from_another_origin_with_the_session_the_server_signed(
    tab: Callable[..., Page], settings: Settings, serve: Callable[[Any], Any], tmp_path: Path
) -> None:
    """A real FAQ server with its own insights database: two votes on one answer in one visit count once."""
    from server import create_app

    (tmp_path / "index").symlink_to(settings.index_dir)
    host = HostSite(serve)
    app = create_app(settings.with_(data_dir=tmp_path, allowed_origins=host.url))
    host.kb_url = serve(app).url
    t = tab(host.url, viewport=DESKTOP, locale="en-US")
    page = load(t)
    page.locator(".launcher").click()
    statuses = []
    for choice in ("first", "last"):  # 👍 on the first answer, then 👎 on the same answer asked again
        reply = ask(page, EN_QUESTION)
        with page.expect_response(f"{host.kb_url}/api/feedback") as response:
            reply.locator(".votes button").nth(0 if choice == "first" else 1).click()
        statuses.append(response.value.status)
        reply.locator(".mode", has_text="Thanks for the feedback.").wait_for()
    best_id = reply.locator(".meta a.entry").get_attribute("href").rsplit("/", 1)[1]
    assert statuses == [202, 202]
    assert app.state.recorder.flush()
    with sqlite3.connect(store_path(tmp_path)) as db:
        votes = db.execute("SELECT entry_id, question, helpful, channel FROM votes").fetchall()
    assert votes == [(best_id, EN_QUESTION, 0, "widget")]


def test_demo_page_works_under_the_sites_strict_content_security_policy(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str], artifacts: Path
) -> None:
    """/widget-demo sends `style-src 'self'`: the widget's styles (constructed sheets) still apply."""
    _, _, kb_url = sites
    t = tab(kb_url, viewport=DESKTOP, locale="en-US")
    response = t.goto("/widget-demo")
    assert "style-src 'self'" in response.headers["content-security-policy"]
    page = t.page
    page.wait_for_function("() => window.KBWidget && document.querySelector('kb-faq-widget')")
    launcher = page.locator(".launcher")
    assert launcher.evaluate("b => getComputedStyle(b).position") == "fixed"
    page.screenshot(path=str(artifacts / "widget-demo-page-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    t.no_horizontal_scroll()
    page.screenshot(path=str(artifacts / "widget-demo-page-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    script = page.locator("script[src='/widget.js']")
    snippet = page.locator(".entry-answer pre").inner_text()
    for attribute in ("data-lang", "data-title"):
        assert f'{attribute}="{script.get_attribute(attribute)}"' in snippet, "the line to copy makes this widget"
    launcher.click()
    assert page.locator("#kbw-title").inner_text() == "Training FAQ"
    ask(page, "How do I convert a Megatron checkpoint to Hugging Face?")
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "widget-demo.png"))


def test_markup_in_a_question_is_shown_as_text_never_run(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str]
) -> None:
    allowed, _, _ = sites
    t = tab(allowed.url, viewport=DESKTOP, locale="en-US")
    page = load(t)
    page.locator(".launcher").click()
    question = "<img src=x onerror=alert(1)><script>alert(2)</script> what's the weather in Paris"
    page.locator("#kbw-q").fill(question)
    page.locator("#kbw-q").press("Enter")
    page.wait_for_selector(".msg.bot .note")
    assert page.locator(".msg.user").inner_text() == question
    assert page.locator(".msg.bot .note").first.inner_text() == "The FAQ has no confident answer to this."
    assert page.locator(".msg.bot .list li").count() >= 1, "the nearest entries"
    assert shadow(page, "root.querySelectorAll('img, script').length") == 0
    page.wait_for_timeout(300)
    # The tab fixture fails the test if a dialog opened or a script errored.


def test_the_widget_says_when_the_named_frameworks_faq_has_nothing(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str], client: TestClient, artifacts: Path
) -> None:
    allowed, _, _ = sites
    want = client.post("/api/chat", json={"message": "how do I resume training in ROLL"}).json()
    # slime's entry is not sure enough to give for ROLL (confidence 0.1): the nearest entries, and the note.
    assert (want["answered"], want["note"]) == (False, "ROLL's FAQ does not cover this.")
    t = tab(allowed.url, viewport=DESKTOP, locale="en-US")
    page = load(t)
    page.locator(".launcher").click()
    notes = "document.querySelector('kb-faq-widget').shadowRoot.querySelectorAll('.msg.bot .elsewhere').length"
    before = page.evaluate(f"() => {notes}")
    page.locator("#kbw-q").fill("how do I resume training in ROLL")
    page.locator("#kbw-q").press("Enter")
    page.wait_for_function(f"n => {notes} > n", arg=before)  # no answer to wait for: the note comes with the entries
    reply = page.locator(".msg.bot").last
    assert reply.locator(".elsewhere").inner_text() == want["note"]
    page.screenshot(path=str(artifacts / "widget-elsewhere.png"))


def test_the_widget_says_an_answer_is_the_maintainers_translation_and_links_the_original(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str], client: TestClient, artifacts: Path
) -> None:
    allowed, _, _ = sites
    question = "deepspeed: Unable to pre-compile async_io"
    want = expected_best(client, question)
    assert want["translated_by"] == "maintainers" and want["lang"] == "en"
    t = tab(allowed.url, viewport=DESKTOP, locale="en-US")
    page = load(t)
    page.locator(".launcher").click()
    reply = ask(page, question)
    said = reply.locator("p.note").filter(has_text="Translated from")
    assert said.inner_text() == "Translated from the Chinese original by this knowledge base's maintainers. original"
    original = said.locator("a")
    assert original.get_attribute("href") == want["original_url"] and original.get_attribute("target") == "_blank"
    assert want["original_url"].endswith("/week3-error-collection.md?plain=1#L16")
    assert (
        "Solution 1" in reply.locator(".answer").inner_text()
        and "解决方案" not in reply.locator(".answer").inner_text()
    )
    page.wait_for_timeout(200)
    page.screenshot(path=str(artifacts / "widget-translated-entry-en.png"))


def test_a_long_pasted_trace_leaves_the_reply_in_view(
    tab: Callable[..., Page], sites: tuple[HostSite, HostSite, str]
) -> None:
    t = tab(sites[2], viewport=DESKTOP)
    page = t.page
    t.goto("/widget-demo")
    page.wait_for_function("() => window.KBWidget && document.querySelector('kb-faq-widget')")
    page.locator(".launcher").click()
    frames = "\n".join(f'  File "/opt/train/step_{i}.py", line {i}, in run\n    out = model(batch)' for i in range(60))
    trace = f"Traceback (most recent call last):\n{frames}\ntorch.OutOfMemoryError: CUDA out of memory."
    reply = ask(page, trace)
    # The question scrolls inside its own bubble; the reply's first lines are in the panel, not below the fold.
    inside = shadow(
        page,
        "(() => { const log = root.querySelector('.log').getBoundingClientRect();"
        " const bot = [...root.querySelectorAll('.msg.bot')].pop().getBoundingClientRect();"
        " return [bot.top >= log.top - 1, bot.top + 60 <= log.bottom]; })()",
    )
    assert inside == [True, True], inside
    assert reply.locator("a.source").first.is_visible()
