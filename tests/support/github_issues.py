"""A stand-in for GitHub's API as `kb harvest --repo` reads it: a real HTTP server on a loopback port that lists
a repository's issues (paged by `Link` headers, filtered by `state` and `since`), each issue and its comments, and its
answered Discussions over GraphQL (paged by cursor, newest update first), and can answer its first calls with a rate
limit, list nothing but empty pages each naming a next one, be slow, or answer more than any reply may hold.
GitHub itself cannot run here."""

from __future__ import annotations

from typing import Any, Callable

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse


class IssuesStandIn:
    """Issues of one repository: `issues` (REST JSON, newest last) and `comments` by issue number."""

    def __init__(self, serve: Callable[[Any], Any], per_page_cap: int = 2):
        self.issues: list[dict[str, Any]] = []
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.calls: list[tuple[str, dict[str, str]]] = []  # (path, query) of each call
        self.tokens: list[str] = []
        self.limited = 0  # the next calls to answer 403 with no requests left until a reset `reset_in` seconds away
        self.reset_in = 1
        self.empty_pages = False  # list issues as empty pages, each with a `Link` to the next, without end
        self.slow = 0.0  # seconds every call waits before it is answered
        self.huge = 0  # bytes of padding in every answer's JSON (0: none)
        self.discussions: list[dict[str, Any]] = []  # GraphQL nodes, as `gh api graphql` gives them
        app = FastAPI()
        cap = per_page_cap  # GitHub pages by 100; a small page makes a few threads take several pages

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Any:
            self.calls.append((request.url.path, dict(request.query_params)))
            self.tokens.append(request.headers.get("authorization", ""))
            if self.slow:
                import asyncio

                await asyncio.sleep(self.slow)
            if self.limited:
                self.limited -= 1
                import time

                reset = str(int(time.time()) + self.reset_in)
                return JSONResponse(
                    {"message": "API rate limit exceeded"},
                    403,
                    headers={
                        "X-RateLimit-Limit": "60",
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Reset": reset,
                        "X-RateLimit-Resource": "core",
                    },
                )
            if self.huge:
                return Response(b'[{"padding": "' + b"x" * self.huge + b'"}]', media_type="application/json")
            return await call_next(request)

        def paged(request: Request, items: list[dict[str, Any]]) -> JSONResponse:
            page = int(request.query_params.get("page", "1"))
            per_page = min(cap, int(request.query_params.get("per_page", "30")))
            chunk = items[(page - 1) * per_page : page * per_page]
            headers = {}
            if page * per_page < len(items):
                query = dict(request.query_params) | {"page": str(page + 1)}
                following = str(request.url.replace_query_params(**query))
                headers["Link"] = f'<{following}>; rel="next"'
            return JSONResponse(chunk, headers=headers)

        @app.get("/repos/{owner}/{name}/issues")
        async def list_issues(owner: str, name: str, request: Request) -> JSONResponse:
            if self.empty_pages:
                page = int(request.query_params.get("page", "1"))
                following = str(request.url.replace_query_params(**(dict(request.query_params) | {"page": page + 1})))
                return JSONResponse([], headers={"Link": f'<{following}>; rel="next"'})
            state = request.query_params.get("state", "open")
            since = request.query_params.get("since", "")
            found = [i for i in self.issues if state == "all" or i["state"] == state]
            found = [i for i in found if not since or i["updated_at"] >= since]
            return paged(request, found)

        @app.get("/repos/{owner}/{name}/issues/{number}/comments")
        async def list_comments(owner: str, name: str, number: int, request: Request) -> JSONResponse:
            return paged(request, self.comments.get(number, []))

        @app.get("/repos/{owner}/{name}/issues/{number}")
        async def one_issue(owner: str, name: str, number: int) -> JSONResponse:
            found = [i for i in self.issues if i["number"] == number]
            return JSONResponse(found[0]) if found else JSONResponse({"message": "Not Found"}, 404)

        @app.post("/graphql")
        async def graphql(request: Request) -> dict[str, Any]:
            variables = (await request.json())["variables"]
            newest = sorted(self.discussions, key=lambda d: d["updatedAt"], reverse=True)
            if "number" in variables:
                found = [d for d in newest if d["number"] == variables["number"]]
                return {"data": {"repository": {"discussion": found[0] if found else None}}}
            at = int(variables.get("after") or 0)
            page = newest[at : at + min(cap, variables["first"])]
            info = {"hasNextPage": at + len(page) < len(newest), "endCursor": str(at + len(page))}
            return {"data": {"repository": {"discussions": {"pageInfo": info, "nodes": page}}}}

        self.server = serve(app)

    @property
    def url(self) -> str:
        return str(self.server.url)

    def add(
        self, number: int, title: str, answer: str, updated_at: str, reason: str = "completed", pull: bool = False
    ) -> None:
        """A closed issue with a maintainer's answer (or a pull request, which the issues list also holds)."""
        repo = "THUDM/slime"
        issue: dict[str, Any] = {
            "number": number,
            "title": title,
            "body": "### Your Question\n\n" + title,
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "state": "closed",
            "state_reason": reason,
            "user": {"login": "asker", "type": "User"},
            "labels": [],
            "comments": 1,
            "updated_at": updated_at,
            "closed_at": updated_at,
        }
        if pull:
            issue["pull_request"] = {"url": f"https://api.github.com/repos/{repo}/pulls/{number}"}
        self.issues.append(issue)
        self.comments[number] = [
            {
                "user": {"login": "zhuzilin", "type": "User"},
                "author_association": "MEMBER",
                "body": answer,
                "created_at": "2026-01-01T00:00:00Z",
                "html_url": f"https://github.com/{repo}/issues/{number}#c1",
            }
        ]


def discussion(number: int, title: str, answer: str, updated_at: str, repo: str = "THUDM/slime") -> dict[str, Any]:
    """An answered Discussion, as GitHub's GraphQL API gives it, its answer a maintainer's."""
    url = f"https://github.com/{repo}/discussions/{number}"
    said = {
        "author": {"login": "zhuzilin", "__typename": "User"},
        "authorAssociation": "MEMBER",
        "body": answer,
        "createdAt": updated_at,
        "url": f"{url}#discussioncomment-{number}",
    }
    return {
        "number": number,
        "title": title,
        "body": "### Your Question\n\n" + title,
        "url": url,
        "updatedAt": updated_at,
        "closed": False,
        "closedAt": None,
        "isAnswered": True,
        "author": {"login": "asker", "__typename": "User"},
        "labels": {"nodes": []},
        "answer": said,
        "comments": {"nodes": [said]},
    }
