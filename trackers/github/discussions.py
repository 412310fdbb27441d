"""GitHub Discussions as the harvest's tracker (`kb.harvest.tracker.Tracker`): a repository's answered Discussions,
each with its accepted answer and comments, from GitHub's GraphQL API (Discussions have no REST listing).

`repository.discussions(answered: true)` is read newest update first, 25 a page by its cursor, until a Discussion
updated before the last harvest, an empty page or the `limit`; each Discussion comes with its accepted answer and its
first 100 comments, in the shape `gh api graphql` writes (`threads.read_thread` reads both). The requests go through
the REST core's rules (rest.py: the token, the rate limits, the size cap, the harvest's deadline) like the issues'.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from kb.harvest.threads import HarvestError, Thread, read_thread

from .responses import text_at
from .rest import MAX_PAGES, graphql_path
from .session import Reader, Session

__all__ = ["Discussions"]

PER_PAGE = 25  # Discussions a page: each carries up to 100 comments
_THREAD = """fragment thread on Discussion {
  number title body url updatedAt closed closedAt isAnswered
  author { login __typename }
  labels(first: 20) { nodes { name } }
  answer { author { login __typename } authorAssociation body createdAt url }
  comments(first: 100) { nodes { author { login __typename } authorAssociation body createdAt url } }
}"""
_LIST = (
    "query($owner: String!, $name: String!, $after: String, $first: Int!) { repository(owner: $owner, name: $name) { "
    "discussions(first: $first, after: $after, answered: true, orderBy: {field: UPDATED_AT, direction: DESC}) { "
    "pageInfo { hasNextPage endCursor } nodes { ...thread } } } }\n" + _THREAD
)
_ONE = (
    "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { "
    "discussion(number: $number) { ...thread } } }\n" + _THREAD
)


class Discussions(Reader):
    """A repository's answered Discussions, read from the API at `api_url` with `token`, within `deadline` seconds."""

    def resolved(
        self, repo: str, since: str = "", limit: int = 10_000, refused: Callable[[str], None] | None = None
    ) -> Iterator[Thread]:
        """The answered Discussions of `repo` updated since `since` (ISO 8601, "" for all)."""
        session = self.session(repo)
        owner, name = repo.split("/")
        after: str | None = None
        seen = 0
        try:
            for _ in range(MAX_PAGES):
                variables = {"owner": owner, "name": name, "after": after, "first": PER_PAGE}
                found = _data(session, _LIST, variables, repo).get("discussions")
                nodes = found.get("nodes") if isinstance(found, dict) else None
                if not isinstance(nodes, list) or not nodes:
                    return
                for node in nodes[: limit - seen]:
                    if not isinstance(node, dict) or text_at(node, "updatedAt") < since:
                        return  # newest first: every one after it is older still
                    seen += 1
                    where = f"{repo} discussion {node.get('number')}"
                    yield from self.each(lambda: read_thread({**node, "repo": repo}, where), refused)
                info = found.get("pageInfo") if isinstance(found, dict) else None
                after = text_at(info, "endCursor")
                if seen >= limit or not after or not isinstance(info, dict) or info.get("hasNextPage") is not True:
                    return
            raise HarvestError(f"{repo}: Discussions over {MAX_PAGES} pages; the rest is not read")
        finally:
            session.close()

    def thread(self, repo: str, number: int) -> Thread:
        """Discussion `number` of `repo`, with its answer and comments."""
        session = self.session(repo)
        owner, name = repo.split("/")
        try:
            found = _data(session, _ONE, {"owner": owner, "name": name, "number": int(number)}, repo).get("discussion")
            return read_thread(
                {**found, "repo": repo} if isinstance(found, dict) else None, f"{repo} discussion {number}"
            )
        finally:
            session.close()


def _data(session: Session, query: str, variables: dict[str, Any], repo: str) -> dict[str, Any]:
    """The `repository` of a GraphQL answer; HarvestError with GraphQL's own message when it holds errors."""
    answer = session.post(graphql_path(session.api_url), {"query": query, "variables": variables})
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if errors:
        said = text_at(errors[0], "message") if isinstance(errors, list) else ""
        raise HarvestError(f"{repo}: GitHub's GraphQL API refused the query: {said[:200]}")
    data = answer.get("data") if isinstance(answer, dict) else None
    found = data.get("repository") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise HarvestError(f"{repo}: GitHub's GraphQL API answered no repository")
    return found
