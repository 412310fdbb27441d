"""GitHub's REST API rules, written once for every caller: which request to send, and what a reply means.

Sans-I/O, as h11 and gidgethub's `sansio` are: `Call` and `Listing` decide, and the two callers (send.py: the harvest's
sync `send`, the GitHub bot's async `send_async`) only send what they are given and hand back what came. The rules:

- every request carries GitHub's media type and API version, and `Authorization: Bearer` with the token when there is
  one; it goes to the API URL only (the callers follow no redirect, and a next page on another host is refused);
- a `Deadline` bounds the whole (one call of the bot, a whole harvest): past it, `DeadlinePassed`, however slowly the
  server sends;
- a rate limit (403 or 429 with `Retry-After`; `X-RateLimit-Remaining: 0` until `X-RateLimit-Reset`; a 429 with
  neither, a minute, as GitHub asks) is waited out when it ends within `MAX_WAIT` seconds and within the deadline, for
  at most `ATTEMPTS` tries; else `GitHubUnavailable` at once, saying how long and, when GitHub says, which limit;
- a reply's body is read chunk by chunk and refused past `MAX_RESPONSE_BYTES`;
- a list is paged by its `Link: rel="next"` header (`Listing`): it ends at its first empty page whatever the header
  says, at its `limit` of items, and past `MAX_PAGES` pages it is refused.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

import httpx

from .responses import Capped, GitHubUnavailable, json_of, listed

__all__ = [
    "ATTEMPTS",
    "Call",
    "Deadline",
    "DeadlinePassed",
    "Listing",
    "MAX_PAGES",
    "MAX_WAIT",
    "PER_PAGE",
    "Reply",
    "Unreachable",
    "Wait",
    "graphql_path",
    "headers",
    "rate_limit_wait",
]

MAX_WAIT = 60.0  # seconds a rate limit is waited out, at most, before the call is given up
ATTEMPTS = 3  # tries of one call, the rate-limited ones included
READ_TIMEOUT = 20.0  # seconds one read may take (the sync caller's; within the deadline, whichever ends first)
PER_PAGE = 100  # GitHub's largest page
MAX_PAGES = 200  # pages of one list read at most (20,000 items of 100 a page)
_NEXT = re.compile(r'<([^<>\s]{1,2000})>;\s*rel="next"')
_LINK_CHARS = 8_000  # characters of a `Link` header read


class DeadlinePassed(GitHubUnavailable):
    """No whole reply within the deadline."""


class Unreachable(GitHubUnavailable):
    """GitHub could not be reached: offline, a name not found, a connection refused."""


def headers(agent: str, token: str = "") -> dict[str, str]:
    """The headers every request carries: GitHub's media type and API version, who asks, and the token when given."""
    sent = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "User-Agent": agent}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    return sent


def graphql_path(api_url: str) -> str:
    """Where GitHub's GraphQL API is, beside the REST API at `api_url`: `/graphql`, or an Enterprise server's
    `https://host/api/graphql` for its `https://host/api/v3`."""
    api_url = api_url.rstrip("/")
    return api_url[: -len("/v3")] + "/graphql" if api_url.endswith("/api/v3") else "/graphql"


class Deadline:
    """`seconds` from now, for everything done under it: one call, or a whole harvest (`name` says which)."""

    def __init__(self, seconds: float, name: str = "the call's deadline", clock: Callable[[], float] = time.monotonic):
        self.seconds, self.name, self.clock = seconds, name, clock
        self.ends = clock() + seconds

    def left(self) -> float:
        return self.ends - self.clock()


@dataclass(frozen=True)
class Wait:
    """A rate limit to wait out before the call is tried again."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    """A reply's JSON value ({} for none), and the path of the list's next page ("" for none)."""

    value: Any
    following: str = ""


def rate_limit_wait(status: int, said: Mapping[str, str], clock: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait when the reply is a rate limit (primary or secondary), as GitHub's docs say; None when not."""
    if status not in (403, 429):
        return None
    retry = said.get("retry-after", "").strip()
    if retry.isdigit() and len(retry) < 10:
        return float(retry)
    if said.get("x-ratelimit-remaining", "").strip() == "0":
        reset = said.get("x-ratelimit-reset", "").strip()
        return max(1.0, float(math.ceil(int(reset) - clock()))) if reset.isdigit() and len(reset) < 16 else MAX_WAIT
    return 60.0 if status == 429 else None  # GitHub: with neither header, wait a minute


def _limit(said: Mapping[str, str]) -> str:
    """Which limit a rate-limited reply names: ` (GitHub's core limit of 5000 requests, none left until 12:00:00 UTC)`."""
    if said.get("x-ratelimit-remaining", "").strip() != "0":
        return ""
    resource = said.get("x-ratelimit-resource", "").strip()[:40]
    total = said.get("x-ratelimit-limit", "").strip()[:12]
    reset = said.get("x-ratelimit-reset", "").strip()
    which = f"GitHub's {resource + ' ' if resource else ''}limit" + (f" of {total} requests" if total.isdigit() else "")
    until = ""
    if reset.isdigit() and len(reset) < 12:
        until = f" until {datetime.fromtimestamp(int(reset), timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    return f" ({which}, none left{until})"


class Call:
    """One call to the API: what to send, tried again after a rate limit while `deadline` and `MAX_WAIT` allow, and
    what each reply means. `lenient`: a body that is not UTF-8 is read with its bytes kept as lone surrogates (the
    harvest refuses the one thread that holds them), else it is not JSON."""

    def __init__(
        self,
        api_url: str,
        method: str,
        path: str,
        deadline: Deadline,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        lenient: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.method, self.path, self.params, self.json = method, path, params, json
        self.deadline, self.lenient, self.clock = deadline, lenient, clock
        self.what = f"{method} {path}"
        self.tries = 0

    def timeout(self) -> float:
        """Seconds left for this try; DeadlinePassed when none are."""
        left = self.deadline.left()
        if left <= 0:
            raise self.passed()
        return left

    def read_timeout(self) -> float:
        """Seconds one read may wait: READ_TIMEOUT, or what the deadline leaves when that is less."""
        return min(READ_TIMEOUT, self.timeout())

    def passed(self) -> DeadlinePassed:
        return DeadlinePassed(f"{self.what}: no whole answer within {self.deadline.seconds:g} s")

    def failed(self, exc: httpx.HTTPError, timeout: float = 0.0) -> GitHubUnavailable:
        """What a transport error means: the deadline when it came as the deadline ended, else the error said."""
        if isinstance(exc, httpx.TimeoutException) and timeout and timeout < READ_TIMEOUT:
            return self.passed()
        said = f"{self.what}: {type(exc).__name__}: {exc}"
        unreachable = isinstance(exc, httpx.TransportError) and not isinstance(exc, httpx.TimeoutException)
        return Unreachable(said) if unreachable else GitHubUnavailable(said)

    def capped(self) -> Capped:
        """An empty body, read into chunk by chunk: refused past MAX_RESPONSE_BYTES."""
        return Capped(self.what)

    def read(self, status: int, said: Mapping[str, str], body: bytes) -> Wait | Reply:
        """What a reply means: a rate limit to wait out, or its JSON value and the next page; GitHubUnavailable naming
        the call and why when it is neither."""
        self.tries += 1
        wait = rate_limit_wait(status, said, self.clock)
        if wait is not None:
            return self._wait(wait, _limit(said))
        if status >= 300:
            text = body[:200].decode("utf-8", "replace").replace("\n", " ")
            raise GitHubUnavailable(f"{self.what}: HTTP {status}: {text}")
        return Reply(json_of(self.what, body, said.get("content-type", ""), self.lenient), self._following(said))

    def _wait(self, wait: float, limit: str) -> Wait:
        if self.tries >= ATTEMPTS:
            raise GitHubUnavailable(f"{self.what}: still rate-limited after {ATTEMPTS} tries{limit}")
        if wait > MAX_WAIT:
            raise GitHubUnavailable(
                f"{self.what}: rate-limited for {wait:g} s{limit}, longer than the {MAX_WAIT:g} s waited at most"
            )
        if wait > self.deadline.left():
            raise GitHubUnavailable(
                f"{self.what}: rate-limited for {wait:g} s{limit}, past {self.deadline.name} of "
                f"{self.deadline.seconds:g} s"
            )
        return Wait(wait)

    def _following(self, said: Mapping[str, str]) -> str:
        """The next page's path, from the `Link` header ("" for none); one on another host is refused."""
        found = _NEXT.search(said.get("link", "")[:_LINK_CHARS])
        following = found.group(1) if found else ""
        if following and not following.startswith(self.api_url + "/"):
            raise GitHubUnavailable(f"{self.what}: the next page is on another host ({following[:100]})")
        return following.removeprefix(self.api_url)


class Listing:
    """A paged list: its first page (`path` with `params`), then each next one its `Link` header names; it ends at an
    empty page or at `limit` items, and past `max_pages` pages GitHubUnavailable says so."""

    def __init__(self, path: str, params: Mapping[str, Any], limit: int, max_pages: int = MAX_PAGES) -> None:
        self.path, self.limit, self.max_pages = path, limit, max_pages
        self.params: Mapping[str, Any] | None = params
        self.following = path
        self.pages = self.seen = 0

    def next(self) -> tuple[str, Mapping[str, Any] | None] | None:
        """The next page's path and query (None: the next page's path carries it), or None at the list's end."""
        if not self.following or self.seen >= self.limit:
            return None
        if self.pages >= self.max_pages:
            raise GitHubUnavailable(f"GET {self.path}: over {self.max_pages} pages; the rest is not read")
        return self.following, self.params

    def take(self, reply: Reply) -> list[Any]:
        """The items of one page, as many as the limit leaves."""
        items = listed(f"GET {self.path}", reply.value)[: self.limit - self.seen]
        self.pages += 1
        self.seen += len(items)
        self.following = reply.following if reply.value else ""  # a next page after an empty one is not followed
        self.params = None
        return items
