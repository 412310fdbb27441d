"""The GitHub channel harvests an issue when its webhook hears it closed (server/channels/github/harvest.py): its
comments read through the bot's client from a stand-in for GitHub's API (a real HTTP server on a loopback port),
page by page; `kb harvest`'s rules applied; the draft kept for /insights and shown as "see also" at once. Closed as
not planned, answered by no maintainer, in a repository KB_HARVEST_REPOS leaves out, or without a token: no draft,
and the comments read once, for the votes on the bot's comment, where the delivery says enough for the harvest. A hostile thread (65,536-character body and comments of nested
quotes, mentions and HTML) is harvested in bounded time with nothing of it live in the draft. Deliveries are
signed with the webhook's secret."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.channels.github.comment import MARKER
from tests.support.github import SECRET, GitHubStandIn, comment_event, delivery, issue_event
from tests.support.llm import CONDENSED, fake_llm_app
from tests.support.servers import own_data

NPU = "How do I run slime on Huawei Ascend NPUs?"
RESUME = "How do I resume training in slime after it stopped?"
ANSWER = (
    "Use the `mindspeed` backend image and pass `--device npu`; the Ascend guide in docs/npu.md lists the "
    "driver versions that work."
)
BODY = 65_536


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture
def bot(settings: Any, github: GitHubStandIn, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Any]]:
    """A client of an app (a data directory of its own) whose GitHub channel reads from the stand-in."""
    github.reset()
    opened: list[TestClient] = []

    def make(**more: Any) -> TestClient:
        more.setdefault("github_token", "ghp-test-token")
        more.setdefault("github_mode", "suggest")
        own = own_data(settings, tmp_path_factory, "github-harvest").with_(
            github_webhook_secret=SECRET, github_api_url=github.url, reload_interval=0, **more
        )
        client = TestClient(create_app(own)).__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


def comment(body: str, login: str, association: str, at: str = "2026-05-01T10:00:00Z", bot: bool = False) -> dict:
    return {
        "id": abs(hash((body[:50], login, at))) % 10**9,
        "body": body,
        "user": {"login": login, "type": "Bot" if bot else "User"},
        "author_association": association,
        "created_at": at,
        "html_url": "https://github.com/THUDM/slime/issues/21#issuecomment-1",
    }


def closed(number: int, title: str = NPU, reason: str = "completed", body: str = "We have 910B cards.") -> dict:
    payload = issue_event(title, body, action="closed", number=number, state="closed", repo="THUDM/slime")
    payload["issue"] |= {"state_reason": reason, "closed_at": "2026-05-02T00:00:00Z"}
    return payload


def deliver(client: TestClient, payload: dict[str, Any]) -> Any:
    body, headers = delivery("issues", payload)
    response = client.post("/github/webhook", content=body, headers=headers)
    assert response.status_code == 202, response.text
    return response


def kept(client: TestClient, number: int) -> Any:
    return client.app.state.recorder.store.drafts.get("THUDM/slime", number)


def comments_read(github: GitHubStandIn, number: int) -> list[int]:
    """The pages of the issue's comments the harvest read (the bot's own comment is looked for without a page)."""
    return [page for issue, page in github.pages if issue == f"THUDM/slime#{number}"]


def reads(github: GitHubStandIn, number: int) -> list[str]:
    """Every read of the issue's comments, whoever asked (the votes, the harvest)."""
    return [path for method, path, _ in github.calls if method == "GET" and path.endswith(f"/issues/{number}/comments")]


def test_a_closed_issue_with_a_maintainers_answer_becomes_a_draft_and_see_also(
    bot: Callable[..., TestClient], github: GitHubStandIn
) -> None:
    client = bot()
    github.comments["THUDM/slime#21"] = [
        comment("Which image do you use?", "zhuzilin", "MEMBER", "2026-05-01T09:00:00Z"),
        comment("The default one.", "asker", "NONE", "2026-05-01T09:30:00Z"),
        comment(f"> The default one.\n\n@asker {ANSWER} <img src=x onerror=alert(1)>", "zhuzilin", "MEMBER"),
        comment("Thanks, that worked!", "asker", "NONE", "2026-05-01T11:00:00Z"),
    ]
    deliver(client, closed(21))
    draft = kept(client, 21)
    assert draft is not None and draft.status == "new"
    assert draft.draft.question.startswith(NPU) and draft.draft.url == "https://github.com/THUDM/slime/issues/21"
    assert draft.draft.answer == f"`@asker` {ANSWER}"  # the quote dropped, the mention inert, the tag gone
    assert draft.draft.signals["answer"] == "thanked" and draft.draft.answer_author == "zhuzilin"
    assert comments_read(github, 21) == [1]
    found = client.get("/api/search", params={"q": "How to run slime on NPU"}).json()
    assert found["state"] == "not_covered" and found["see_also"][0]["number"] == 21


def test_a_bot_comment_never_carries_see_also(bot: Callable[..., TestClient], github: GitHubStandIn) -> None:
    client = bot(github_mode="comment")
    github.comments["THUDM/slime#21"] = [comment(ANSWER, "zhuzilin", "MEMBER")]
    deliver(client, closed(21))
    assert client.get("/api/search", params={"q": "How to run slime on NPU"}).json()["see_also"]
    body, headers = delivery(
        "issue_comment", comment_event("/faq How to run slime on NPU", number=30, repo="THUDM/slime")
    )
    assert client.post("/github/webhook", content=body, headers=headers).status_code == 202
    [said] = github.on("THUDM/slime#30")
    assert "issues/21" not in said and "may help" not in said


def test_its_comments_are_read_page_by_page(bot: Callable[..., TestClient], github: GitHubStandIn) -> None:
    client = bot()
    chatter = [comment(f"Same here, on cluster {i}.", f"user{i}", "NONE", f"2026-04-{1 + i % 28:02d}T00:00:00Z") for i in range(150)]  # fmt: skip
    github.comments["THUDM/slime#22"] = chatter + [comment(ANSWER, "zhuzilin", "MEMBER")]
    deliver(client, closed(22))
    assert comments_read(github, 22) == [1, 2]  # 100, then 51
    assert kept(client, 22).draft.answer == ANSWER  # the answer was on the second page


@pytest.mark.parametrize(
    ("reason", "more", "comments", "read"),
    [
        ("not_planned", {}, [("maintainer", "MEMBER")], 1),
        ("duplicate", {}, [("maintainer", "MEMBER")], 1),
        ("completed", {}, [("someone", "NONE")], 1),
        ("completed", {}, [("github-actions", "MEMBER")], 1),
        ("completed", {"harvest_repos": "alibaba/ROLL"}, [("maintainer", "MEMBER")], 1),
        ("completed", {"github_token": ""}, [("maintainer", "MEMBER")], 0),
    ],
    ids=["not planned", "duplicate", "no maintainer", "a bot", "another repository", "no token"],
)
def test_no_draft_without_what_the_rules_ask(
    bot: Callable[..., TestClient],
    github: GitHubStandIn,
    reason: str,
    more: dict[str, str],
    comments: list[tuple[str, str]],
    read: int,
) -> None:
    """No draft; the comments are read once (the votes look for the bot's comment in them), and not again for the
    harvest, even when the delivery says enough for it; without a token, not at all."""
    client = bot(**more)
    github.comments["THUDM/slime#23"] = [comment(ANSWER, login, association) for login, association in comments]
    deliver(client, closed(23, reason=reason))
    assert kept(client, 23) is None
    assert len(reads(github, 23)) == read


def test_with_an_llm_a_long_thread_is_condensed(
    bot: Callable[..., TestClient], github: GitHubStandIn, serve: Callable[[Any], Any]
) -> None:
    requests: list[dict[str, Any]] = []
    llm = serve(fake_llm_app(requests)).url  # a stand-in for an OpenAI-compatible endpoint: no LLM runs here
    client = bot(llm_base_url=f"{llm}/v1", llm_model="condense")
    log = "RuntimeError: NCCL timeout while waiting for rank 3\n" * 200
    github.comments["THUDM/slime#25"] = [comment(log, "asker", "NONE", "2026-05-01T09:00:00Z"), comment(ANSWER, "zhuzilin", "MEMBER")]  # fmt: skip
    deliver(client, closed(25, body=log))
    draft = kept(client, 25).draft
    assert draft.signals["condensed"] == "llm" and draft.question.endswith(CONDENSED["question"])
    assert [r["body"]["stream"] for r in requests] == [False]


def test_a_hostile_thread_neither_stalls_nor_reaches_the_draft(
    bot: Callable[..., TestClient], github: GitHubStandIn
) -> None:
    client = bot()
    shapes = ["> " * (BODY // 2), "@a " * (BODY // 3), "<b " * (BODY // 3), "<!--" * (BODY // 4), "```" * (BODY // 3)]
    noise = [comment(text, f"user{i}", "NONE") for i, text in enumerate(shapes * 4)]
    hostile = ANSWER + " @everyone <script>alert(2)</script>" + " <img src=x onerror=alert(1)>" * 2000
    github.comments["THUDM/slime#24"] = noise + [comment(hostile, "zhuzilin", "MEMBER", "2026-05-01T12:00:00Z")]
    started = time.perf_counter()
    deliver(client, closed(24, title=NPU + " <script>alert(3)</script> @zhuzilin", body="> " * (BODY // 2)))
    took = time.perf_counter() - started
    draft = kept(client, 24).draft
    assert "<script" not in draft.answer and "<img" not in draft.answer and "<script" not in draft.question
    assert "`@everyone`" in draft.answer and "`@zhuzilin`" in draft.question
    assert took < 60  # a generous bound: linear work on a few megabytes, not a backtracking pattern


def test_a_thread_asking_what_a_waiting_draft_asks_joins_it(
    bot: Callable[..., TestClient], github: GitHubStandIn
) -> None:
    """As `kb harvest` groups the threads of one run, a thread closed later that asks the same as a draft waiting
    on /insights becomes one more thread of that draft (counted as asking it), not a second draft; one asking
    something else is a draft of its own."""
    client = bot()
    for number in (21, 26, 27):
        github.comments[f"THUDM/slime#{number}"] = [comment(ANSWER, "zhuzilin", "MEMBER")]
    deliver(client, closed(21))
    deliver(client, closed(26, title=NPU.replace("How do I", "How can I")))
    deliver(client, closed(27, title="Why does the reward stay at zero after the first rollout?"))
    first = kept(client, 21).draft
    assert [(a.number, a.url) for a in first.alternates] == [(26, "https://github.com/THUDM/slime/issues/26")]
    assert first.asked == 2 and kept(client, 26) is None
    assert kept(client, 27) is not None and not kept(client, 27).draft.alternates
    deliver(client, closed(26, title=NPU.replace("How do I", "How can I")))  # the same thread heard again
    assert [a.number for a in kept(client, 21).draft.alternates] == [26]
    shown = client.get("/api/search", params={"q": "How to run slime on Huawei Ascend NPU cards"}).json()["see_also"]
    assert [t["number"] for t in shown] == [21]  # one draft: one thread shown, its own


def test_a_close_reads_the_issues_comments_once_for_its_votes_and_its_harvest(
    bot: Callable[..., TestClient], github: GitHubStandIn
) -> None:
    """On `issues closed` the bot's comment is looked for (its reactions are votes) and the thread harvested: both
    from one read of the issue's comments."""
    client = bot(github_mode="comment", channel_precision="github=0.25")
    opened = issue_event(RESUME, number=28, repo="THUDM/slime")
    body, headers = delivery("issues", opened)
    assert client.post("/github/webhook", content=body, headers=headers).status_code == 202
    [mine] = github.comments["THUDM/slime#28"]
    assert MARKER in mine["body"]
    github.reactions[mine["id"]] = [("ada", "+1")]
    github.comments["THUDM/slime#28"].append(comment(ANSWER, "zhuzilin", "MEMBER"))
    store = client.app.state.recorder.store
    votes = store.count("votes")
    github.calls.clear()
    deliver(client, closed(28, title=RESUME))
    assert reads(github, 28) == ["/repos/THUDM/slime/issues/28/comments"]
    assert store.count("votes") == votes + 1 and kept(client, 28) is not None


def test_a_contributors_answer_is_harvested_only_when_kb_harvest_associations_names_them(
    bot: Callable[..., TestClient], github: GitHubStandIn
) -> None:
    """CONTRIBUTOR (anyone with a merged commit) is left out by default; a maintainer who names it in
    KB_HARVEST_ASSOCIATIONS has its answers harvested on close."""
    github.comments["THUDM/slime#31"] = [comment(ANSWER, "helper", "CONTRIBUTOR")]
    client = bot()
    deliver(client, closed(31))
    assert kept(client, 31) is None
    github.comments["THUDM/slime#32"] = [comment(ANSWER, "helper", "CONTRIBUTOR")]
    wide = bot(harvest_associations="OWNER,MEMBER,COLLABORATOR,CONTRIBUTOR")
    deliver(wide, closed(32))
    draft = kept(wide, 32)
    assert draft is not None and draft.draft.answer_author == "helper" and draft.draft.answer == ANSWER
