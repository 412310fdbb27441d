"""The /insights page behind KB_ADMIN_TOKEN: off without a token, a sign-in form without the token,
the tables with a bearer token or the sign-in cookie, a CSV export of each table, the near-duplicate
entries the build found (over a real server); and in a real browser (headless Chromium against uvicorn): signing in, the page (screenshots), and votes cast
with the search and chat pages' buttons reaching the store."""

from __future__ import annotations

import csv
import io
import re
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from duplicates_faq import ACROSS, CONVERT, CONVERT_AGAIN, QUOTA, URL, WITHIN, intended, write_team_faqs
from fastapi.testclient import TestClient
from test_pages import form_token

from ingest import build_index
from kb.index import read_index
from kb.insights import TABLES, InsightsStore, Question, Vote, store_path
from kb.settings import Settings
from server import create_app
from server.rendering.chart import Series, nice_ceiling, stacked_bars

TOKEN = "correct-horse-battery-staple"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
DAY = 86400.0
RESUME = "slime-b0ab398d"  # 如何续训？
GAPS = [  # unanswered questions: (text, lang, channel, times)
    ("如何续训", "zh", "web", 5),
    ("how do I resume training", "en", "widget", 3),
    ("怎么断点续训？", "zh", "slack", 2),
    ("如何开启 FP8 训练", "zh", "web", 4),
    ("how to enable fp8 training", "en", "api", 2),
    ("OOM", "en", "slack", 3),
    ("CUDA out of memory", "en", "web", 1),
]


def seed(data_dir: Path, entry_ids: list[str], now: float) -> None:
    """Two weeks of questions from every channel in both languages, some unanswered, and votes."""
    store = InsightsStore(store_path(data_dir))
    questions = []
    for day in range(14):
        at = now - day * DAY - 3600
        for n, (channel, lang) in enumerate(
            [("web", "zh"), ("web", "en"), ("widget", "en"), ("slack", "zh"), ("api", "en")]
        ):
            for i in range((day * 3 + n * 5) % 7 + 1):
                entry = entry_ids[(day + n + i) % len(entry_ids)]
                questions.append(
                    Question(f"question {day}-{n}-{i}", lang, channel, True, entry, 0.2, 14.0, asked_at=at - i)
                )
    for text, lang, channel, times in GAPS:
        questions += [
            Question(text, lang, channel, False, entry_ids[0], 0.01, 15.0, asked_at=now - k * DAY - 60)
            for k in range(times)
        ]
    questions += [  # answers that may be wrong: one won by a hair, one asked again at once in other words
        Question("ray hangs at start", "en", "web", True, entry_ids[2], 0.3, 12.0, asked_at=now - 7200, margin=0.004),
        Question(
            "how do I convert a Megatron checkpoint",
            "en",
            "widget",
            True,
            entry_ids[3],
            0.3,
            12.0,
            asked_at=now - 5000,
            margin=0.2,
        ),
        Question(
            "how can I turn Megatron weights into HF format",
            "en",
            "widget",
            True,
            entry_ids[3],
            0.3,
            12.0,
            asked_at=now - 4970,
            margin=0.2,
            previous="how do I convert a Megatron checkpoint",
        ),
    ]
    store.add_questions(questions)
    store.add_votes(
        [
            Vote(
                RESUME,
                False,
                "如何续训",
                "voter-1",
                "web",
                "outdated",
                "--ckpt-step 在 v0.2 改名了",
                voted_at=now - 600,
            ),
            Vote(
                RESUME,
                False,
                "how do I resume from a checkpoint",
                "voter-2",
                "widget",
                "incomplete",
                voted_at=now - 500,
            ),
            Vote(RESUME, True, "续训", "voter-3", "web", voted_at=now - 400),
            Vote(entry_ids[1], True, "q", "voter-1", "api", voted_at=now - 300),
        ]
    )
    store.close()


@pytest.fixture(scope="module")
def entry_ids(settings: Settings) -> list[str]:
    ids = [e.id for e in read_index(settings.index_dir).entries]
    return [RESUME] + [i for i in ids if i != RESUME][:5]


@pytest.fixture(scope="module")
def insights_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory, entry_ids: list[str]) -> Settings:
    data_dir = tmp_path_factory.mktemp("insights-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    seed(data_dir, entry_ids, time.time())
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)


@pytest.fixture(scope="module")
def admin(insights_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(insights_settings)) as client:
        yield client


def test_the_page_is_off_without_an_admin_token(client: TestClient) -> None:
    off = "the admin routes (/insights, /admin) are off: set KB_ADMIN_TOKEN to a secret token to turn them on"
    assert client.get("/insights", headers={"Accept": "application/json"}).json() == {
        "ok": False,
        "error": off,
        "status": 404,
    }
    assert client.get("/insights/gaps.csv", headers=BEARER).status_code == 404
    assert client.post("/insights/sign-in", data={"token": ""}).status_code == 404
    page = client.get("/insights", headers={"Accept-Language": "en"})
    assert page.status_code == 404 and "KB_ADMIN_TOKEN" in page.text


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}])
def test_without_the_token_the_page_is_a_sign_in_form(admin: TestClient, headers: dict[str, str]) -> None:
    response = admin.get("/insights", headers={"Accept-Language": "en", **headers})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer" and response.headers["cache-control"] == "no-store"
    assert '<form action="/insights/sign-in" method="post">' in response.text and 'name="form_token"' in response.text
    assert 'type="password"' in response.text and "Sign in to the insights" in response.text
    assert "如何续训" not in response.text and "question 0-0-0" not in response.text


def test_the_csv_exports_need_the_token_too(admin: TestClient) -> None:
    response = admin.get("/insights/gaps.csv", headers={"Accept": "application/json"})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"] == (
        "this needs the admin token: send the header `Authorization: Bearer <KB_ADMIN_TOKEN>` "
        "(or, for the insights, sign in at /insights)"
    )


def test_signing_in_sets_an_http_only_cookie_that_opens_the_page(insights_settings: Settings) -> None:
    with TestClient(create_app(insights_settings)) as browser:
        form = {"since": "7d", "form_token": form_token(browser, "/insights")}
        wrong = browser.post("/insights/sign-in", data={**form, "token": "guess"}, headers={"Accept-Language": "en"})
        assert (
            wrong.status_code == 401
            and "That is not the admin token." in wrong.text
            and "kb_admin" not in browser.cookies
        )

        response = browser.post("/insights/sign-in", data={**form, "token": TOKEN}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/insights?since=7d"
        cookie = response.headers["set-cookie"]
        assert cookie.startswith("kb_admin=") and TOKEN not in cookie
        for part in ("HttpOnly", "Path=/insights", "SameSite=strict", "Max-Age=604800"):
            assert part in cookie

        page = browser.get("/insights?since=7d", headers={"Accept-Language": "en"})
        assert page.status_code == 200 and "Questions the FAQ could not answer" in page.text

        out = browser.post(
            "/insights/sign-out", data={"form_token": form_token(browser, "/insights")}, follow_redirects=False
        )
        assert out.status_code == 303 and 'kb_admin=""' in out.headers["set-cookie"]
        assert browser.get("/insights").status_code == 401
    with TestClient(create_app(insights_settings.with_(admin_token="a-new-token"))) as later:
        later.cookies.set("kb_admin", response.cookies["kb_admin"], path="/insights")
        assert later.get("/insights").status_code == 401  # a new token signs every browser out


def test_the_chinese_page_names_entries_by_their_chinese_question(admin: TestClient) -> None:
    html = admin.get("/insights", headers={"Accept-Language": "zh", **BEARER}).text
    unhelpful = row_of(html.split('id="unhelpful"')[1], f'<a href="/entries/{RESUME}">')
    assert f'<a href="/entries/{RESUME}">如何续训？</a>' in unhelpful and "How do I resume training?" not in unhelpful


def row_of(html: str, text: str) -> str:
    """The table row holding `text`."""
    return next(row for row in re.findall(r"<tr>.*?</tr>", html, re.S) if text in row)


def test_the_page_shows_every_table(admin: TestClient, entry_ids: list[str]) -> None:
    response = admin.get("/insights", headers={"Accept-Language": "en", **BEARER})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store" and response.headers["x-robots-tag"] == "noindex"
    html = response.text
    # The same question in Chinese and English is one missing topic; OOM is another.
    resume = row_of(html, '<strong class="gap-label">如何续训</strong>')
    assert "how do I resume training" in resume and "怎么断点续训？" in resume and "OOM" not in resume
    assert (
        '<td class="num" data-label="Asked">10</td>' in resume
        and "English, 中文" in resume
        and "Slack, Web, Widget" in resume
    )
    assert "## 如何续训？" in resume and "1. **如何续训？**" in resume  # the drafts, both layouts
    assert "如何续训" not in row_of(html, '<strong class="gap-label">OOM</strong>')
    # Answers voted not helpful, with reasons and comments.
    unhelpful = row_of(html.split('id="unhelpful"')[1], f'<a href="/entries/{RESUME}">')
    assert "How do I resume training?" in unhelpful and "如何续训？" not in unhelpful  # entries named in English
    assert "Out of date ×1" in unhelpful and "Incomplete ×1" in unhelpful
    assert "--ckpt-step 在 v0.2 改名了" in unhelpful and "<q>how do I resume from a checkpoint</q>" in unhelpful
    # Entries by hits, and the chart of questions per day by channel and by language.
    assert html.count('class="series-web"') > 10 and 'class="series-zh"' in html and 'class="series-slack"' in html
    assert re.search(r"<title>\d{4}-\d\d-\d\d · Web: \d+</title>", html)
    assert "<figcaption>By channel</figcaption>" in html and "<figcaption>By language</figcaption>" in html
    for name in TABLES:
        assert f'href="/insights/{name}.csv?since=30d"' in html
    assert "style=" not in html  # the page's policy allows no inline styles


def duplicates_section(html: str) -> str:
    return html.split('<section class="insights-block" id="duplicates">')[1].split("</section>")[0]


@pytest.fixture(scope="module")
def team_url(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., Any]) -> str:
    """A real server on an index of a folder with two near-duplicate pairs, one of them marked intended."""
    tmp = tmp_path_factory.mktemp("duplicates")
    shutil.copytree(settings.cache_dir, tmp / "data" / "cache")
    team = settings.with_(data_dir=tmp / "data", admin_token=TOKEN)
    build_index(team, write_team_faqs(tmp / "team", intended(*WITHIN, why="Asked both ways in the team channel")))
    return str(serve(create_app(team)).url)


def test_near_duplicate_entries_are_listed_with_both_places_in_the_readers_language(team_url: str) -> None:
    en = duplicates_section(httpx.get(f"{team_url}/insights", headers={"Accept-Language": "en", **BEARER}).text)
    assert "<h2>Near-duplicate entries</h2>" in en and "Merge them, or mark a pair as intended" in en
    (row,) = re.findall(r"<tr data-duplicate>.*?</tr>", en, re.S)  # the pair not marked
    assert f'<a href="/entries/{ACROSS[0]}">{CONVERT}</a>' in row
    assert f'<a href="/entries/{ACROSS[1]}">{CONVERT_AGAIN}</a>' in row
    assert f"<code>{ACROSS[0]}</code>" in row and f"<code>{ACROSS[1]}</code>" in row
    assert re.search(rf'<a href="{re.escape(URL)}#megatron-[^"]+">zh-faq\.md:3</a>', row)  # its place, linked
    assert "ops.md:3" in row  # a source without a url: its file and line
    assert re.search(r'<td class="num" data-label="Score">0\.\d\d</td>', row)
    # The pair marked intended is listed apart, with why.
    (marked,) = re.findall(r"<li data-intended>.*?</li>", en, re.S)
    assert f'<a href="/entries/{WITHIN[0]}">{QUOTA}</a>' in marked and "Asked both ways in the team channel" in marked
    assert "Pairs marked as intended in sources.toml (1)" in en

    zh = duplicates_section(httpx.get(f"{team_url}/insights", headers={"Accept-Language": "zh", **BEARER}).text)
    assert "<h2>几乎重复的条目</h2>" in zh and "合并它们" in zh and "Near-duplicate" not in zh
    assert 'data-label="相像的条目"' in zh and 'data-label="相像度"' in zh
    assert "在 sources.toml 中标明为有意保留的条目对（1）" in zh


def test_the_shipped_faqs_have_no_pair_to_look_at_and_two_marked(admin: TestClient) -> None:
    en = duplicates_section(admin.get("/insights", headers={"Accept-Language": "en", **BEARER}).text)
    assert "No near-duplicate entries." in en and "<tr data-duplicate>" not in en
    assert "Pairs marked as intended in sources.toml (2)" in en
    assert '<a href="/entries/roll-5af528c9">How to convert Megatron models to HF format?</a>' in en
    zh = duplicates_section(admin.get("/insights", headers={"Accept-Language": "zh", **BEARER}).text)
    assert "没有几乎重复的条目。" in zh and '<a href="/entries/roll-5af528c9">Megatron 模型如何转成 HF</a>' in zh


@pytest.mark.parametrize("name", TABLES)
def test_each_table_downloads_as_csv(admin: TestClient, name: str) -> None:
    response = admin.get(f"/insights/{name}.csv?since=7d", headers=BEARER)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == f'attachment; filename="kb-insights-{name}-7d.csv"'
    assert response.text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(response.text[1:])))
    header = {
        "gaps": ["topic", "questions", "wordings", "languages", "channels", "first_asked", "last_asked", "examples"],
        "unhelpful": ["entry_id", "entry_question", "not_helpful", "helpful", "reasons", "comments"],
        "entries": ["entry_id", "entry_question", "answered", "helpful", "not_helpful"],
        "daily": ["day", "channel", "lang", "questions"],
        "doubtful": ["entry_id", "entry_question", "answered", "asked_again", "not_helpful", "low_margin", "examples"],
    }[name]
    assert rows[0] == header and len(rows) > 1
    if name == "gaps":
        resume = next(r for r in rows if r[0] == "如何续训")
        assert resume[1:5] == ["10", "3", "en zh", "slack web widget"]
    if name == "unhelpful":
        assert rows[1][:5] == [RESUME, "如何续训？", "2", "1", "incomplete: 1; outdated: 1"]
    if name == "doubtful":
        signs = {r[0]: r[3:6] for r in rows[1:]}
        assert signs[RESUME] == ["0", "2", "0"]  # two not-helpful votes
        assert {tuple(v) for v in signs.values()} >= {("0", "0", "1"), ("1", "0", "0")}  # a close call; asked again
    if name == "daily":
        assert {r[1] for r in rows[1:]} == {"web", "widget", "slack", "api"} and {r[2] for r in rows[1:]} == {
            "zh",
            "en",
        }


def test_a_bad_window_or_table_says_what_was_wrong(admin: TestClient) -> None:
    json_please = {"Accept": "application/json", **BEARER}
    assert admin.get("/insights?since=forever", headers=json_please).json() == {
        "ok": False,
        "status": 422,
        "error": "since: 'forever' is not a time window; use a number and h, d or w, like 24h, 7d or 2w",
    }
    assert admin.get("/insights/votes.csv", headers=json_please).json() == {
        "ok": False,
        "status": 404,
        "error": "no insights table 'votes'; the tables are gaps, doubtful, unhelpful, entries, daily",
    }


def test_a_stacked_bar_chart_in_svg() -> None:
    assert [nice_ceiling(n) for n in (0, 1, 2, 3, 7, 10, 11, 38, 120)] == [1, 1, 2, 4, 8, 10, 20, 40, 200]
    svg = str(
        stacked_bars(
            "Questions <per> day",
            ["2025-06-01", "2025-06-02", "2025-06-03"],
            [
                Series("web", "Web", (2, 0, 1)),
                Series("slack", "Slack", (2, 1, 0)),
            ],
        )
    )
    assert svg.startswith('<svg class="chart" viewBox="0 0 720 220" role="img"')
    assert (
        "<title>Questions &lt;per&gt; day</title>" in svg
        and "<desc>2025-06-01 to 2025-06-03: Web 3, Slack 3</desc>" in svg
    )
    bars = re.findall(
        r'<rect class="series-(\w+)" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"><title>([^<]+)</title>',
        svg,
    )
    assert [(s, t) for s, _, _, t in bars] == [
        ("web", "2025-06-01 · Web: 2"),
        ("slack", "2025-06-01 · Slack: 2"),
        ("slack", "2025-06-02 · Slack: 1"),
        ("web", "2025-06-03 · Web: 1"),
    ]
    assert float(bars[0][2]) + float(bars[1][2]) == pytest.approx(164.0)  # the tallest day (4) fills the plot
    assert re.findall(r'<text class="axis" x="58" y="[\d.]+" text-anchor="end">(\d+)</text>', svg) == ["0", "2", "4"]
    assert "style" not in svg


# In a real browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    from test_browser import CHROMIUM, CHROMIUM_ARGS  # skips here when Chromium is not installed

    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def live(insights_settings: Settings, serve: Callable[[Any], Any]) -> tuple[str, Any]:
    app = create_app(insights_settings)
    return serve(app).url, app


@pytest.fixture
def tab(browser: Any, live: tuple[str, Any]) -> Iterator[Callable[..., Any]]:
    from test_browser import Page

    from server.ratelimit import SIGN_IN_LIMIT, ClientLimit

    # Every test signs in afresh from the same loopback address: each starts with the sign-in
    # limit's full allowance, as a new client would (tests/test_ratelimit.py tests the limit).
    live[1].state.sign_in_limit = ClientLimit(*SIGN_IN_LIMIT)
    opened: list[Any] = []

    def open_tab(**context: Any) -> Any:
        opened.append(Page(browser, live[0], **context))
        return opened[-1]

    yield open_tab
    for t in opened:
        t.close()  # no console errors (a blocked inline style would be one), no page errors


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_signing_in_and_the_insights_page_in_a_browser(tab: Callable[..., Any], artifacts: Path, scheme: str) -> None:
    from test_browser import DESKTOP, PHONE

    phone = scheme == "dark"
    t = tab(viewport=PHONE if phone else DESKTOP, locale="zh-CN" if phone else "en-US", color_scheme=scheme)
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


def stored(live: tuple[str, Any], sql: str) -> list[tuple[Any, ...]]:
    app = live[1]
    assert app.state.recorder.flush()
    with sqlite3.connect(app.state.recorder.store.path) as db:
        return db.execute(sql).fetchall()


@pytest.mark.browser
def test_votes_from_the_search_and_chat_pages_reach_the_store(
    tab: Callable[..., Any], live: tuple[str, Any], artifacts: Path
) -> None:
    from test_browser import DESKTOP, type_query

    t = tab(viewport=DESKTOP, locale="en-US")
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


def sign_in(t: Any) -> Any:
    page = t.page
    t.goto("/insights?since=7d")
    page.fill("#token", TOKEN)
    page.press("#token", "Enter")
    page.wait_for_url("**/insights?since=7d")
    t.problems[:] = [p for p in t.problems if "status of 401" not in p]  # the sign-in form comes with 401
    return page


def labels_inside_their_charts(page: Any) -> list[str]:
    """Every axis label of every chart that reaches outside its chart's viewBox."""
    return page.evaluate("""() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
        const box = svg.viewBox.baseVal;
        return [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBBox()])
          .filter(([, b]) => b.x < 0 || b.y < 0 || b.x + b.width > box.width || b.y + b.height > box.height)
          .map(([text, b]) => `${text}: ${Math.round(b.x)}..${Math.round(b.x + b.width)} x ${Math.round(b.y)}..${Math.round(b.y + b.height)}`);
    })""")


@pytest.mark.browser
@pytest.mark.parametrize(("width", "name"), [(1280, "desktop"), (375, "phone")])
def test_every_column_and_every_chart_label_shows(
    tab: Callable[..., Any], artifacts: Path, width: int, name: str
) -> None:
    t = tab(viewport={"width": width, "height": 900}, locale="en-US")
    page = sign_in(t)
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
        assert labels == ['"Asked "', '"Languages "', '"Channels "', '"Last asked "'], "each value named by its column"
    assert labels_inside_their_charts(page) == []
    t.goto("/insights?since=90d")  # the narrowest bars: the last day's label comes closest to the edge
    assert labels_inside_their_charts(page) == []
    doubtful = page.locator("#doubtful tbody tr")
    assert doubtful.count() >= 3
    assert page.locator("#doubtful thead th").all_text_contents()[2:] == ["Asked again", "Not helpful", "Close call"]
    t.screenshot(artifacts / f"insights-{name}.png")


@pytest.mark.browser
def test_a_gap_is_dismissed_for_good_and_can_be_restored(
    browser: Any, settings: Settings, entry_ids: list[str], tmp_path: Path, serve: Callable[[Any], Any], artifacts: Path
) -> None:
    from test_browser import Page

    (tmp_path / "index").symlink_to(settings.index_dir)
    seed(tmp_path, entry_ids, time.time())
    store = InsightsStore(store_path(tmp_path))
    store.add_questions(
        [
            Question("what's the weather in Beijing", "en", "web", False, None, None, 10.0, asked_at=time.time() - 90),
            Question("北京天气怎么样", "zh", "widget", False, None, None, 10.0, asked_at=time.time() - 80),
        ]
    )
    store.close()
    mine = settings.with_(data_dir=tmp_path, admin_token=TOKEN)
    t = Page(browser, serve(create_app(mine)).url, viewport={"width": 1280, "height": 900}, locale="en-US")
    page = sign_in(t)
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
    page = sign_in(again)
    assert page.locator("#gaps tbody tr", has_text="Beijing").count() == 0
    page.locator("details.dismissed summary").click()
    again.screenshot(artifacts / "insights-dismissed-phone.png")
    page.locator("details.dismissed form.gap-action button").click()
    page.wait_for_url("**/insights?since=7d#gaps")
    assert page.locator("#gaps tbody tr", has_text="Beijing").count() == 1
    assert page.locator("details.dismissed").count() == 0
    again.close()


def test_dismissing_needs_the_admin_and_a_form_from_this_site(admin: TestClient) -> None:
    json_please = {"Accept": "application/json"}
    anonymous = admin.post("/insights/gaps/dismiss", data={"label": "OOM", "since": "30d"}, headers=json_please)
    assert anonymous.status_code == 401
    elsewhere = admin.post(
        "/insights/gaps/dismiss",
        data={"label": "OOM", "since": "30d"},
        headers={**json_please, **BEARER, "Origin": "https://evil.example.net"},
    )
    assert elsewhere.status_code == 403 and "https://evil.example.net" in elsewhere.json()["error"]
    unknown = admin.post(
        "/insights/gaps/dismiss", data={"label": "no such topic", "since": "30d"}, headers={**json_please, **BEARER}
    )
    assert unknown.json() == {"ok": False, "status": 404, "error": "no gaps named 'no such topic' in the last 30d"}
    page = admin.get("/insights", headers={"Accept-Language": "en", **BEARER}).text
    assert "OOM" in page, "nothing was dismissed"
