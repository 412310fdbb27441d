"""One bot comment per issue across server processes: two apps, each on a real uvicorn on a loopback port and each
with its own in-process locks, share one insights database (one SQLite file, or PostgreSQL as replicas do) and
receive the same issue's deliveries at once; the GitHub API is the stand-in (tests/support/github.py, a real HTTP
server on another loopback port), slow enough that the answers overlap."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.insights import InsightsStore, store_path
from server import create_app
from server.channels.github.backlog import IssueLocks
from server.channels.github.client import GitHubAPI, GitHubUnavailable
from tests.support.github import BOT, SECRET, GitHubStandIn, delivery, issue_event
from tests.support.servers import own_data

RESUME = "How do I resume training in slime after it stopped?"


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture(autouse=True)
def fresh_github(github: GitHubStandIn) -> Iterator[GitHubStandIn]:
    yield from github.fresh()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, settings: Any) -> dict[str, Any]:
    """The settings that make both apps share one database."""
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("database_url")}
    return {}  # the settings' one data directory: one insights.sqlite


def test_two_servers_receiving_one_issues_deliveries_at_once_make_one_comment(
    settings: Any,
    github: GitHubStandIn,
    serve: Callable[[Any], Any],
    database: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    github.slow = 3.0  # each call takes a while, so that the answers overlap however busy the machine
    own = own_data(settings, tmp_path_factory, "github-claims").with_(  # one database of their own, shared
        github_webhook_secret=SECRET,
        github_token="ghp-test-token",
        github_api_url=github.url,
        github_mode="comment",
        channel_precision="github=0.25",
        **database,
    )
    apps = [create_app(own), create_app(own)]
    urls = [serve(app).url for app in apps]
    for url in urls:  # each app warmed up one at a time (two servers of one process start side by side)
        ping, headers = delivery("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
        assert httpx.post(f"{url}/github/webhook", content=ping, headers=headers).status_code in (200, 202)
        assert httpx.get(f"{url}/api/search", params={"q": RESUME}, timeout=60).status_code == 200
    events = [issue_event(f"{RESUME} ({n})", "Training stopped.", action="edited", number=31) for n in range(4)]
    sent = [(urls[n % 2], *delivery("issues", event)) for n, event in enumerate(events)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        acks = list(pool.map(lambda d: httpx.post(f"{d[0]}/github/webhook", content=d[1], headers=d[2]), sent))
    assert [ack.status_code for ack in acks] == [202] * 4
    deadline = time.monotonic() + 180
    while any(app.state.github_backlog.taken for app in apps) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(app.state.github_backlog.taken for app in apps), "the answers did not finish"
    comments = github.comments["owner/repo#31"]
    assert len(comments) == 1 and comments[0]["user"]["login"] == BOT
    posts = [call for call in github.calls if call[0] == "POST" and call[1].endswith("/issues/31/comments")]
    assert len(posts) == 1  # the others found the comment and updated it


def test_a_claim_another_process_keeps_holding_is_given_up_with_a_clear_error(
    github: GitHubStandIn, tmp_path: Path
) -> None:
    store = InsightsStore(store_path(tmp_path))
    try:
        now = time.time()
        assert store.claims.claim("github", "owner/repo#32", "another-process", now + 60, now)  # as the bot names it

        async def run() -> str:
            api = GitHubAPI(github.url, "ghp-test-token", login=BOT, locks=IssueLocks(store, wait=0.5))
            try:
                await api.upsert_issue_comment("Owner/Repo", 32, "an answer", "<!-- kb-faq-bot -->")  # case aside
            except GitHubUnavailable as exc:
                return str(exc)
            finally:
                await api.aclose()
            return ""

        said = asyncio.run(run())
    finally:
        store.close()
    assert said == (
        "Owner/Repo#32: another server process has been writing the bot's comment for over 0.5 s; not written here"
    )
    assert github.calls == []  # nothing asked of GitHub while another writes
