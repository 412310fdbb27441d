"""The GitHub API, as the bot uses it: an issue's comments listed, one created or updated, a Discussion commented
on (GraphQL), a label added to an issue or taken off. Plain `httpx` against `KB_GITHUB_API_URL` only: no redirect is followed, so the token goes to no other
host. A rate limit (403 or 429 with `Retry-After`, or no requests left until `X-RateLimit-Reset`) is waited out, up
to `MAX_WAIT` seconds, and the call made again; past that, or on another error, `GitHubUnavailable`. Answers are
read through answers.py: capped in size, their JSON's shape checked."""

from __future__ import annotations

import time
from typing import Any, Callable
from urllib.parse import quote

import httpx

from .answers import Capped, GitHubUnavailable, id_at, json_of, listed, object_of, text_at

__all__ = ["GitHubAPI", "GitHubUnavailable", "MAX_WAIT", "connections"]

MAX_WAIT = 60.0  # seconds a rate limit is waited out, at most, before the comment is given up
ATTEMPTS = 3
_DISCUSSION_COMMENT = (
    "mutation($id: ID!, $body: String!) { addDiscussionComment(input: {discussionId: $id, body: $body}) "
    "{ comment { url } } }"
)


class GitHubAPI:
    """Calls to one GitHub (github.com or an Enterprise server's API URL) with one token."""

    def __init__(
        self,
        api_url: str,
        token: str | Callable[[], str],
        sleep: Callable[[float], None] = time.sleep,
        client: httpx.Client | None = None,
    ) -> None:
        """`token` is a token, or what gives one for each call (a GitHub App's installation token, kept while fresh);
        `client`, connections shared with other instances (this one then does not close them)."""
        self.api_url = api_url.rstrip("/")
        self.sleep = sleep
        self.token = token if callable(token) else (lambda: token)
        self.owns_client = client is None
        self.client = client or connections(self.api_url)

    def close(self) -> None:
        if self.owns_client:
            self.client.close()

    def find_issue_comment(self, repo: str, number: int, marker: str) -> dict[str, Any] | None:
        """The comment on an issue holding `marker` (the bot's), or None."""
        path = f"/repos/{repo}/issues/{number}/comments"
        comments = listed(f"GET {path}", self._call("GET", path, params={"per_page": 100}))
        mine = next((c for c in comments if marker in text_at(c, "body")), None)
        return mine if mine is None else {**mine, "id": id_at(f"GET {path}", mine)}

    def reactions(self, repo: str, comment_id: int) -> list[tuple[str, str]]:
        """(who, reaction) of every reaction to an issue comment: `+1`, `-1`, `heart`, ..."""
        path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
        found = listed(f"GET {path}", self._call("GET", path, params={"per_page": 100}))
        return [(text_at(r, "user", "login"), text_at(r, "content")) for r in found]

    def upsert_issue_comment(self, repo: str, number: int, body: str, marker: str) -> str:
        """The bot's comment on an issue (the one holding `marker`) updated to `body`, or created; its URL."""
        mine = self.find_issue_comment(repo, number, marker)
        if mine is not None:
            if mine.get("body") == body:
                return text_at(mine, "html_url")
            path = f"/repos/{repo}/issues/comments/{mine['id']}"
            return text_at(object_of(f"PATCH {path}", self._call("PATCH", path, json={"body": body})), "html_url")
        return self.comment_on_issue(repo, number, body)

    def add_label(self, repo: str, number: int, label: str) -> None:
        """`label` added to an issue (GitHub creates the label in the repository when it has none of the name)."""
        self._call("POST", f"/repos/{repo}/issues/{number}/labels", json={"labels": [label]})

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """`label` taken off an issue; an issue without it is left as it is."""
        try:
            self._call("DELETE", f"/repos/{repo}/issues/{number}/labels/{quote(label, safe='')}")
        except GitHubUnavailable as exc:
            if "HTTP 404" not in str(exc):
                raise

    def comment_on_issue(self, repo: str, number: int, body: str) -> str:
        path = f"/repos/{repo}/issues/{number}/comments"
        return text_at(object_of(f"POST {path}", self._call("POST", path, json={"body": body})), "html_url")

    def comment_on_discussion(self, node_id: str, body: str) -> str:
        """A comment on the Discussion with this GraphQL node id; its URL."""
        graphql = self.api_url[: -len("/v3")] + "/graphql" if self.api_url.endswith("/api/v3") else "/graphql"
        answer = object_of(
            f"POST {graphql}",
            self._call(
                "POST", graphql, json={"query": _DISCUSSION_COMMENT, "variables": {"id": node_id, "body": body}}
            ),
        )
        errors = answer.get("errors")
        if errors:
            said = text_at(errors[0], "message") if isinstance(errors, list) else ""
            raise GitHubUnavailable(f"commenting on discussion {node_id[:64]}: {said[:200]}")
        return text_at(answer, "data", "addDiscussionComment", "comment", "url")

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        for attempt in range(ATTEMPTS):
            try:
                headers = {"Authorization": f"Bearer {self.token()}"}
                response = self.client.send(
                    self.client.build_request(method, path, headers=headers, **kwargs), stream=True
                )
                try:
                    body = Capped(f"{method} {path}")
                    for chunk in response.iter_bytes():
                        body.add(chunk)
                finally:
                    response.close()
            except httpx.HTTPError as exc:
                raise GitHubUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from None
            wait = _rate_limited(response)
            if wait is not None and attempt + 1 < ATTEMPTS and wait <= MAX_WAIT:
                self.sleep(wait)
                continue
            if response.status_code >= 300:
                said = body.body[:200].decode("utf-8", "replace").replace("\n", " ")
                raise GitHubUnavailable(f"{method} {path}: HTTP {response.status_code}: {said}")
            return json_of(f"{method} {path}", body.body, response.headers.get("content-type", ""))
        raise GitHubUnavailable(f"{method} {path}: still rate-limited after {ATTEMPTS} tries")


def connections(api_url: str) -> httpx.Client:
    """Connections to GitHub's API at `api_url` only: no redirect followed, GitHub's media type and API version."""
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "kb-faq-bot",
    }
    return httpx.Client(base_url=api_url.rstrip("/"), headers=headers, timeout=10.0, follow_redirects=False)


def _rate_limited(response: httpx.Response) -> float | None:
    """Seconds to wait when the response is a rate limit (primary or secondary); None when it is not one."""
    if response.status_code not in (403, 429):
        return None
    retry = response.headers.get("retry-after")
    if retry is not None and retry.strip().isdigit():
        return float(retry)
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        return max(1.0, float(reset) - time.time()) if reset.isdigit() else MAX_WAIT
    return 60.0 if response.status_code == 429 else None  # GitHub: with neither header, wait a minute
