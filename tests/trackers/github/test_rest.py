"""GitHub's REST core (trackers/github/rest.py) against stand-ins for GitHub's API (tests/support/github_issues.py and
tests/support/github.py: real HTTP servers on loopback ports; GitHub itself cannot run here), through both of its
callers, the harvest's sync one and the GitHub bot's async one: a list ends at an empty page and is refused past its
page cap, the deadline stops a slow or drip-feeding server, a rate limit is waited out within its bounds or refused at
once naming the limit, and an oversized reply is refused."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Iterator

import pytest

from kb.harvest.threads import HarvestError
from server.channels.github.client import GitHubAPI
from tests.support.github import BOT, GitHubStandIn
from tests.support.github_issues import IssuesStandIn
from trackers.github.responses import GitHubUnavailable
from trackers.github.rest import Call, Deadline, DeadlinePassed, Listing, rate_limit_wait
from trackers.github.send import async_connections, connections, send, send_async
from trackers.github.session import Session

QUICK = 5.0  # seconds: a generous bound for what ends at once on a shared machine
ISSUES = "/repos/THUDM/slime/issues"
COMMENTS = "/repos/owner/repo/issues/1/comments"
ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."


@pytest.fixture
def issues(serve: Callable[..., Any]) -> IssuesStandIn:
    return IssuesStandIn(serve)


@pytest.fixture(scope="module")
def github(serve: Callable[..., Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture
def bot_api(github: GitHubStandIn) -> Iterator[GitHubStandIn]:
    """The bot's stand-in, as it started: up, quick and not rate-limited, whatever the test before did."""
    github.reset()
    yield github
    github.reset()


def said(call: Awaitable[Any], close: Awaitable[None]) -> str:
    """What GitHubUnavailable said when the async `call` was run ("" when it raised none), `close` awaited after."""

    async def run() -> str:
        try:
            await call
        except GitHubUnavailable as exc:
            return str(exc)
        finally:
            await close
        return ""

    return asyncio.run(run())


def test_a_list_ends_at_its_first_empty_page_whatever_its_link_says(issues: IssuesStandIn) -> None:
    issues.empty_pages = True  # every page empty, each naming a next one
    session = Session(issues.url, "ghp_test", deadline=30)
    assert list(session.all(ISSUES, {"state": "closed"}, 10_000)) == []
    session.close()
    assert len(issues.calls) == 1


def test_a_list_past_its_page_cap_is_refused_saying_so(serve: Callable[..., Any]) -> None:
    api = IssuesStandIn(serve, per_page_cap=1)  # a page of one issue, each naming a next
    for n in range(1, 6):
        api.add(n, f"How do I set option {n}?", ANSWER, f"2026-01-0{n}T00:00:00Z")
    listing, read = Listing(ISSUES, {"state": "closed"}, 10_000, max_pages=3), []
    client = connections(api.url, "kb-test")
    with pytest.raises(GitHubUnavailable, match=f"GET {ISSUES}: over 3 pages; the rest is not read"):
        while (page := listing.next()) is not None:
            read += listing.take(send(client, Call(api.url, "GET", page[0], Deadline(30), page[1])))
    client.close()
    assert [issue["number"] for issue in read] == [1, 2, 3] and len(api.calls) == 3


def test_the_harvests_deadline_stops_a_slow_server(issues: IssuesStandIn) -> None:
    issues.slow = 4.0  # every answer 4 s late; the harvest has 1 s
    session = Session(issues.url, "ghp_test", deadline=1.0)
    started = time.monotonic()
    with pytest.raises(HarvestError) as caught:
        session.get(ISSUES)
    took = time.monotonic() - started
    session.close()
    assert took < 3.0, took  # the deadline ended it, not the server's answer
    said = str(caught.value)
    assert said.startswith(f"GET {issues.url}{ISSUES}: the harvest took over its deadline of 1 s")
    assert said.endswith("nothing was kept")


def test_a_drip_feeding_server_is_given_up_at_the_deadline_by_both_callers(bot_api: GitHubStandIn) -> None:
    """Each byte comes 0.05 s after the last, so no single read times out: the deadline is the whole answer's."""
    bot_api.drip = 0.05
    client = connections(bot_api.url, "kb-test")
    started = time.monotonic()
    with pytest.raises(DeadlinePassed, match=f"^GET {COMMENTS}: no whole answer within 1.5 s$"):
        send(client, Call(bot_api.url, "GET", COMMENTS, Deadline(1.5)), "ghp-test-token")
    took = time.monotonic() - started
    client.close()
    assert took < 1.5 + 1.5, took

    api = GitHubAPI(bot_api.url, "ghp-test-token", deadline=1.5, login=BOT)
    started = time.monotonic()
    assert said(api.issue_comments("owner/repo", 1), api.aclose()) == f"GET {COMMENTS}: no whole answer within 1.5 s"
    assert time.monotonic() - started < 1.5 + 1.5


def test_a_rate_limit_within_its_bounds_is_waited_out(issues: IssuesStandIn) -> None:
    issues.add(1, "How do I resume training from a checkpoint?", ANSWER, "2026-01-02T00:00:00Z")
    issues.limited = 1  # 403, no requests left until a reset a second away
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        time.sleep(seconds)

    session = Session(issues.url, "ghp_test", deadline=30, sleep=sleep)
    found = list(session.all(ISSUES, {"state": "closed"}, 10))
    session.close()
    assert [issue["number"] for issue in found] == [1] and waited == [1.0]
    assert len(issues.calls) == 2 and set(issues.tokens) == {"Bearer ghp_test"}


def test_a_rate_limit_past_its_bound_fails_at_once_naming_the_limit(issues: IssuesStandIn) -> None:
    issues.limited, issues.reset_in = 1, 3600  # no requests left for an hour
    waited: list[float] = []
    session = Session(issues.url, "ghp_test", deadline=7200, sleep=waited.append)
    started = time.monotonic()
    with pytest.raises(HarvestError) as caught:
        session.get(ISSUES)
    session.close()
    said = str(caught.value)
    assert said.startswith(f"GET {issues.url}{ISSUES}: rate-limited for 3600 s (GitHub's core limit of 60 requests")
    assert "none left until 20" in said and said.endswith("UTC), longer than the 60 s waited at most")
    assert waited == [] and time.monotonic() - started < QUICK


def test_a_rate_limit_past_the_harvests_deadline_is_refused_at_once_not_slept_into(bot_api: GitHubStandIn) -> None:
    """The harvest used to sleep until its deadline and then fail on the 403; like the bot, it now says so at once."""
    bot_api.retry_after = 30  # a secondary rate limit: 403 with Retry-After
    waited: list[float] = []
    session = Session(bot_api.url, "ghp_test", deadline=5, sleep=waited.append)
    started = time.monotonic()
    with pytest.raises(HarvestError) as caught:
        session.get(COMMENTS)
    session.close()
    assert str(caught.value) == (
        f"GET {bot_api.url}{COMMENTS}: rate-limited for 30 s, past the harvest's deadline of 5 s"
    )
    assert waited == [] and time.monotonic() - started < QUICK


def test_both_callers_refuse_a_rate_limit_longer_than_they_wait_with_the_same_words(bot_api: GitHubStandIn) -> None:
    bot_api.retry_after = 120
    client, waited = connections(bot_api.url, "kb-test"), list[float]()
    with pytest.raises(GitHubUnavailable) as sync_said:
        send(client, Call(bot_api.url, "GET", COMMENTS, Deadline(600)), "ghp-test-token", sleep=waited.append)
    client.close()

    connected = async_connections(bot_api.url, "kb-test")

    async def token() -> str:
        return "ghp-test-token"

    async_said = said(
        send_async(connected, Call(bot_api.url, "GET", COMMENTS, Deadline(600)), token), connected.aclose()
    )
    expected = f"GET {COMMENTS}: rate-limited for 120 s, longer than the 60 s waited at most"
    assert str(sync_said.value) == expected and async_said == expected
    assert waited == [] and len(bot_api.calls) == 2  # one try each: neither waited


def test_an_oversized_reply_is_refused_unread(issues: IssuesStandIn) -> None:
    issues.huge = 17 * 1024 * 1024  # over the 16 MiB any reply may hold
    session = Session(issues.url, "ghp_test", deadline=60)
    with pytest.raises(HarvestError, match=f"^GET {issues.url}{ISSUES}: the answer is over 16 MiB; not read$"):
        session.get(ISSUES)
    session.close()


def test_a_rate_limits_headers_are_read_only_within_their_length() -> None:
    """Where the two clients differed, the stricter reading is kept: a `Retry-After` or `X-RateLimit-Reset` of
    thousands of digits is no wait (a 429 waits GitHub's minute; a 403 is the error it says), never an endless one."""
    huge = "9" * 5000
    assert rate_limit_wait(429, {"retry-after": huge}) == 60.0
    assert rate_limit_wait(403, {"retry-after": huge}) is None
    assert rate_limit_wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": huge}) == 60.0
    assert rate_limit_wait(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000"}, clock=lambda: 990.5) == 10
