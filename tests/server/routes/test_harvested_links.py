"""A harvested thread's URL is linked only when it is http(s) on the tracker's own host (github.com): a draft whose
file of threads said `javascript:…`, another site or credentials is accepted as an answer all the same, and its entry
page, the search page, the JSON the widget and the search read, and /insights show no link for it, while a real
thread's link is kept. The server is real: uvicorn on a loopback port, with a data directory of its own."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser
from typing import Any, Callable

import httpx
import pytest

from kb.entries import Entry
from kb.harvest import Draft, ThreadQuestion
from kb.hyperlinks import tracker_link, web_link
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from kb.written import WrittenAnswer, WrittenFile, entry_of
from server import create_app
from tests.server.routes.test_harvested import decide, signed_in
from tests.support.seeded_insights import TOKEN

GOOD = "https://github.com/THUDM/slime/issues/91"
HOSTILE = {
    71: "javascript:alert(document.domain)//https://github.com/THUDM/slime/issues/71",
    73: "https://evil.example/THUDM/slime/issues/73",
    75: "https://github.com@evil.example/THUDM/slime/issues/75",
}
QUESTIONS = {
    71: "How do I pin the Megatron commit slime builds against?",
    73: "Can slime resume rollout workers after a preemption?",
    75: "Where does slime keep its rollout buffer on disk?",
    91: "How do I set the number of rollout engines in slime?",
}


def draft(number: int, url: str) -> Draft:
    return Draft(
        repo="THUDM/slime", number=number, url=url, kind="issue", question=QUESTIONS[number],
        answer=f"See the slime docs, section {number}.", signals={"answer": "thanked", "by": "MEMBER"},
        closed_at=1_760_000_000.0 + number, answer_author="zhuzilin",
        alternates=(ThreadQuestion(f"slime question {number} in other words", "javascript:alert(2)", number + 100),),
    )  # fmt: skip


class Links(HTMLParser):
    """The targets of a page's links, as a browser reads them."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [value or "" for name, value in attrs if name == "href"]


def hostile_links(html: str) -> list[str]:
    hrefs = Links(html).hrefs
    return [h for h in hrefs if "evil.example" in h or h.strip().lower().startswith(("javascript:", "data:"))]


@pytest.fixture(scope="module")
def harvest_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    data_dir = tmp_path_factory.mktemp("harvest-links")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep([*(draft(n, url) for n, url in HOSTILE.items()), draft(91, GOOD)])
    store.close()
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)


@pytest.mark.slow
def test_a_harvested_url_is_linked_only_on_the_trackers_host(
    harvest_settings: Settings, serve: Callable[[Any], Any]
) -> None:
    live = serve(create_app(harvest_settings)).url
    with signed_in(live) as browser:
        listed = browser.get("/insights").text
        assert hostile_links(listed) == [] and GOOD in Links(listed).hrefs  # the drafts, before they are accepted
        for number in [*HOSTILE, 91]:
            assert decide(browser, "accept", number).status_code == 303
        written = {a.questions["en"]: a for a in WrittenFile(harvest_settings.written_path).read()}
        assert {a.extra["url"] for a in written.values()} == {"", GOOD}

        for number, question in QUESTIONS.items():
            answer = written[question]
            page = browser.get(f"/entries/{answer.id}").text
            found = browser.get("/search", params={"q": question}).text
            assert question in page and hostile_links(page) == [] and hostile_links(found) == []
            api = httpx.get(f"{live}/api/entries/{answer.id}").json()
            hits = httpx.get(f"{live}/api/search", params={"q": question}).json()["hits"]
            chat = httpx.post(f"{live}/api/chat", params={"channel": "widget"}, json={"message": question}).json()
            urls = {api["url"], *(h["url"] for h in hits if h["id"] == answer.id)}
            urls |= {s["url"] for s in chat["sources"] if s["id"] == answer.id}
            assert urls == ({GOOD} if number == 91 else {""}), (number, urls)
            assert (GOOD in Links(page).hrefs) == (number == 91)
        assert hostile_links(browser.get("/insights").text) == []


def test_an_answer_saved_with_a_bad_thread_url_gives_no_link() -> None:
    """An answer accepted before the check (its row in written.jsonl says `javascript:`) is served unlinked."""
    answer = WrittenAnswer("w-1", {"en": "How?", "zh": "怎么做？"}, {"en": "So.", "zh": "这样。"})
    for url, harvested, linked in (
        ("javascript:alert(1)", True, ""),
        ("https://evil.example/a/b/issues/1", True, ""),
        (GOOD, True, GOOD),
        ("https://docs.example.com/faq#q", False, "https://docs.example.com/faq#q"),  # a row's own link, by hand
        (" javascript:alert(1)", False, ""),
    ):
        made: Entry = entry_of(replace(answer, extra={"url": url, "harvested": [url] if harvested else []}), 1, "w")
        assert made.url == linked and [t.url for t in made.translations] == [linked], url


@pytest.mark.parametrize(
    ("url", "tracker", "web"),
    [
        (GOOD, GOOD, GOOD),
        ("HTTPS://GitHub.com/a/b/issues/1", "HTTPS://GitHub.com/a/b/issues/1", "HTTPS://GitHub.com/a/b/issues/1"),
        ("http://github.com/a/b/issues/1", "http://github.com/a/b/issues/1", "http://github.com/a/b/issues/1"),
        ("JaVaScRiPt:alert(1)", "", ""),
        ("\tjavascript:alert(1)", "", ""),
        ("java\nscript:alert(1)", "", ""),
        ("vbscript:msgbox(1)", "", ""),
        ("data:text/html,<script>alert(1)</script>", "", ""),
        ("//github.com/a/b/issues/1", "", ""),
        ("/entries/x", "", ""),
        ("https://evil.example/a", "", "https://evil.example/a"),
        ("https://github.com.evil.example/a", "", "https://github.com.evil.example/a"),
        ("https://github.com@evil.example/a", "", ""),
        ("https://evil.example\\@github.com/a", "", ""),
        ("https://github.com:8443/a", "", ""),
        ('https://github.com/a"onmouseover="alert(1)', "", ""),
        ("", "", ""),
    ],
)
def test_which_urls_are_links(url: str, tracker: str, web: str) -> None:
    assert tracker_link(url) == tracker and web_link(url) == web
