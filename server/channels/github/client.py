"""The GitHub API, as the bot uses it: an issue's comments listed (or read whole, for a harvest), one created or updated, a Discussion commented
on (GraphQL), a label added to an issue or taken off, and who the bot is on GitHub (its login).

Async `httpx` against `KB_GITHUB_API_URL` only, through the REST core GitHub's trackers share (trackers/github/rest.py:
the token, no redirect followed, a rate limit waited out within bounds, each reply capped in size, lists paged by
their `Link` header), sent by its async caller (`send_async`, whose waits hold no thread). Each call has a total
deadline (`DEADLINE` seconds from its start, whatever the server sends and however slowly), not a per-read timeout;
past it, past a rate limit's bounds, or on another error, `GitHubUnavailable` with one line saying which call and why.

The bot's own comment on an issue is the one its login wrote (`login`: `GET /user` for a token's user, the App's
slug and `[bot]` for a GitHub App) holding the marker: a comment someone else wrote is never taken for it."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any, Awaitable, Callable
from urllib.parse import quote

import httpx

from trackers.github.responses import GitHubUnavailable, id_at, listed, object_of, text_at
from trackers.github.rest import MAX_WAIT, PER_PAGE, Call, Deadline, Listing, Reply, graphql_path
from trackers.github.send import async_connections, send_async

from .backlog import IssueLocks

__all__ = ["GitHubAPI", "IssueThread", "GitHubUnavailable", "MAX_WAIT", "DEADLINE", "connections", "Logins"]

DEADLINE = 75.0  # seconds one call may take in all: its tries, the waits between them and the reading
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
        """An issue's comments, oldest first, at most `limit` (read 100 a page, each reply capped as every one is)."""
        path = f"/repos/{repo}/issues/{number}/comments"
        listing = Listing(path, {"per_page": PER_PAGE, "page": 1}, limit)
        found: list[dict[str, Any]] = []
        while (page := listing.next()) is not None:
            found += listing.take(
                await self._send(Call(self.api_url, "GET", page[0], Deadline(self.deadline), page[1]))
            )
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
        graphql = graphql_path(self.api_url)
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
        """One call, tried again after a rate limit while its deadline allows; its JSON answer ({} for none)."""
        return (await self._send(Call(self.api_url, method, path, Deadline(self.deadline), **kwargs))).value

    async def _send(self, call: Call) -> Reply:
        return await send_async(self.client, call, self.token, self.sleep)


def _constant(token: str) -> Token:
    async def given() -> str:
        return token

    return given


def connections(api_url: str) -> httpx.AsyncClient:
    """Connections to GitHub's API at `api_url` only: no redirect followed, GitHub's media type and API version."""
    return async_connections(api_url, "kb-faq-bot")


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
