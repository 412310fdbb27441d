"""The /insights page behind KB_ADMIN_TOKEN: off without a token, a sign-in form without the token,
the tables with a bearer token or the sign-in cookie, a CSV export of each table, the near-duplicate
entries the build found (over a real server). In a real browser: tests/browser/test_insights.py."""

from __future__ import annotations

import csv
import io
import re
import shutil
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from ingest import build_index
from kb.insights import TABLES
from kb.settings import Settings
from server import create_app
from server.rendering.chart import Series, nice_ceiling, stacked_bars
from tests.support.duplicates_faq import ACROSS, CONVERT, CONVERT_AGAIN, QUOTA, URL, WITHIN, intended, write_team_faqs
from tests.support.forms import form_token
from tests.support.seeded_insights import BEARER, RESUME, TOKEN


@pytest.fixture(scope="module")
def admin(insights_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(insights_settings)) as client:
        yield client


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.parametrize(("lang", "said"), [("en", "(a vote from Feishu, without its question)"), ("zh", "（来自飞书的投票，没有问题原文）")])  # fmt: skip
def test_a_vote_without_its_question_names_the_channel_it_came_from(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, entry_ids: list[str], lang: str, said: str
) -> None:
    """A chat bot's button says which entry was not helpful but not what was asked: the comment is listed with the
    channel's name in the reader's language, whichever channel it is."""
    from kb.insights import InsightsStore, Vote, store_path
    from tests.support.servers import own_data

    own = own_data(settings, tmp_path_factory, "button-vote").with_(admin_token=TOKEN)
    store = InsightsStore(store_path(own.data_dir))
    store.votes.add([Vote(entry_ids[0], False, "", "voter-1", "feishu", None, "the flag was renamed in v0.3")])
    store.close()
    with TestClient(create_app(own)) as client:
        html = client.get("/insights", headers={"Accept-Language": lang, **BEARER}).text
    unhelpful = html.split('id="unhelpful"')[1]
    assert f'<span class="muted">{said}</span>' in unhelpful and "the flag was renamed in v0.3" in unhelpful
