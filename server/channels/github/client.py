"""The GitHub API, as the bot uses it: an issue's comments listed (or read whole, for a harvest), one created or updated, a Discussion commented
on (GraphQL), a label added to an issue or taken off, and who the bot is on GitHub (its login).

Async `httpx` against `KB_GITHUB_API_URL` only: no redirect is followed, so the token goes to no other host. Each
call has a total deadline (`DEADLINE` seconds from its start, whatever the server sends and however slowly), not a
per-read timeout. A rate limit (403 or 429 with `Retry-After`, or no requests left until `X-RateLimit-Reset`) is
waited out with `asyncio.sleep`, which holds no thread, up to `MAX_WAIT` seconds and only while the deadline allows;
past either, or on another error, `GitHubUnavailable` with one line saying which call and why. Answers are read
through answers.py: capped in size, their JSON's shape checked.

The bot's own comment on an issue is the one its login wrote (`login`: `GET /user` for a token's user, the App's
slug and `[bot]` for a GitHub App) holding the marker: a comment someone else wrote is never taken for it."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any, Awaitable, Callable
from urllib.parse import quote

import httpx

from .answers import Capped, GitHubUnavailable, id_at, json_of, listed, object_of, text_at
from .backlog import IssueLocks

__all__ = ["GitHubAPI", "IssueThread", "GitHubUnavailable", "MAX_WAIT", "DEADLINE", "connections", "Logins"]

MAX_WAIT = 60.0  # seconds a rate limit is waited out, at most, before the call is given up
DEADLINE = 75.0  # seconds one call may take in all: its tries, the waits between them and the reading
ATTEMPTS = 3
_DISCUSSION_COMMENT = (
    "mutation($id: ID!, $body: String!) { addDiscussionComment(input: {discussionId: $id, body: $body}) "
    "{ comment { url } } }"
)

Token = Callable[[], Awaitable[str]]
Logins = dict[str, str]  # who each token (by a hash of it) or App is on GitHub, kept once asked


class GitHubAPI:
    """Calls to one GitHub (github.com or an Enterprise server's API URL) with one token."""

    def __init__(
        self,
        api_url: str,
        token: str | Token,
        client: httpx.AsyncClient | None = None,
        deadline: float = DEADLINE,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        login: str | Token = "",
        logins: Logins | None = None,
        locks: IssueLocks | None = None,
    ) -> None:
        """`token` is a token, or what gives one for each call (a GitHub App's installation token, kept while fresh);
        `client`, connections shared with other instances (this one then does not close them); `login`, who the
        token is on GitHub when it is known (`github-actions[bot]` in a workflow), or what asks for it (an App's
        slug); else `GET /user` is asked once and kept in `logins`, which instances may share, as they share `locks`
        (one writer of an issue's comment at a time)."""
        self.api_url = api_url.rstrip("/")
        self.sleep = sleep
        self.deadline = deadline
        self.token: Token = token if callable(token) else _constant(token)
        self.owns_client = client is None
        self.client = client or connections(self.api_url)
        self._login = login
        self.logins: Logins = {} if logins is None else logins
        self.locks = locks or IssueLocks()

    async def aclose(self) -> None:
        if self.owns_client:
            await self.client.aclose()

    async def login(self) -> str:
        """Who the bot is on GitHub: the login its comments are written by."""
        if callable(self._login):
            return await self._login()
        if self._login:
            return self._login
        key = hashlib.blake2b((await self.token()).encode(), digest_size=16).hexdigest()
        if key not in self.logins:
            login = text_at(await self._call("GET", "/user"), "login")
            if not login:
                raise GitHubUnavailable("GET /user: the answer names no login")
            self.logins[key] = login
        return self.logins[key]

    async def find_issue_comment(
        self, repo: str, number: int, marker: str, thread: "IssueThread | None" = None
    ) -> dict[str, Any] | None:
        """The bot's comment on an issue: the first written by its login that holds `marker`, or None; looked for
        among the comments `thread` read when it is given (a close's tasks read them once), else on their first page."""
        me = (await self.login()).lower()
        path = f"/repos/{repo}/issues/{number}/comments"
        if thread is not None:
            comments = await thread.comments()
        else:
            comments = listed(f"GET {path}", await self._call("GET", path, params={"per_page": 100}))
        for comment in comments:
            if marker in text_at(comment, "body") and text_at(comment, "user", "login").lower() == me:
                return {**comment, "id": id_at(f"GET {path}", comment)}
        return None

    async def issue_comments(self, repo: str, number: int, limit: int = 300) -> list[dict[str, Any]]:
        """An issue's comments, oldest first, at most `limit` (read 100 a page, each answer capped as every one is)."""
        path = f"/repos/{repo}/issues/{number}/comments"
        found: list[dict[str, Any]] = []
        for page in range(1, -(-limit // 100) + 1):
            listing = listed(f"GET {path}", await self._call("GET", path, params={"per_page": 100, "page": page}))
            found += listing[: limit - len(found)]
            if len(listing) < 100 or len(found) >= limit:
                break
        return found

    async def reactions(self, repo: str, comment_id: int) -> list[tuple[str, str]]:
        """(who, reaction) of every reaction to an issue comment: `+1`, `-1`, `heart`, ..."""
        path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
        found = listed(f"GET {path}", await self._call("GET", path, params={"per_page": 100}))
        return [(text_at(r, "user", "login"), text_at(r, "content")) for r in found]

    async def upsert_issue_comment(self, repo: str, number: int, body: str, marker: str) -> str:
        """The bot's comment on an issue (its own, holding `marker`) updated to `body`, or created; its URL. One
        writer at a time per issue, so that two at once make one comment."""
        async with self.locks.held(repo, number):
            mine = await self.find_issue_comment(repo, number, marker)
            if mine is not None:
                if mine.get("body") == body:
                    return text_at(mine, "html_url")
                path = f"/repos/{repo}/issues/comments/{mine['id']}"
                return text_at(
                    object_of(f"PATCH {path}", await self._call("PATCH", path, json={"body": body})), "html_url"
                )
            return await self.comment_on_issue(repo, number, body)

    async def add_label(self, repo: str, number: int, label: str) -> None:
        """`label` added to an issue (GitHub creates the label in the repository when it has none of the name)."""
        await self._call("POST", f"/repos/{repo}/issues/{number}/labels", json={"labels": [label]})

    async def remove_label(self, repo: str, number: int, label: str) -> None:
        """`label` taken off an issue; an issue without it is left as it is."""
        try:
            await self._call("DELETE", f"/repos/{repo}/issues/{number}/labels/{quote(label, safe='')}")
        except GitHubUnavailable as exc:
            if "HTTP 404" not in str(exc):
                raise

    async def comment_on_issue(self, repo: str, number: int, body: str) -> str:
        path = f"/repos/{repo}/issues/{number}/comments"
        return text_at(object_of(f"POST {path}", await self._call("POST", path, json={"body": body})), "html_url")

    async def comment_on_discussion(self, node_id: str, body: str) -> str:
        """A comment on the Discussion with this GraphQL node id; its URL."""
        graphql = self.api_url[: -len("/v3")] + "/graphql" if self.api_url.endswith("/api/v3") else "/graphql"
        answer = object_of(
            f"POST {graphql}",
            await self._call(
                "POST", graphql, json={"query": _DISCUSSION_COMMENT, "variables": {"id": node_id, "body": body}}
            ),
        )
        errors = answer.get("errors")
        if errors:
            said = text_at(errors[0], "message") if isinstance(errors, list) else ""
            raise GitHubUnavailable(f"commenting on discussion {node_id[:64]}: {said[:200]}")
        return text_at(answer, "data", "addDiscussionComment", "comment", "url")

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One call, tried again after a rate limit while the deadline allows; its JSON answer ({} for none)."""
        ends = time.monotonic() + self.deadline
        for attempt in range(ATTEMPTS):
            left = ends - time.monotonic()
            try:
                async with asyncio.timeout(max(left, 0.001)):
                    headers = {"Authorization": f"Bearer {await self.token()}"}
                    request = self.client.build_request(method, path, headers=headers, **kwargs)
                    response = await self.client.send(request, stream=True)
                    try:
                        body = Capped(f"{method} {path}")
                        async for chunk in response.aiter_bytes():
                            body.add(chunk)
                    finally:
                        await response.aclose()
            except TimeoutError:
                raise GitHubUnavailable(f"{method} {path}: no whole answer within {self.deadline:g} s") from None
            except httpx.HTTPError as exc:
                raise GitHubUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from None
            wait = _rate_limited(response)
            if wait is not None:
                if attempt + 1 == ATTEMPTS:
                    break
                if wait > MAX_WAIT or wait > ends - time.monotonic():
                    raise GitHubUnavailable(
                        f"{method} {path}: rate-limited for {wait:g} s, past the call's deadline of {self.deadline:g} s"
                    )
                await self.sleep(wait)
                continue
            if response.status_code >= 300:
                said = body.body[:200].decode("utf-8", "replace").replace("\n", " ")
                raise GitHubUnavailable(f"{method} {path}: HTTP {response.status_code}: {said}")
            return json_of(f"{method} {path}", body.body, response.headers.get("content-type", ""))
        raise GitHubUnavailable(f"{method} {path}: still rate-limited after {ATTEMPTS} tries")


def _constant(token: str) -> Token:
    async def given() -> str:
        return token

    return given


def connections(api_url: str) -> httpx.AsyncClient:
    """Connections to GitHub's API at `api_url` only: no redirect followed, GitHub's media type and API version."""
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "kb-faq-bot",
    }
    return httpx.AsyncClient(base_url=api_url.rstrip("/"), headers=headers, timeout=10.0, follow_redirects=False)


def _rate_limited(response: httpx.Response) -> float | None:
    """Seconds to wait when the response is a rate limit (primary or secondary); None when it is not one."""
    if response.status_code not in (403, 429):
        return None
    retry = response.headers.get("retry-after", "").strip()
    if retry.isdigit() and len(retry) < 10:
        return float(retry)
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        return max(1.0, float(reset) - time.time()) if reset.isdigit() and len(reset) < 16 else MAX_WAIT
    return 60.0 if response.status_code == 429 else None  # GitHub: with neither header, wait a minute


class IssueThread:
    """An issue's comments, read from the API once for every task of one delivery that needs them (a close's votes,
    on the bot's comment, and its harvest); a read that fails is tried again by the next task that asks."""

    def __init__(self, api: GitHubAPI, repo: str, number: int, limit: int = 300) -> None:
        self.api = api
        self.repo = repo
        self.number = number
        self.limit = limit
        self._lock = asyncio.Lock()
        self._read: list[dict[str, Any]] | None = None

    async def comments(self) -> list[dict[str, Any]]:
        """The issue's comments, oldest first, at most `limit` (`GitHubAPI.issue_comments`), read on the first ask."""
        async with self._lock:
            if self._read is None:
                self._read = await self.api.issue_comments(self.repo, self.number, self.limit)
            return self._read
