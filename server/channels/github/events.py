"""GitHub's webhook events, read into what the bot acts on: a question (an issue opened or edited, a Discussion
created), a `/faq` command (an issue comment), an issue closed (its votes counted, its thread harvested), or
something to acknowledge and leave (a ping, an installation, any other event).

An issue's question (`kb.issue_question`) is read here, once per event: `read_event` takes time linear in the body,
and the webhook runs it off the event loop."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kb.issue_question import question_of

from ...exceptions import ServerError

__all__ = ["Opened", "Closed", "Command", "Other", "BadGitHubEvent", "read_event", "payload_of", "MEMBERS"]

NAME_CHARS = 64  # of an event's name and action said back: GitHub's are under 40
MEMBERS = ("OWNER", "MEMBER", "COLLABORATOR")  # author associations of the repository's own people


class BadGitHubEvent(ServerError):
    """A body that is not JSON, or not of the shape GitHub sends for its event; the message names the field."""

    status = 400
    channel = "github"
    sender = "GitHub delivery"


@dataclass(frozen=True)
class Opened:
    """An issue or a Discussion opened (or edited) to answer: where it is, who wrote it, what it says."""

    repo: str  # owner/name
    number: int
    kind: str  # "issue" or "discussion"
    title: str
    body: str
    url: str
    author: str
    association: str  # OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...
    bot: bool  # the author is a bot account
    locked: bool
    closed: bool
    labels: tuple[str, ...]
    private: bool
    node_id: str = ""  # a Discussion's, to comment on it (GraphQL)
    edited: bool = False
    installation: int = 0  # the GitHub App installation the delivery came through (0: none)
    question: str = ""  # the title and the body's question (`kb.issue_question`), read once
    state_reason: str = ""  # an issue closed: "completed", "not_planned", "duplicate" ("" when not said)
    closed_at: str = ""  # when it was closed, ISO 8601 ("" for an open one)


@dataclass(frozen=True)
class Command:
    """A `/faq` comment on an issue: `text` after the command (empty: the issue itself is the question)."""

    asked: Opened  # the issue it was written on
    text: str
    author_association: str
    author: str = ""  # the commenter's login
    bot: bool = False  # the commenter is a bot account
    question: str = ""  # the text read as an issue's body is (`kb.issue_question`): "" for none


@dataclass(frozen=True)
class Closed:
    """An issue closed: the readers' reactions to the bot's comment on it are counted as votes, and the thread is
    harvested (server/channels/github/harvest.py)."""

    asked: Opened


@dataclass(frozen=True)
class Other:
    """An event the bot acknowledges and leaves: a ping, an installation, another action."""

    what: str


def read_event(name: str, body: bytes) -> Opened | Command | Closed | Other:
    """The event `name` (the `X-GitHub-Event` header) with this body; BadGitHubEvent when it is not GitHub's shape."""
    return event_of(name, payload_of(body))


def payload_of(body: bytes) -> dict[str, Any]:
    """A delivery's JSON object; BadGitHubEvent saying what is wrong with it when it is not one."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadGitHubEvent("body: not JSON") from None
    except RecursionError:  # nested too deep for the parser: no event of GitHub's goes deeper than a few levels
        raise BadGitHubEvent("body: nested too deep") from None
    except ValueError:  # Python reads an integer of at most 4,300 digits; GitHub's ids have under 20
        raise BadGitHubEvent("body: a number too long to be GitHub's (over 4,300 digits)") from None
    if not isinstance(payload, dict):
        raise BadGitHubEvent("body: not a JSON object")
    return payload


def event_of(name: str, payload: dict[str, Any]) -> Opened | Command | Closed | Other:
    action = payload.get("action")
    if name == "issues" and action == "closed":
        return Closed(_asked(payload, "issue", payload.get("issue")))
    if name == "issues" and action in ("opened", "edited"):
        return _asked(payload, "issue", payload.get("issue"), edited=action == "edited")
    if name == "discussion" and action == "created":
        return _asked(payload, "discussion", payload.get("discussion"))
    if name == "issue_comment" and action == "created":
        comment = _object(payload, "comment")
        text = _text(comment, "comment", "body").strip()
        if text == "/faq" or text.startswith(("/faq ", "/faq\n")):
            asked = _asked(payload, "issue", payload.get("issue"))
            user = comment["user"] if isinstance(comment.get("user"), dict) else {}
            login = str(user.get("login") or "")
            bot = user.get("type") == "Bot" or login.endswith("[bot]")
            said = text[4:].strip()
            association = _text(comment, "comment", "author_association")
            return Command(asked, said, association, login, bot, question_of("", said) if said else "")
        return Other("an issue comment that is not a /faq command")
    what = f"{name[:NAME_CHARS]} {str(action)[:NAME_CHARS]}" if action else name[:NAME_CHARS]
    return Other(what)  # the header is not signed: only its start is said back


def _asked(payload: dict[str, Any], kind: str, item: Any, edited: bool = False) -> Opened:
    if not isinstance(item, dict):
        raise BadGitHubEvent(f"{kind}: missing, or not an object")
    repo = _object(payload, "repository")
    user: dict[str, Any] = item["user"] if isinstance(item.get("user"), dict) else {}
    listed = item.get("labels") or []
    if not isinstance(listed, list):
        raise BadGitHubEvent(f"{kind}.labels: not a list")
    labels = tuple(str(label.get("name", "")) for label in listed if isinstance(label, dict))
    number = item.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BadGitHubEvent(f"{kind}.number: not a number")
    title, body = str(item.get("title") or ""), str(item.get("body") or "")
    return Opened(
        repo=_text(repo, "repository", "full_name"),
        number=number,
        kind=kind,
        title=title,
        body=body,
        url=str(item.get("html_url") or ""),
        author=str(user.get("login") or ""),
        association=str(item.get("author_association") or "NONE"),
        bot=user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"),
        locked=bool(item.get("locked")),
        closed=item.get("state") == "closed",
        labels=labels,
        private=bool(repo.get("private")),
        node_id=str(item.get("node_id") or ""),
        edited=edited,
        installation=_installation(payload),
        question=question_of(title, body),
        state_reason=str(item.get("state_reason") or "")[:NAME_CHARS],
        closed_at=str(item.get("closed_at") or "")[:NAME_CHARS],
    )


def _installation(payload: dict[str, Any]) -> int:
    installation = payload.get("installation")
    found = installation.get("id") if isinstance(installation, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def _object(payload: dict[str, Any], name: str) -> dict[str, Any]:
    value = payload.get(name)
    if not isinstance(value, dict):
        raise BadGitHubEvent(f"{name}: missing, or not an object")
    return value


def _text(item: dict[str, Any], where: str, name: str) -> str:
    value = item.get(name)
    if not isinstance(value, str):
        raise BadGitHubEvent(f"{where}.{name}: missing, or not text")
    return value
