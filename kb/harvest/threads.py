"""Tracker threads as `kb harvest` reads them: closed issues and answered Discussions, from `gh`'s JSON or GitHub's REST API.

The file shape is what `gh issue list --state closed --json number,title,body,state,stateReason,author,
comments,labels,url,closedAt,closedByPullRequestsReferences` writes (each comment with `author.login` and
`authorAssociation`), and the same shape for Discussions as `gh api graphql` returns them: `answer` (the
accepted answer, with its author and `authorAssociation`) or `isAnswered`, `comments` and `labels` either
lists or `{"nodes": [...]}`. `from_rest` reads the REST API's issue and comments into the same `Thread`.

Every text is cut to `MAX_TEXT` characters as it is read, before anything looks at it, so a hostile
thread (a 10 MB body) costs what a long one does. A thread whose text is not Unicode that can be written as UTF-8 (a
lone surrogate, `"\ud800"` in its JSON, or bytes that are not UTF-8, read as such) is refused on its own
(`ThreadRefused`, naming the thread and the field); given `refused`, `read_threads` reports it there and reads on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from ..errors import KBError

__all__ = [
    "Thread",
    "Comment",
    "HarvestError",
    "ThreadRefused",
    "read_threads",
    "from_rest",
    "MAX_TEXT",
    "MAX_COMMENTS",
    "is_bot",
]

MAX_TEXT = 65_536  # characters of a title, body or comment kept; the rest is never read
MAX_COMMENTS = 300  # comments of a thread read (GitHub pages them by 100; a longer thread is no FAQ answer)
KNOWN_BOTS = ("github-actions", "dependabot", "stale", "copilot", "coderabbitai", "gemini-code-assist")


class HarvestError(KBError):
    """A thread file or an API answer that is not of the shape `kb harvest` reads; the message names where."""


class ThreadRefused(HarvestError):
    """One thread refused, the others read on: its text cannot be written as UTF-8."""


def _unwritable(thread: Thread) -> str:
    """The first field of `thread` whose text is not UTF-8 (a lone surrogate), or ""."""
    fields: list[tuple[str, str]] = [("title", thread.title), ("body", thread.body), ("url", thread.url)]
    fields += [("author", thread.author), ("repo", thread.repo), *(("labels", label) for label in thread.labels)]
    said = [*thread.comments, *((thread.accepted,) if thread.accepted else ())]
    for i, comment in enumerate(said):
        fields += [(f"comments[{i}].body", comment.body), (f"comments[{i}].author", comment.author)]
        fields += [(f"comments[{i}].url", comment.url), (f"comments[{i}].association", comment.association)]
    for name, text in fields:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{name} (character {exc.start + 1}: a lone surrogate, or bytes that are not UTF-8)"
    return ""


@dataclass(frozen=True)
class Comment:
    """One comment of a thread (or a Discussion's accepted answer)."""

    author: str
    association: str  # OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ... ("" when not said)
    body: str
    created_at: float | None = None  # Unix seconds
    bot: bool = False
    url: str = ""


@dataclass(frozen=True)
class Thread:
    """An issue or a Discussion, with its comments, as the harvest reads it."""

    repo: str  # owner/name ("" when the URL does not say)
    number: int
    kind: str  # "issue" or "discussion"
    title: str
    body: str
    url: str
    author: str
    state: str  # "open" or "closed"
    state_reason: str  # "completed", "not_planned", "duplicate", "reopened" or "" (not said)
    labels: tuple[str, ...] = ()
    comments: tuple[Comment, ...] = ()
    closed_at: float | None = None
    linked_prs: tuple[str, ...] = ()  # URLs of the pull requests that closed it
    accepted: Comment | None = None  # a Discussion's accepted answer
    answered: bool = False  # a Discussion marked answered


def is_bot(login: str, flagged: object = False) -> bool:
    """Whether an account is a bot: flagged so by GitHub, named `...[bot]`, or one of the well-known ones."""
    name = login.lower()
    return bool(flagged) or name.endswith("[bot]") or name in KNOWN_BOTS


def _when(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _nodes(value: object) -> list[Any]:
    """A list, or a GraphQL connection's `nodes`."""
    if isinstance(value, Mapping):
        value = value.get("nodes")
    return list(value) if isinstance(value, list) else []


def _login(author: object) -> tuple[str, bool]:
    if not isinstance(author, Mapping):
        return "", False
    login = str(author.get("login") or "")[:100]
    return login, is_bot(
        login, author.get("is_bot") or author.get("type") == "Bot" or author.get("__typename") == "Bot"
    )


def _comment(raw: object) -> Comment | None:
    if not isinstance(raw, Mapping):
        return None
    login, bot = _login(raw.get("author") or raw.get("user"))
    association = str(raw.get("authorAssociation") or raw.get("author_association") or "").upper()
    when = _when(raw.get("createdAt") or raw.get("created_at"))
    url = str(raw.get("url") or raw.get("html_url") or "")
    return Comment(login, association, _text(raw.get("body")), when, bot, url)


def _repo_of(url: str) -> str:
    parts = url.split("/")
    return f"{parts[3]}/{parts[4]}" if len(parts) > 4 and parts[2].endswith("github.com") else ""


def _reason(raw: object) -> str:
    return str(raw or "").lower()


def read_thread(raw: object, where: str = "") -> Thread:
    """One thread of `gh`'s JSON (an issue, or a Discussion); HarvestError names `where` and the field at fault."""
    if not isinstance(raw, Mapping):
        raise HarvestError(f"{where}: not a JSON object")
    number = raw.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise HarvestError(f"{where}.number: {number!r} is not an issue or Discussion number")
    if not isinstance(raw.get("title"), str):
        raise HarvestError(f"{where}.title: missing, or not text")
    url = str(raw.get("url") or "")
    discussion = "/discussions/" in url or "isAnswered" in raw or "answer" in raw
    comments = tuple(c for c in map(_comment, _nodes(raw.get("comments"))[:MAX_COMMENTS]) if c is not None)
    accepted = _comment(raw.get("answer")) if isinstance(raw.get("answer"), Mapping) else None
    state = str(raw.get("state") or ("CLOSED" if raw.get("closed") else "OPEN")).lower()
    labels = tuple(str(label.get("name") or "") for label in _nodes(raw.get("labels")) if isinstance(label, Mapping))
    prs = tuple(
        str(pr.get("url") or "") for pr in _nodes(raw.get("closedByPullRequestsReferences")) if isinstance(pr, Mapping)
    )
    author, _ = _login(raw.get("author"))
    thread = Thread(
        repo=str(raw.get("repo") or _repo_of(url)),
        number=number,
        kind="discussion" if discussion else "issue",
        title=_text(raw.get("title")),
        body=_text(raw.get("body")),
        url=url,
        author=author,
        state="closed" if state == "closed" else "open",
        state_reason=_reason(raw.get("stateReason")),
        labels=labels,
        comments=comments,
        closed_at=_when(raw.get("closedAt")),
        linked_prs=tuple(p for p in prs if p),
        accepted=accepted,
        answered=bool(raw.get("isAnswered")) or accepted is not None,
    )
    bad = _unwritable(thread)
    if bad:
        raise ThreadRefused(f"{where}: refused, its {bad} is not UTF-8 text")
    return thread


def read_threads(
    data: object, where: str = "threads", refused: Callable[[str], None] | None = None, limit: int = 0
) -> list[Thread]:
    """The threads of a file's JSON: a list of them (or an object with `issues`, `discussions` or GraphQL's
    `data.repository.discussions.nodes`), the first `limit` (0: all); HarvestError names the first one that is not a
    thread. A thread refused on its own (`ThreadRefused`) is said to `refused`, when given, and left out."""
    if isinstance(data, Mapping):
        repository = data.get("data", {}).get("repository", {}) if isinstance(data.get("data"), Mapping) else {}
        found = _nodes(data.get("issues")) + _nodes(data.get("discussions"))
        found += _nodes(repository.get("discussions") if isinstance(repository, Mapping) else None)
        data = found
    if not isinstance(data, list):
        raise HarvestError(f"{where}: expected a JSON list of issues or Discussions")
    found_threads = []
    for i, raw in enumerate(data[:limit] if limit else data):
        try:
            found_threads.append(read_thread(raw, f"{where}[{i}]"))
        except ThreadRefused as exc:
            if refused is None:
                raise
            refused(str(exc))
    return found_threads


def from_rest(repo: str, issue: Mapping[str, Any], comments: Sequence[Any]) -> Thread:
    """An issue of GitHub's REST API (`/repos/{repo}/issues`) with its comments, as the file's shape reads."""
    raw = {
        "repo": repo,
        "number": issue.get("number"),
        "title": issue.get("title"),
        "body": issue.get("body"),
        "url": issue.get("html_url"),
        "state": issue.get("state"),
        "stateReason": issue.get("state_reason"),
        "author": issue.get("user"),
        "labels": issue.get("labels"),
        "closedAt": issue.get("closed_at"),
        "comments": list(comments),
    }
    return read_thread(raw, f"{repo}#{issue.get('number')}")
