"""Deliveries as GitHub sends them (signed with the webhook's secret), and a stand-in for GitHub's API: a real HTTP
server on a loopback port that keeps issues' comments (each written by the token's user: `kb-bot` for a token,
`kb-faq[bot]` for the App's installation tokens), takes Discussion comments over GraphQL, and can answer the first
calls with a rate limit, be down, be slow, answer 403 with `Retry-After`, or drip-feed its answers."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

SECRET = "gh-webhook-secret"
BOT = "kb-bot"  # the login of a token's user, at the stand-in
APP_BOT = "kb-faq[bot]"  # the App's, whose slug is kb-faq
_deliveries = itertools.count(1)


def push_event(clone_url: str, ref: str = "refs/heads/main", repo: str = "team/faq") -> dict[str, Any]:
    """A push to `repo` (cloned from `clone_url`) moving `ref`, as GitHub delivers it (the fields the sync reads)."""
    return {
        "ref": ref,
        "before": "0" * 40,
        "after": "1" * 40,
        "deleted": False,
        "repository": {
            "full_name": repo,
            "html_url": f"https://github.com/{repo}",
            "clone_url": clone_url,
            "ssh_url": f"git@github.com:{repo}.git",
            "private": False,
        },
        "pusher": {"name": "maintainer"},
    }


def delivery(
    event: str, payload: dict[str, Any], secret: str = SECRET, delivery_id: str = ""
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of a delivery of `event`, signed; each with a delivery id of its own unless given."""
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id or f"delivery-{next(_deliveries)}",
        "X-Hub-Signature-256": signature,
        "Content-Type": "application/json",
    }
    return body, headers


def issue_event(
    title: str,
    body: str = "",
    action: str = "opened",
    number: int = 1,
    association: str = "NONE",
    user_type: str = "User",
    labels: tuple[str, ...] = (),
    locked: bool = False,
    state: str = "open",
    repo: str = "owner/repo",
) -> dict[str, Any]:
    return {
        "action": action,
        "repository": {"full_name": repo, "private": False},
        "issue": {
            "number": number,
            "title": title,
            "body": body,
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "user": {"login": "asker" if user_type == "User" else "helper[bot]", "type": user_type},
            "author_association": association,
            "locked": locked,
            "state": state,
            "labels": [{"name": name} for name in labels],
            "node_id": f"I_{number}",
        },
    }


def comment_event(
    text: str,
    number: int = 1,
    repo: str = "owner/repo",
    association: str = "NONE",
    login: str = "reader",
    user_type: str = "User",
) -> dict[str, Any]:
    payload = issue_event("An issue", "Its body says what went wrong, at length.", number=number, repo=repo)
    payload["action"] = "created"
    payload["comment"] = {"body": text, "author_association": association, "user": {"login": login, "type": user_type}}
    return payload


def discussion_event(title: str, body: str = "", number: int = 9) -> dict[str, Any]:
    payload = issue_event(title, body, action="created", number=number)
    payload["discussion"] = payload.pop("issue")
    payload["discussion"]["node_id"] = f"D_{number}"
    return payload


class GitHubStandIn:
    """Stands in for GitHub's API: what was called, the comments each issue holds."""

    def __init__(self, serve: Callable[[Any], Any]):
        self.calls: list[tuple[str, str, Any]] = []
        self.comments: dict[str, list[dict[str, Any]]] = {}  # "owner/repo#1" -> its comments
        self.discussion_comments: list[tuple[str, str]] = []
        self.limited = 0  # the next calls to answer with a rate limit (429, Retry-After: 1)
        self.down = False  # answer every call 502
        self.tokens: list[str] = []
        self.app_key = ""  # the App's public key (PEM) that installation-token requests are checked against
        self.granted: list[int] = []  # installations given a token
        self.reactions: dict[int, list[tuple[str, str]]] = {}  # comment id -> (who, reaction)
        self.slow = 0.0  # seconds every call waits before it is answered
        self.retry_after = 0  # answer every call 403 with this Retry-After (0: no)
        self.drip = 0.0  # seconds between the bytes of every answer, sent one at a time (0: at once)
        self.labels: dict[str, list[str]] = {}  # "owner/repo#1" -> its labels
        self.pages: list[tuple[str, int]] = []  # the pages of comments asked for by number: ("owner/repo#1", 2)
        ids = itertools.count(100)
        app = FastAPI()

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Response:
            body = await request.body()
            self.calls.append((request.method, request.url.path, json.loads(body) if body else None))
            self.tokens.append(request.headers.get("authorization", ""))
            if self.slow:
                await asyncio.sleep(self.slow)
            if self.drip:
                return StreamingResponse(dripped(self.drip), media_type="application/json")
            if self.retry_after:
                message = {"message": "You have exceeded a secondary rate limit."}
                return JSONResponse(message, 403, headers={"Retry-After": str(self.retry_after)})
            if self.down:
                return JSONResponse({"message": "Server Error"}, 502)
            if self.limited:
                self.limited -= 1
                return JSONResponse({"message": "API rate limit exceeded"}, 429, headers={"Retry-After": "1"})
            response: Response = await call_next(request)
            return response

        @app.get("/repos/{owner}/{name}/issues/{number}/comments")
        async def list_comments(
            owner: str, name: str, number: int, request: Request, per_page: int = 30, page: int | None = None
        ) -> JSONResponse:
            held = self.comments.get(f"{owner}/{name}#{number}", [])
            if page is not None:
                self.pages.append((f"{owner}/{name}#{number}", page))
            at = (page or 1) - 1
            headers = {}  # paged as GitHub pages them: a `Link` to the next page while there is one
            if (at + 1) * per_page < len(held):
                following = request.url.replace_query_params(**(dict(request.query_params) | {"page": at + 2}))
                headers["Link"] = f'<{following}>; rel="next"'
            return JSONResponse(held[at * per_page : (at + 1) * per_page], headers=headers)

        def login(request: Request) -> str:
            token = request.headers.get("authorization", "")
            return APP_BOT if token.startswith("Bearer ghs-installation-") else BOT

        @app.get("/user")
        async def user(request: Request) -> dict[str, Any]:
            return {"login": login(request), "type": "User"}

        @app.get("/app")
        async def the_app() -> dict[str, Any]:
            return {"slug": "kb-faq", "name": "KB FAQ"}

        @app.post("/repos/{owner}/{name}/issues/{number}/comments", status_code=201)
        async def create(owner: str, name: str, number: int, request: Request) -> dict[str, Any]:
            comment: dict[str, Any] = {"id": next(ids), "body": (await request.json())["body"]}
            comment["user"] = {"login": login(request), "type": "Bot" if "[bot]" in login(request) else "User"}
            comment["html_url"] = f"https://github.com/{owner}/{name}/issues/{number}#issuecomment-{comment['id']}"
            self.comments.setdefault(f"{owner}/{name}#{number}", []).append(comment)
            return comment

        @app.patch("/repos/{owner}/{name}/issues/comments/{comment_id}")
        async def update(owner: str, name: str, comment_id: int, request: Request) -> dict[str, Any]:
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == comment_id:
                        comment["body"] = (await request.json())["body"]
                        return comment
            return JSONResponse({"message": "Not Found"}, 404)  # type: ignore[return-value]

        @app.post("/repos/{owner}/{name}/issues/{number}/labels")
        async def add_labels(owner: str, name: str, number: int, request: Request) -> list[dict[str, str]]:
            held = self.labels.setdefault(f"{owner}/{name}#{number}", [])
            held += [label for label in (await request.json())["labels"] if label not in held]
            return [{"name": label} for label in held]

        @app.delete("/repos/{owner}/{name}/issues/{number}/labels/{label}")
        async def remove_label(owner: str, name: str, number: int, label: str) -> Any:
            held = self.labels.get(f"{owner}/{name}#{number}", [])
            if label not in held:
                return JSONResponse({"message": "Label does not exist"}, 404)
            held.remove(label)
            return [{"name": other} for other in held]

        @app.post("/app/installations/{installation}/access_tokens", status_code=201)
        async def access_token(installation: int, request: Request) -> dict[str, Any]:
            import jwt

            signed = request.headers.get("authorization", "").removeprefix("Bearer ")
            claims = jwt.decode(signed, self.app_key, algorithms=["RS256"])  # raises on a forged one: a 500
            assert claims["iss"] == "12345" and claims["exp"] - claims["iat"] <= 600
            self.granted.append(installation)
            expires = datetime.fromtimestamp(time.time() + 3600, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            return {"token": f"ghs-installation-{installation}", "expires_at": expires}

        @app.get("/repos/{owner}/{name}/issues/comments/{comment_id}/reactions")
        async def reactions(owner: str, name: str, comment_id: int) -> list[dict[str, Any]]:
            return [{"user": {"login": who}, "content": what} for who, what in self.reactions.get(comment_id, [])]

        @app.post("/graphql")
        async def graphql(request: Request) -> dict[str, Any]:
            sent = await request.json()
            self.discussion_comments.append((sent["variables"]["id"], sent["variables"]["body"]))
            return {
                "data": {"addDiscussionComment": {"comment": {"url": "https://github.com/owner/repo/discussions/9#c"}}}
            }

        self.url = serve(app).url

    def reset(self) -> None:
        """As it started: no calls, comments, labels or reactions; up, quick and not rate-limited."""
        kept_: tuple[Any, ...] = (self.calls, self.comments, self.discussion_comments, self.tokens, self.labels)
        for kept in (*kept_, self.reactions, self.pages):
            kept.clear()
        self.limited, self.down, self.slow, self.retry_after, self.drip = 0, False, 0.0, 0, 0.0

    def fresh(self) -> Iterator[GitHubStandIn]:
        """The stand-in as it started for one test, reset before the test and after it whether it passed or not
        (a module's fixture yields from it)."""
        self.reset()
        try:
            yield self
        finally:
            self.reset()

    def add_comment(self, issue: str, body: str, login: str) -> int:
        """A comment written on `owner/repo#N` by `login` (someone other than the bot); its id."""
        found = max((int(c["id"]) for comments in self.comments.values() for c in comments), default=0)
        comment_id = max(found + 1, 10_000)
        owner_name, number = issue.split("#")
        url = f"https://github.com/{owner_name}/issues/{number}#issuecomment-{comment_id}"
        comment = {"id": comment_id, "body": body, "user": {"login": login, "type": "User"}, "html_url": url}
        self.comments.setdefault(issue, []).append(comment)
        return comment_id

    def comment_id(self, issue: str) -> int:
        """The id of the first comment on `owner/repo#N`."""
        return int(self.comments[issue][0]["id"])

    def on(self, issue: str) -> list[str]:
        """The bodies of the comments on `owner/repo#N`."""
        return [c["body"] for c in self.comments.get(issue, [])]


async def dripped(pause: float) -> Any:
    """An answer sent one byte at a time, `pause` seconds apart: each read is quick, the whole never ends in time."""
    for byte in b'{"message": "' + b"." * 100_000 + b'"}':
        await asyncio.sleep(pause)
        yield bytes([byte])
