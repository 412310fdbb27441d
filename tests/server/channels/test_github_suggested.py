"""The GitHub bot's suggest mode against the stand-in for GitHub's API (a real HTTP server on a loopback port): the
answer kept as a suggestion on /insights (not posted), the issue labelled, a suggestion updated when its issue is
edited and dropped when it is closed; Post publishing it as comment mode would (one comment an issue), Dismiss
dropping it, both admin only and from this site only."""

from __future__ import annotations

import html
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.insights import InsightsStore, store_path
from kb.insights.migrations import MIGRATIONS
from server.app import create_app
from server.channels.github.comment import MARKER
from server.channels.github.suggestions import CHANNEL, SuggestedAnswer, from_pending
from tests.support.github import SECRET, GitHubStandIn, delivery, discussion_event, issue_event

RESUME = "How do I resume training in slime after it stopped?"
SURE = "github=0.25"  # the suite's point for this channel, so that the shipped FAQs' plain questions are answered
TOKEN = "suggested-admin-token-1234"
ISSUE = "owner/repo#1"
BASE = "https://faq.example.com"


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture
def bot(settings: Any, github: GitHubStandIn, tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """A client of an app of its own data directory whose GitHub bot suggests (posting to the stand-in)."""
    github.reset()
    (tmp_path / "index").symlink_to(settings.index_dir)
    opened: list[TestClient] = []

    def make(**more: Any) -> TestClient:
        more.setdefault("github_token", "ghp-test-token")
        more.setdefault("github_suggest_label", "faq-suggested")
        own = settings.with_(
            data_dir=tmp_path,
            github_webhook_secret=SECRET,
            github_api_url=github.url,
            github_mode="suggest",
            channel_precision=SURE,
            admin_token=TOKEN,
            base_url=more.pop("base_url", BASE),
            **more,
        )
        client = TestClient(create_app(own)).__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


def deliver(client: TestClient, event: str, payload: dict[str, Any]) -> Any:
    body, headers = delivery(event, payload)
    response = client.post("/github/webhook", content=body, headers=headers)
    assert response.status_code == 202, response.text
    return response


def suggestions(client: TestClient) -> list[SuggestedAnswer]:
    store: InsightsStore = client.app.state.recorder.store  # type: ignore[attr-defined]
    return [from_pending(p) for p in store.pending.waiting(CHANNEL)]


def sign_in(client: TestClient, lang: str = "en") -> str:
    """Sign in with the form, as a browser does; the page's form token."""
    client.headers["Accept-Language"] = lang
    token = re.search(r'name="form_token" value="([\w-]+)"', client.get("/insights").text)
    assert token is not None
    signed = client.post("/insights/sign-in", data={"token": TOKEN, "form_token": token[1]}, follow_redirects=False)
    assert signed.status_code == 303
    page = client.get("/insights?since=7d").text
    found = re.search(r'name="form_token" value="([\w-]+)"', page)
    assert found is not None
    return found[1]


def act(client: TestClient, action: str, form_token: str, number: int = 1, **headers: str) -> Any:
    data = {"form_token": form_token, "since": "7d", "repo": "owner/repo", "number": str(number)}
    return client.post(f"/insights/suggested/{action}", data=data, headers=headers, follow_redirects=False)


def test_suggest_mode_keeps_the_answer_for_insights_labels_the_issue_and_posts_nothing(
    bot: Any, github: GitHubStandIn
) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME, "Training stopped halfway. How can I go on?"))
    [kept] = suggestions(client)
    assert (kept.repo, kept.number, kept.kind, kept.title) == ("owner/repo", 1, "issue", RESUME)
    assert kept.url == "https://github.com/owner/repo/issues/1" and kept.entry_id == "slime-b0ab398d"
    assert kept.comment.startswith(MARKER) and "--load" in kept.comment and 0.25 <= kept.confidence <= 1
    assert github.comments == {} and github.labels == {ISSUE: ["faq-suggested"]}

    edited = issue_event(RESUME + " With Megatron checkpoints.", "Still stuck.", action="edited")
    deliver(client, "issues", edited)
    [again] = suggestions(client)  # updated, not a second
    assert again.title == RESUME + " With Megatron checkpoints." and again.suggested_at >= kept.suggested_at

    deliver(client, "issues", issue_event(RESUME, action="closed", state="closed"))
    assert suggestions(client) == [] and github.comments == {}


def test_an_issue_edited_into_one_the_bot_leaves_alone_loses_its_suggestion(bot: Any) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    assert len(suggestions(client)) == 1
    deliver(client, "issues", issue_event(RESUME, action="edited", labels=("no-faq-bot",)))
    assert suggestions(client) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_lists_a_suggestion_and_post_publishes_it_once(bot: Any, github: GitHubStandIn, lang: str) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client, lang)
    page = client.get("/insights?since=7d").text
    title = {"en": "Suggested answers for GitHub issues", "zh": "GitHub 议题的建议回答"}[lang]
    button = {"en": ">Post</button>", "zh": ">发布</button>"}[lang]
    assert title in page and button in page
    assert '<a href="https://github.com/owner/repo/issues/1" rel="noopener noreferrer">owner/repo#1</a>' in page
    assert 'href="/entries/slime-b0ab398d"' in page

    posted = act(client, "post", form_token)
    assert posted.status_code == 303 and posted.headers["location"] == "/insights?since=7d#suggested"
    [comment] = github.on(ISSUE)
    assert comment.startswith(MARKER) and "--load" in comment
    assert suggestions(client) == [] and "data-suggested=" not in client.get("/insights").text

    deliver(client, "issues", issue_event(RESUME + " (edited)", "More detail.", action="edited"))
    assert act(client, "post", form_token).status_code == 303
    assert len(github.on(ISSUE)) == 1  # the bot's one comment, updated: never a second
    assert github.labels == {ISSUE: ["faq-suggested"]}  # a posted suggestion keeps its label


def test_dismiss_drops_the_suggestion_and_takes_the_label_off(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    assert act(client, "dismiss", form_token).status_code == 303
    assert suggestions(client) == [] and github.comments == {} and github.labels == {ISSUE: []}
    gone = act(client, "dismiss", form_token, Accept="application/json")
    assert gone.status_code == 404
    assert gone.json()["error"] == "no answer is suggested for 'owner/repo'#1 (posted or dismissed already?)"


def test_a_discussions_suggestion_is_posted_over_graphql(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "discussion", discussion_event(RESUME, "Training stopped halfway."))
    [kept] = suggestions(client)
    assert kept.kind == "discussion" and kept.node_id == "D_9" and github.labels == {}
    assert act(client, "post", sign_in(client), number=9).status_code == 303
    [(node, body)] = github.discussion_comments
    assert node == "D_9" and "--load" in body


def test_suggestions_kept_before_the_upgrade_are_listed_and_posted_with_their_ids(
    bot: Any, github: GitHubStandIn, tmp_path: Path
) -> None:
    """A data directory whose insights file is at schema version 8 (suggested answers in their own table): after the
    upgrade the page lists them, and Post reaches the Discussion by the node id the migration kept."""
    with sqlite3.connect(store_path(tmp_path)) as db:
        db.executescript(
            ";\n".join(MIGRATIONS[:8]) + ";\nCREATE TABLE schema_version (version INTEGER NOT NULL);"
            "INSERT INTO schema_version VALUES (8);"
            "INSERT INTO suggested_answers VALUES ('owner/repo', 5, 'discussion', 'Resume after a crash?', "
            "'https://github.com/owner/repo/discussions/5', 'D_5', 0, 'slime-b0ab398d', 0.9, 'See --load.', 1.75e9);"
        )
    client = bot()
    page = client.get("/insights?since=7d", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert 'data-suggested="owner/repo#5"' in page and "Resume after a crash?" in page
    assert act(client, "post", sign_in(client), number=5).status_code == 303
    assert github.discussion_comments == [("D_5", "See --load.")] and suggestions(client) == []


def test_posting_and_dismissing_are_for_the_admin_from_this_site_only(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    stranger = act(client, "post", "", Accept="application/json")
    assert stranger.status_code == 401
    form_token = sign_in(client)
    assert act(client, "post", "").status_code == 403  # no form token
    assert act(client, "post", form_token, Origin="https://evil.example").status_code == 403
    assert act(client, "publish", form_token).status_code == 404
    assert github.comments == {} and len(suggestions(client)) == 1


def test_post_without_a_token_says_what_to_set_and_keeps_the_suggestion(bot: Any, github: GitHubStandIn) -> None:
    client = bot(github_token="")
    deliver(client, "issues", issue_event(RESUME))
    assert github.labels == {} and len(suggestions(client)) == 1  # kept, though nothing can label the issue
    refused = act(client, "post", sign_in(client), Accept="application/json")
    assert refused.status_code == 502
    assert refused.json()["error"] == (
        "owner/repo#1: not posted: the GitHub bot has no token to post with "
        "(set KB_GITHUB_TOKEN, or KB_GITHUB_APP_ID and KB_GITHUB_PRIVATE_KEY)"
    )
    assert len(suggestions(client)) == 1


def test_post_when_github_is_down_keeps_the_suggestion_and_says_why(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    github.down = True
    refused = act(client, "post", form_token, Accept="application/json")
    assert refused.status_code == 502 and "HTTP 502" in refused.json()["error"]
    assert len(suggestions(client)) == 1


def test_the_suggestions_survive_a_restart(bot: Any, settings: Any, tmp_path: Path) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    client.__exit__(None, None, None)
    store = InsightsStore(store_path(tmp_path))
    try:
        assert [s.entry_id for s in store.pending.waiting(CHANNEL)] == ["slime-b0ab398d"]
    finally:
        store.close()


def test_post_without_kb_base_url_refuses_naming_the_setting_and_keeps_the_suggestion(
    bot: Any, github: GitHubStandIn
) -> None:
    client = bot(base_url="")
    deliver(client, "issues", issue_event(RESUME))
    refused = act(client, "post", sign_in(client), Accept="application/json")
    assert refused.status_code == 409
    assert refused.json()["error"] == (
        "'owner/repo'#1: not posted: set KB_BASE_URL to this site's public address (https://faq.example.com): "
        "the comment links its entries there"
    )
    assert github.comments == {} and len(suggestions(client)) == 1
    assert "http://testserver" not in suggestions(client)[0].comment  # never the address a request reached


def test_the_page_previews_the_exact_comment_and_links_the_posted_one(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    [kept] = suggestions(client)
    assert f"{BASE}/entries/slime-b0ab398d" in kept.comment  # the entry linked at KB_BASE_URL
    page = client.get("/insights?since=7d").text
    preview = re.search(
        r'<details class="draft suggested-preview"><summary>Preview the comment</summary>'
        r"<pre><code>(.*?)</code></pre>",
        page,
        re.S,
    )
    assert preview is not None and html.unescape(preview[1]) == kept.comment
    assert act(client, "post", form_token).status_code == 303
    [posted] = github.comments[ISSUE]
    assert posted["body"] == kept.comment
    page = client.get("/insights?since=7d").text
    assert (
        f'Posted to owner/repo#1. <a href="{posted["html_url"]}" rel="noopener noreferrer">See the comment</a>' in page
    )


def test_six_posts_at_once_make_one_comment_and_post_and_dismiss_together_do_one(
    bot: Any, github: GitHubStandIn
) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    github.slow = 0.3  # each call takes a while, so that the clicks overlap
    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = sorted(pool.map(lambda _: act(client, "post", form_token).status_code, range(6)))
    assert statuses == [303] + [404] * 5 and len(github.on(ISSUE)) == 1

    deliver(client, "issues", issue_event(RESUME, number=2))
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(pool.map(lambda a: (a, act(client, a, form_token, number=2).status_code), ["post", "dismiss"]))
    assert sorted(done.values()) == [303, 404]
    posted = github.on("owner/repo#2")
    assert (len(posted), github.labels.get("owner/repo#2")) == (
        (1, ["faq-suggested"]) if done["post"] == 303 else (0, [])
    )
    assert suggestions(client) == []


PAGE = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # a browser's form


def row_of(page: str, issue: str = ISSUE) -> str:
    """The suggestion's row on the page ("" when it is not listed)."""
    found = re.search(rf'<tr [^>]*data-suggested="{re.escape(issue)}">(.*?)</tr>', page, re.S)
    return found[1] if found else ""


def test_from_the_page_post_without_a_token_says_why_beside_the_row_and_shows_no_post_button(
    bot: Any, github: GitHubStandIn
) -> None:
    client = bot(github_token="")
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    row = row_of(client.get("/insights?since=7d").text)
    assert 'data-action="dismiss"' in row and 'data-action="post"' not in row  # Post cannot work here
    assert "Post is not possible here: the GitHub bot has no token" in client.get("/insights?since=7d").text

    # A Post sent all the same (a page loaded before the token was taken away): the page again, saying why.
    sent = act(client, "post", form_token, **PAGE)
    assert sent.status_code == 303 and sent.headers["location"].startswith("/insights?")
    page = client.get(sent.headers["location"]).text
    said = re.search(r'<p class="suggested-said warn" role="status" data-said="no_token">(.*?)</p>', row_of(page))
    assert said and html.unescape(said[1]).startswith("owner/repo#1 was not posted: the GitHub bot has no token")
    assert len(suggestions(client)) == 1 and github.comments == {}

    dismissed = client.get(act(client, "dismiss", form_token, **PAGE).headers["location"]).text
    assert row_of(dismissed) == "" and "The suggested answer for owner/repo#1 was dismissed." in dismissed
    again = client.get(act(client, "dismiss", form_token, **PAGE).headers["location"]).text
    assert "There is no suggested answer for owner/repo#1 any more" in again


def test_from_the_page_a_post_github_refuses_says_so_beside_the_row(bot: Any, github: GitHubStandIn) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    form_token = sign_in(client)
    github.down = True
    sent = act(client, "post", form_token, **PAGE)
    assert sent.status_code == 303
    row = row_of(client.get(sent.headers["location"]).text)
    assert 'data-said="refused"' in row and "GitHub refused it or did not answer" in row and "HTTP 502" in row
    assert 'data-action="post"' in row and len(suggestions(client)) == 1  # kept: try again


def test_a_replica_with_the_bot_off_lists_the_suggestions_without_buttons_and_says_where_to_act(
    bot: Any, settings: Any, tmp_path: Path
) -> None:
    client = bot()
    deliver(client, "issues", issue_event(RESUME))
    off = settings.with_(data_dir=tmp_path, admin_token=TOKEN, github_webhook_secret="")  # the same database
    with TestClient(create_app(off)) as replica:
        sign_in(replica)
        page = replica.get("/insights?since=7d").text
    row = row_of(page)
    assert row and "data-action=" not in row  # no button that would answer "Not Found"
    assert "The GitHub bot is off on this server: post or dismiss these from the server where it is on" in page
