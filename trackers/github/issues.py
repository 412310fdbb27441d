"""GitHub issues as the harvest's tracker (`kb.harvest.tracker.Tracker`): a repository's closed issues, each with its
comments, from GitHub's REST API.

`GET /repos/{repo}/issues?state=closed&since=...` lists the issues updated since the last harvest (pull requests,
which the endpoint also lists, are skipped), 100 a page, oldest first; each issue with comments has them read from
`/repos/{repo}/issues/{n}/comments` (at most `threads.MAX_COMMENTS`). The paging, the rate limits, the size cap and
the deadline are the REST core's (rest.py), through the harvest's session (session.py). An issue whose text is not
UTF-8 is refused on its own (`ThreadRefused`), the others read on.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from kb.harvest.threads import MAX_COMMENTS, HarvestError, Thread, from_rest

from .session import Reader, Session

__all__ = ["Issues"]


class Issues(Reader):
    """A repository's closed issues, read from the API at `api_url` with `token`, within `deadline` seconds."""

    def resolved(
        self, repo: str, since: str = "", limit: int = 10_000, refused: Callable[[str], None] | None = None
    ) -> Iterator[Thread]:
        """The closed issues of `repo` updated since `since` (ISO 8601, "" for all), each with its comments."""
        session = self.session(repo)
        params: dict[str, Any] = {"state": "closed", "sort": "updated", "direction": "asc"}
        if since:
            params["since"] = since
        try:
            for issue in session.all(f"/repos/{repo}/issues", params, limit):
                if not isinstance(issue, dict) or "pull_request" in issue:
                    continue
                yield from self.each(lambda: _read(session, repo, issue), refused)
        finally:
            session.close()

    def thread(self, repo: str, number: int) -> Thread:
        """Issue `number` of `repo` with its comments."""
        session = self.session(repo)
        try:
            issue = session.get(f"/repos/{repo}/issues/{int(number)}")
            if not isinstance(issue, dict):
                raise HarvestError(f"{repo}#{number}: the API's answer is not an issue")
            return _read(session, repo, issue)
        finally:
            session.close()


def _read(session: Session, repo: str, issue: Mapping[str, Any]) -> Thread:
    comments: list[Any] = []
    if issue.get("comments"):
        path = f"/repos/{repo}/issues/{int(issue.get('number') or 0)}/comments"
        comments = list(session.all(path, {}, MAX_COMMENTS))
    return from_rest(repo, issue, comments)
