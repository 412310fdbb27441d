"""GitHub issues as the harvest's tracker (`kb.harvest.tracker.Tracker`): a repository's closed issues, each with its
comments, from GitHub's REST API.

`GET /repos/{repo}/issues?state=closed&since=...` lists the issues updated since the last harvest (pull requests,
which the endpoint also lists, are skipped), 100 a page, oldest first; each issue with comments has them read from
`/repos/{repo}/issues/{n}/comments` (at most `threads.MAX_COMMENTS`). The paging, the rate limits, the size cap and
the deadline are the REST core's (rest.py), through the harvest's session (session.py). An issue whose text is not
UTF-8 is refused on its own (`ThreadRefused`), the others read on.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterator, Mapping

from kb.harvest.threads import MAX_COMMENTS, HarvestError, Thread, ThreadRefused, from_rest

from .session import DEADLINE, Session

__all__ = ["Issues", "check_repo"]


def check_repo(repo: str) -> None:
    """`repo` as `owner/name`; a HarvestError naming `--repo` when it is not."""
    if not re.fullmatch(r"[\w.-]{1,100}/[\w.-]{1,100}", repo):
        raise HarvestError(f"--repo {repo!r}: expected OWNER/NAME")


class Issues:
    """A repository's closed issues, read from the API at `api_url` with `token`, within `deadline` seconds."""

    def __init__(
        self, api_url: str, token: str = "", deadline: float = DEADLINE, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.api_url, self.token, self.deadline, self.sleep = api_url, token, deadline, sleep

    def resolved(
        self, repo: str, since: str = "", limit: int = 10_000, refused: Callable[[str], None] | None = None
    ) -> Iterator[Thread]:
        """The closed issues of `repo` updated since `since` (ISO 8601, "" for all), each with its comments."""
        check_repo(repo)
        session = Session(self.api_url, self.token, self.deadline, self.sleep)
        params: dict[str, Any] = {"state": "closed", "sort": "updated", "direction": "asc"}
        if since:
            params["since"] = since
        try:
            for issue in session.all(f"/repos/{repo}/issues", params, limit):
                if not isinstance(issue, dict) or "pull_request" in issue:
                    continue
                try:
                    yield _read(session, repo, issue)
                except ThreadRefused as exc:
                    if refused is None:
                        raise
                    refused(str(exc))
        finally:
            session.close()

    def thread(self, repo: str, number: int) -> Thread:
        """Issue `number` of `repo` with its comments."""
        check_repo(repo)
        session = Session(self.api_url, self.token, self.deadline, self.sleep)
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
