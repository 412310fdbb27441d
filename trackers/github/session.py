"""The harvest's sync session with GitHub's API: one deadline for the whole harvest, the token, the REST core's calls
sent by its sync caller (`send`), and the core's errors said as the harvest's (`HarvestError`, naming the API URL).

Past the deadline the error says how many requests were made and that nothing was kept; an API out of reach says to
harvest the JSON `gh` writes with `--from FILE` instead.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterator, Mapping

from kb.harvest.threads import HarvestError, Thread, ThreadRefused

from .responses import GitHubUnavailable
from .rest import PER_PAGE, Call, Deadline, DeadlinePassed, Listing, Reply, Unreachable
from .send import connections, send

__all__ = ["Session", "Reader", "DEADLINE"]

DEADLINE = 900.0  # seconds a whole harvest of a repository may take


class Session:
    """Calls to GitHub's API at `api_url` with `token` ("" for none), all within `deadline` seconds from now."""

    def __init__(
        self, api_url: str, token: str = "", deadline: float = DEADLINE, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.token, self.sleep = token, sleep
        self.client = connections(self.api_url, "kb-harvest")
        self.deadline = Deadline(deadline, "the harvest's deadline")
        self.calls = 0  # requests made

    def close(self) -> None:
        self.client.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """The JSON value of one GET."""
        return self._send(Call(self.api_url, "GET", path, self.deadline, params, lenient=True)).value

    def post(self, path: str, body: Any) -> Any:
        """The JSON value of one POST of `body` (a GraphQL query)."""
        return self._send(Call(self.api_url, "POST", path, self.deadline, json=body, lenient=True)).value

    def all(self, path: str, params: Mapping[str, Any], limit: int) -> Iterator[Any]:
        """Every item of a paged list, at most `limit`, 100 a page (rest.Listing: it ends at an empty page)."""
        listing = Listing(path, {**params, "per_page": PER_PAGE}, limit)
        while True:
            try:
                page = listing.next()
            except GitHubUnavailable as exc:
                raise HarvestError(f"{self.api_url}: {exc}") from None
            if page is None:
                return
            reply = self._send(Call(self.api_url, "GET", page[0], self.deadline, page[1], lenient=True))
            try:
                yield from listing.take(reply)
            except GitHubUnavailable as exc:
                raise HarvestError(f"{self.api_url}: {exc}") from None

    def _send(self, call: Call) -> Reply:
        where = f"{call.method} {self.api_url}{call.path.removeprefix(self.api_url)}"
        try:
            return send(self.client, call, self.token, self.sleep)
        except DeadlinePassed:
            raise HarvestError(
                f"{where}: the harvest took over its deadline of {self.deadline.seconds:.0f} s "
                f"({self.calls + call.tries} requests made); nothing was kept"
            ) from None
        except Unreachable as exc:
            reason = str(exc).removeprefix(f"{call.what}: ")
            raise HarvestError(
                f"{where}: GitHub could not be reached ({reason}); without the network, harvest the JSON "
                "`gh issue list` writes with --from FILE (kb harvest --help)"
            ) from None
        except GitHubUnavailable as exc:
            raise HarvestError(f"{where}: {str(exc).removeprefix(f'{call.what}: ')}") from None
        finally:
            self.calls += call.tries


class Reader:
    """What GitHub's two trackers share: the API at `api_url`, the token, the deadline of each read and how to wait
    out a rate limit; a session of its own for each read."""

    def __init__(
        self, api_url: str, token: str = "", deadline: float = DEADLINE, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.api_url, self.token, self.deadline, self.sleep = api_url, token, deadline, sleep

    def session(self, repo: str) -> Session:
        """A session for reading `repo`; a HarvestError naming `--repo` when it is not `owner/name`."""
        if not re.fullmatch(r"[\w.-]{1,100}/[\w.-]{1,100}", repo):
            raise HarvestError(f"--repo {repo!r}: expected OWNER/NAME")
        return Session(self.api_url, self.token, self.deadline, self.sleep)

    @staticmethod
    def each(read: Callable[[], Thread], refused: Callable[[str], None] | None) -> Iterator[Thread]:
        """The thread `read` makes; one refused on its own said to `refused` (else raised) and left out."""
        try:
            yield read()
        except ThreadRefused as exc:
            if refused is None:
                raise
            refused(str(exc))
