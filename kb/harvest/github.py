"""A repository's closed issues from GitHub's REST API, for `kb harvest --repo`: paged, incremental, rate limits waited out.

`GET /repos/{repo}/issues?state=closed&since=...` lists the issues updated since the last harvest (pull
requests, which the endpoint also lists, are skipped), 100 a page, following the `Link: rel="next"`
header; each issue with comments has them read from `/repos/{repo}/issues/{n}/comments`, paged the same
way. Plain `httpx` against `KB_GITHUB_API_URL` only, following no redirect, so the token goes to no
other host. A rate limit (403 or 429 with `Retry-After`, or no requests left until `X-RateLimit-Reset`) is
waited out up to `MAX_WAIT` seconds, as the GitHub channel's client does; past that, a HarvestError.
A list ends at its first empty page, whatever its `Link` header says, and the whole harvest at its `deadline`
(`DEADLINE` seconds by default, `kb harvest --deadline`): past it a HarvestError says how far it got, and nothing
is kept. An issue whose text is not UTF-8 is refused on its own (`threads.ThreadRefused`), the others read on.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable, Iterator

import httpx

from .threads import MAX_COMMENTS, HarvestError, Thread, ThreadRefused, from_rest

__all__ = ["closed_issues", "MAX_WAIT", "DEADLINE"]

MAX_WAIT = 60.0  # seconds a rate limit is waited out, at most
DEADLINE = 900.0  # seconds a whole harvest of a repository may take
ATTEMPTS = 3
PER_PAGE = 100
_NEXT = re.compile(r'<([^<>\s]{1,2000})>;\s*rel="next"')


def _rate_limited(response: httpx.Response) -> float | None:
    """Seconds to wait when the response is a rate limit (primary or secondary); None when it is not one."""
    if response.status_code not in (403, 429):
        return None
    retry = response.headers.get("retry-after", "")
    if retry.strip().isdigit():
        return float(retry)
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        return max(1.0, float(reset) - time.time()) if reset.isdigit() else MAX_WAIT
    return 60.0 if response.status_code == 429 else None


class _Pages:
    def __init__(self, api_url: str, token: str, sleep: Callable[[float], None], deadline: float = DEADLINE):
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "kb-harvest",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.base = api_url.rstrip("/")
        self.client = httpx.Client(base_url=self.base, headers=headers, timeout=20.0, follow_redirects=False)
        self.sleep = sleep
        self.calls = 0
        self.deadline = deadline
        self.ends = time.monotonic() + deadline

    def _left(self, path: str) -> float:
        """Seconds left before the deadline; a HarvestError when none are."""
        left = self.ends - time.monotonic()
        if left <= 0:
            raise HarvestError(
                f"GET {self.base}{path}: the harvest took over its deadline of {self.deadline:.0f} s "
                f"({self.calls} requests made); nothing was kept"
            )
        return left

    def get(self, path: str, params: dict[str, Any] | None = None) -> tuple[Any, str]:
        """The JSON of one page, and the next page's URL ("" for the last)."""
        for attempt in range(ATTEMPTS):
            left = self._left(path)
            try:
                response = self.client.get(path, params=params, timeout=min(20.0, left))
            except httpx.TimeoutException as exc:
                if left < 20.0:
                    self.ends = time.monotonic()  # timed out at the deadline: said as the deadline
                    self._left(path)
                raise HarvestError(f"GET {self.base}{path}: {type(exc).__name__}: {exc}") from None
            except httpx.TransportError as exc:  # offline, a name not found, a connection refused
                raise HarvestError(
                    f"GET {self.base}{path}: GitHub could not be reached ({type(exc).__name__}: {exc}); without "
                    "the network, harvest the JSON `gh issue list` writes with --from FILE (kb harvest --help)"
                ) from None
            except httpx.HTTPError as exc:
                raise HarvestError(f"GET {self.base}{path}: {type(exc).__name__}: {exc}") from None
            self.calls += 1
            wait = _rate_limited(response)
            if wait is not None and attempt + 1 < ATTEMPTS and wait <= MAX_WAIT:
                self.sleep(min(wait, self._left(path)))
                continue
            if response.status_code >= 300:
                said = response.text[:200].replace("\n", " ")
                raise HarvestError(f"GET {self.base}{path}: HTTP {response.status_code}: {said}")
            try:  # bytes that are not UTF-8 kept as lone surrogates: their issue alone is refused
                data = json.loads(response.content.decode("utf-8", "surrogateescape"))
            except (ValueError, RecursionError):
                raise HarvestError(f"GET {self.base}{path}: the answer is not JSON") from None
            found = _NEXT.search(response.headers.get("link", ""))
            following = found.group(1) if found else ""
            if following and not following.startswith(self.base + "/"):
                raise HarvestError(f"GET {self.base}{path}: the next page is on another host ({following[:100]})")
            return data, following.removeprefix(self.base)
        raise HarvestError(f"GET {self.base}{path}: still rate-limited after {ATTEMPTS} tries")

    def all(self, path: str, params: dict[str, Any], limit: int) -> Iterator[Any]:
        """Every item of a paged list, up to `limit`; it ends at an empty page."""
        seen = 0
        page: str = path
        query: dict[str, Any] | None = params
        while page and seen < limit:
            data, page = self.get(page, query)
            query = None  # the next page's URL carries them
            if not isinstance(data, list):
                raise HarvestError(f"GET {self.base}{path}: expected a JSON list, got {type(data).__name__}")
            if not data:  # a next page after an empty one is not followed
                return
            for item in data[: limit - seen]:
                seen += 1
                yield item


def closed_issues(
    repo: str,
    api_url: str,
    token: str = "",
    since: str = "",
    limit: int = 10_000,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float = DEADLINE,
    refused: Callable[[str], None] | None = None,
) -> Iterator[Thread]:
    """The closed issues of `repo` (owner/name) updated since `since` (ISO 8601, "" for all), each with its comments,
    all within `deadline` seconds; an issue refused on its own is said to `refused` (else raised)."""
    if not re.fullmatch(r"[\w.-]{1,100}/[\w.-]{1,100}", repo):
        raise HarvestError(f"--repo {repo!r}: expected OWNER/NAME")
    pages = _Pages(api_url, token, sleep, deadline)
    try:
        params: dict[str, Any] = {"state": "closed", "per_page": PER_PAGE, "sort": "updated", "direction": "asc"}
        if since:
            params["since"] = since
        for issue in pages.all(f"/repos/{repo}/issues", params, limit):
            if not isinstance(issue, dict) or "pull_request" in issue:
                continue
            comments: list[Any] = []
            if issue.get("comments"):
                path = f"/repos/{repo}/issues/{int(issue.get('number') or 0)}/comments"
                comments = list(pages.all(path, {"per_page": PER_PAGE}, MAX_COMMENTS))
            try:
                yield from_rest(repo, issue, comments)
            except ThreadRefused as exc:
                if refused is None:
                    raise
                refused(str(exc))
    finally:
        pages.client.close()
