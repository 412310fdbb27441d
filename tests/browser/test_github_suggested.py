"""The GitHub bot's suggested answers on /insights in a real browser (headless Chromium against uvicorn on loopback),
in Chinese and in English: an issue delivered to the webhook in suggest mode shows up under "Suggested answers for
GitHub issues"; clicking Post makes the comment arrive at the stand-in for GitHub's API (a real HTTP server on a
loopback port, tests/support/github.py), and clicking Dismiss makes the suggestion go, posting nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from kb.insights import InsightsStore
from kb.settings import Settings
from server import create_app
from server.channels.github.comment import MARKER
from tests.support.browser import DESKTOP, sign_in
from tests.support.github import SECRET, GitHubStandIn, delivery, issue_event

TOKEN = "suggested-browser-token-1234"
BASE = "https://faq.example.com"
ASKED = {
    "en": ("How do I resume training in slime after it stopped?", "Training stopped halfway. How can I go on?"),
    "zh": ("slime 训练中断了，如何续训？", "跑到一半挂了，怎么从上次的 checkpoint 接着训？"),
}
TEXTS = {
    "en": {"title": "Suggested answers for GitHub issues", "post": "Post", "dismiss": "Dismiss", "none": "No suggested answers waiting.", "preview": "Preview the comment", "posted": "Posted to {issue}. See the comment", "see": "See the comment", "dismissed": "The suggested answer for {issue} was dismissed."},
    "zh": {"title": "GitHub 议题的建议回答", "post": "发布", "dismiss": "忽略", "none": "没有待处理的建议回答。", "preview": "预览将要发布的评论", "posted": "已发布到 {issue}。 查看评论", "see": "查看评论", "dismissed": "已忽略 {issue} 的建议回答。"},
}  # fmt: skip


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture(scope="module")
def live(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any], github: GitHubStandIn
) -> tuple[str, Any]:
    data_dir = tmp_path_factory.mktemp("suggested-browser")
    (data_dir / "index").symlink_to(settings.index_dir)
    own = settings.with_(
        data_dir=data_dir,
        admin_token=TOKEN,
        github_webhook_secret=SECRET,
        github_token="ghp-test-token",
        github_api_url=github.url,
        github_mode="suggest",
        channel_precision="github=0.25",
        base_url=BASE,
    )
    app = create_app(own)
    return serve(app).url, app


def suggested(live: tuple[str, Any], lang: str, number: int) -> None:
    """An issue delivered to the webhook, once its suggestion is kept (the answer follows the delivery)."""
    url, app = live
    title, body = ASKED[lang]
    payload, headers = delivery("issues", issue_event(title, body, number=number))
    assert httpx.post(f"{url}/github/webhook", content=payload, headers=headers).status_code == 202
    store: InsightsStore = app.state.recorder.store
    deadline = time.monotonic() + 30
    while store.pending.get("github", f"owner/repo#{number}") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.pending.get("github", f"owner/repo#{number}") is not None


@pytest.mark.parametrize(("lang", "number"), [("en", 1), ("zh", 2)])
def test_post_and_dismiss_a_suggested_answer_in_a_browser(
    admin_tab: Callable[..., Any], live: tuple[str, Any], github: GitHubStandIn, lang: str, number: int, artifacts: Path
) -> None:
    texts, issue = TEXTS[lang], f"owner/repo#{number}"
    suggested(live, lang, number)
    t = admin_tab(viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US")
    page = sign_in(t, TOKEN)
    section = page.locator("#suggested")
    assert section.locator("h2").inner_text() == texts["title"]
    row = section.locator(f"tr[data-suggested='{issue}']")
    assert row.locator(f"a[href='https://github.com/{issue.replace('#', '/issues/')}']").inner_text() == issue
    assert ASKED[lang][0] in row.inner_text() and row.locator("a[href='/entries/slime-b0ab398d']").count() == 1
    preview = row.locator("details.suggested-preview")
    assert not preview.locator("pre").is_visible()
    preview.locator("summary", has_text=texts["preview"]).click()
    shown = preview.locator("pre").inner_text()
    assert shown.startswith(MARKER) and f"{BASE}/entries/slime-b0ab398d" in shown
    t.screenshot(artifacts / f"insights-suggested-{lang}.png")

    row.locator("button", has_text=texts["post"]).click()
    page.wait_for_url("**/insights?since=7d&said=posted&*#suggested")
    [comment] = github.comments[issue]
    assert comment["body"] == shown  # what the preview showed is what was posted
    assert page.locator(f"#suggested tr[data-suggested='{issue}']").count() == 0
    posted = page.locator(f"#suggested .suggested-posted[data-posted='{issue}']")
    assert posted.inner_text() == texts["posted"].format(issue=issue)
    assert posted.locator("a", has_text=texts["see"]).get_attribute("href") == comment["html_url"]

    suggested(live, lang, number + 10)
    t.goto("/insights?since=7d")
    other = page.locator(f"#suggested tr[data-suggested='owner/repo#{number + 10}']")
    other.locator("button", has_text=texts["dismiss"]).click()
    page.wait_for_url("**/insights?since=7d&said=dismissed&*#suggested")
    said = page.locator("#suggested .suggested-said[data-said='dismissed']").inner_text()
    assert said == texts["dismissed"].format(issue=f"owner/repo#{number + 10}")
    assert page.locator("#suggested tr[data-suggested]").count() == 0
    assert page.locator("#suggested .empty-note").inner_text() == texts["none"]
    assert github.on(f"owner/repo#{number + 10}") == []


@pytest.mark.parametrize(("lang", "number"), [("en", 31), ("zh", 32)])
def test_a_post_github_refuses_is_said_beside_its_row_and_can_be_tried_again(
    admin_tab: Callable[..., Any], live: tuple[str, Any], github: GitHubStandIn, lang: str, number: int
) -> None:
    texts = TEXTS[lang]
    issue = f"owner/repo#{number}"
    suggested(live, lang, number)
    t = admin_tab(viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US")
    page = sign_in(t, TOKEN)
    row = page.locator(f"#suggested tr[data-suggested='{issue}']")
    github.down = True
    try:
        row.locator("button", has_text=texts["post"]).click()
        page.wait_for_url("**/insights?since=7d&said=refused&*#suggested")
    finally:
        github.down = False
    said = row.locator(".suggested-said[data-said='refused']")
    refused = {"en": f"{issue} was not posted: GitHub refused it", "zh": f"{issue} 没有发布：GitHub 拒绝了"}[lang]
    assert said.is_visible() and said.inner_text().startswith(refused)
    assert github.on(issue) == []
    row.locator("button", has_text=texts["post"]).click()  # kept: tried again, posted
    page.wait_for_url("**/insights?since=7d&said=posted&*#suggested")
    assert len(github.on(issue)) == 1 and page.locator(f"#suggested tr[data-suggested='{issue}']").count() == 0
