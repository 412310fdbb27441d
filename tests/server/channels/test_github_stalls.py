"""A slow, rate-limiting or drip-feeding GitHub API against the bot on a real server (uvicorn on a loopback port),
the API being the stand-in (tests/support/github.py, a real HTTP server on another loopback port): deliveries are
acknowledged at once and the rest of the site keeps answering while 40 answers wait on GitHub; each API call ends
by its deadline however the API sends; a rate limit past the deadline is given up with one log line; work beyond
the backlog is acknowledged and dropped."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import httpx
import pytest

from server import create_app
from server.channels.github.backlog import Backlog
from server.channels.github.client import GitHubAPI, GitHubUnavailable
from tests.support.github import BOT, SECRET, GitHubStandIn, delivery, issue_event
from tests.support.servers import own_data

RESUME = "How do I resume training in slime after it stopped?"
QUICK = 5.0  # seconds: a generous bound for what answers at once (the soak benchmark measures the p99)


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture(autouse=True)
def fresh_github(github: GitHubStandIn) -> Iterator[GitHubStandIn]:
    yield from github.fresh()


@pytest.fixture
def site(
    settings: Any, github: GitHubStandIn, serve: Callable[[Any], Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Any]:
    own = own_data(settings, tmp_path_factory, "github-stalls").with_(  # its deliveries its own
        github_webhook_secret=SECRET,
        github_token="ghp-test-token",
        github_api_url=github.url,
        github_mode="comment",
        channel_precision="github=0.25",
    )
    app = create_app(own)
    return serve(app).url, app


def post(url: str, number: int) -> tuple[int, float]:
    body, headers = delivery("issues", issue_event(RESUME, "Training stopped halfway.", number=number))
    started = time.monotonic()
    response = httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60)
    return response.status_code, time.monotonic() - started


def timed_get(url: str) -> tuple[int, float]:
    started = time.monotonic()
    response = httpx.get(url, timeout=60)
    return response.status_code, time.monotonic() - started


@pytest.mark.parametrize("stall", ["retry_after", "slow", "drip"])
def test_deliveries_are_acknowledged_at_once_and_the_site_answers_while_40_wait_on_github(
    site: tuple[str, Any], github: GitHubStandIn, stall: str
) -> None:
    url, _ = site
    if stall == "retry_after":
        github.retry_after = 60  # a secondary rate limit: 403, Retry-After: 60
    elif stall == "slow":
        github.slow = 30.0
    else:
        github.drip = 0.5
    with ThreadPoolExecutor(max_workers=40) as pool:
        acks = list(pool.map(lambda n: post(url, n), range(100, 140)))
        time.sleep(1.0)  # the answers are now waiting on GitHub
        pages = [timed_get(f"{url}{path}") for path in ("/healthz", "/static/app.css", "/healthz")]
        late = post(url, 140)
    assert {status for status, _ in acks + [late]} == {202}
    slowest = max(took for _, took in acks + [late])
    assert slowest < QUICK, f"a delivery took {slowest:.1f} s to acknowledge"
    assert all(status == 200 and took < QUICK for status, took in pages), pages


def test_beyond_the_backlog_a_delivery_is_acknowledged_dropped_and_logged(
    site: tuple[str, Any], github: GitHubStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    url, app = site
    app.state.github_backlog = Backlog(running=1, waiting=2)
    github.slow = 30.0
    with caplog.at_level(logging.WARNING, logger="kb.server"):
        answers = [
            httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60).json()["done"]
            for body, headers in (delivery("issues", issue_event(RESUME, number=n)) for n in range(200, 205))
        ]
    assert answers == ["answering"] * 3 + ["not answered: 3 answers are in flight already"] * 2
    dropped = [r.getMessage() for r in caplog.records if "in flight already" in r.getMessage()]
    assert dropped == [f"GitHub: owner/repo#{n} not answered: 3 answers are in flight already" for n in (203, 204)]


def test_three_deliveries_for_one_issue_at_once_make_one_bot_comment(
    site: tuple[str, Any], github: GitHubStandIn
) -> None:
    url, app = site
    github.slow = 2.0  # each call takes a while, so that the three answers overlap
    events = [issue_event(f"{RESUME} ({n})", "Training stopped.", action="edited", number=18) for n in range(3)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        sent = [delivery("issues", event) for event in events]
        acks = list(pool.map(lambda d: httpx.post(f"{url}/github/webhook", content=d[0], headers=d[1]), sent))
    assert [ack.status_code for ack in acks] == [202] * 3
    deadline = time.monotonic() + 60
    while app.state.github_backlog.taken and time.monotonic() < deadline:  # the three answers done
        time.sleep(0.1)
    assert len(github.on("owner/repo#18")) == 1


def call(github: GitHubStandIn, deadline: float, **options: Any) -> tuple[str, float]:
    """What `upsert_issue_comment` raised against the stand-in, and how long it took."""

    async def run() -> str:
        api = GitHubAPI(github.url, "ghp-test-token", deadline=deadline, login=BOT, **options)
        try:
            await api.upsert_issue_comment("owner/repo", 1, "an answer", "<!-- kb-faq-bot -->")
        except GitHubUnavailable as exc:
            return str(exc)
        finally:
            await api.aclose()
        return ""

    started = time.monotonic()
    said = asyncio.run(run())
    return said, time.monotonic() - started


def test_a_drip_feeding_api_is_given_up_at_the_calls_deadline(github: GitHubStandIn) -> None:
    github.drip = 0.05  # each byte in 0.05 s: every read is quick, the whole answer would take 80 minutes
    said, took = call(github, deadline=2.0)
    assert said == "GET /repos/owner/repo/issues/1/comments: no whole answer within 2 s"
    assert took < 2.0 + QUICK


def test_a_rate_limit_past_the_deadline_is_given_up_at_once_and_one_within_it_waited_without_a_thread(
    github: GitHubStandIn,
) -> None:
    github.retry_after = 60
    said, took = call(github, deadline=10.0)
    assert said == "GET /repos/owner/repo/issues/1/comments: rate-limited for 60 s, past the call's deadline of 10 s"
    assert took < QUICK
    github.reset()  # a new API for the second half: no longer rate-limited for 60 s
    github.limited = 1  # 429, Retry-After: 1
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)
        await asyncio.sleep(seconds)

    said, _ = call(github, deadline=10.0, sleep=sleep)
    assert said == "" and waited == [1.0] and github.on("owner/repo#1") == ["an answer"]
