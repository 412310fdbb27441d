"""What the bot does with an event: the manners (whom and what it leaves alone), the mode (`suggest`, `comment`,
`mention`), the search at the channel's operating point, and the comment posted, updated or only shown.

Shared by the webhook (routes.py) and `kb github answer` (a workflow run): `respond` takes the event, searches
through the library's front door (recorded under the channel `github`) and, when the mode posts, calls the API.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Awaitable, Callable

from starlette.concurrency import run_in_threadpool

from kb import asking
from kb.events import Events, Voted
from kb.knowledge import KnowledgeBase
from kb.text import detect_lang

from ...settings import ServerSettings
from .client import GitHubAPI
from .comment import MARKER, answer_comment, entry_of, not_covered_comment, question_of
from .events import MEMBERS, Asked, Closed, Command

__all__ = ["Outcome", "Teach", "respond", "mode_for", "skip_reason", "MODES", "MIN_CHARS", "COMMAND_MARKER"]

# Links an issue's question to an entry (None: marks it not covered), as `kb link` does; says what it did.
Teach = Callable[[str, str | None], Awaitable[str]]
# Takes a vote as every channel's are taken (server/votes.py); says what became of it.
Vote = Callable[[Voted], Awaitable[str]]

log = logging.getLogger("kb.server")

MODES = ("suggest", "comment", "mention")
MIN_CHARS = 20  # a question shorter than this (title and body together) is not judged
COMMAND_MARKER = "<!-- kb-faq-bot:command -->"  # an answer to a /faq command: a comment of its own, never updated


@dataclass(frozen=True)
class Outcome:
    """What the bot did: the comment (posted, or what it would post: "" for none), whether it was posted, and why."""

    comment: str
    posted: bool
    reason: str
    url: str = ""
    entry: str = ""  # the id of the entry answered with ("" for none)
    confidence: float = 0.0  # the search's, when it ran


def mode_for(settings: ServerSettings, repo: str) -> str:
    """The repository's mode: KB_GITHUB_REPOS's for it (`owner/a=comment,owner/b=mention`), else KB_GITHUB_MODE."""
    return settings.github_repo_modes.get(repo.lower(), settings.github_mode)


def skip_reason(asked: Asked, settings: ServerSettings) -> str:
    """Why an issue or Discussion is left alone ("" when the bot may answer it)."""
    if asked.bot:
        return f"{asked.author} is a bot"
    if asked.association in MEMBERS:
        return f"{asked.author} is one of the repository's own ({asked.association})"
    if asked.locked:
        return "it is locked"
    if asked.closed:
        return "it is closed"
    if settings.github_skip_label.lower() in (label.lower() for label in asked.labels):
        return f"it is labelled {settings.github_skip_label}"
    if len(question_of(asked.title, asked.body)) < MIN_CHARS:
        return f"it says too little to judge (under {MIN_CHARS} characters)"
    return ""


async def respond(
    kb: KnowledgeBase,
    events: Events,
    settings: ServerSettings,
    event: Asked | Command | Closed,
    api: GitHubAPI | None,
    root: str = "",
    teach: Teach | None = None,
    vote: Vote | None = None,
) -> Outcome:
    """Answer `event` as its repository's mode says; with no `api` (a dry run), post nothing and say what would be.
    A maintainer's `/faq link <entry>` or `/faq not-covered` teaches the knowledge base through `teach`."""
    if isinstance(event, Closed):
        return await _reactions(event.asked, api, vote)
    if isinstance(event, Command):
        words = event.text.split()
        if words and words[0] in ("link", "not-covered"):
            return await _taught(event, words, teach)
        return await _command(kb, events, event, api, root)
    mode = mode_for(settings, event.repo)
    reason = skip_reason(event, settings)
    if not reason and mode == "mention":
        reason = "mention mode: only /faq commands are answered"
    if reason:
        return Outcome("", False, reason)
    question = question_of(event.title, event.body)
    found = await asking.search(
        kb, events, question, channel="github", hl=detect_lang(question), conversation=_where(event, settings)
    )
    point = settings.precision_for("github")
    sure = found.result.confidence
    if not found.result.answered:
        return Outcome("", False, f"not sure enough: confidence {sure:.2f} under precision {point}", confidence=sure)
    comment, entry = answer_comment(found, root), found.hits[0].entry.id
    if mode == "suggest":
        return Outcome(comment, False, "suggest mode: the answer is not posted", entry=entry, confidence=sure)
    if api is None:
        return Outcome(comment, False, "dry run: nothing posted", entry=entry, confidence=sure)
    if event.kind == "discussion":
        url = await run_in_threadpool(api.comment_on_discussion, event.node_id, comment)
    else:
        url = await run_in_threadpool(api.upsert_issue_comment, event.repo, event.number, comment, MARKER)
    return Outcome(comment, True, "posted", url, entry, sure)


def _where(asked: Asked, settings: ServerSettings) -> tuple[str, str] | None:
    """What the insights keep of where a question was asked: a public issue's repository and URL; a private
    one's only where KB_INSIGHTS_CHAT_IDS asks, as other chats' ids are."""
    return (asked.repo, asked.url) if not asked.private or settings.insights_chat_ids else None


async def _reactions(asked: Asked, api: GitHubAPI | None, vote: Vote | None) -> Outcome:
    """An issue closed: each 👍 or 👎 on the bot's comment a vote on the entry it answered with."""
    if api is None or vote is None:
        return Outcome("", False, "closed: no API to read the reactions with")
    mine = await run_in_threadpool(api.find_issue_comment, asked.repo, asked.number, MARKER)
    entry = entry_of(str(mine.get("body", ""))) if mine else ""
    if mine is None or not entry:
        return Outcome("", False, "closed: no answer of the bot's on it")
    question = question_of(asked.title, asked.body)
    said = []
    for who, reaction in await run_in_threadpool(api.reactions, asked.repo, int(mine["id"])):
        if reaction in ("+1", "-1"):
            voted = Voted(entry, reaction == "+1", question, f"github:{asked.repo}:{who}", "github")
            said.append(await vote(voted))
    return Outcome("", False, f"closed: {len(said)} votes on {entry} ({'; '.join(sorted(set(said))) or 'none'})")


async def _taught(command: Command, words: list[str], teach: Teach | None) -> Outcome:
    """`/faq link <entry>` or `/faq not-covered` from one of the repository's own: the issue's question taught."""
    if command.author_association not in MEMBERS:
        return Outcome("", False, "only the repository's own people (OWNER, MEMBER, COLLABORATOR) teach the FAQ")
    if teach is None:
        return Outcome("", False, "teaching needs the server's insights database: use the webhook, or kb link")
    if words[0] == "link" and len(words) != 2:
        return Outcome("", False, "/faq link takes one entry id: /faq link slime-b0ab398d")
    asked = command.asked
    return Outcome(
        "", False, await teach(question_of(asked.title, asked.body), words[1] if words[0] == "link" else None)
    )


async def _command(kb: KnowledgeBase, events: Events, command: Command, api: GitHubAPI | None, root: str) -> Outcome:
    """A `/faq` comment, answered in every mode: the FAQ's answer, or plainly that it does not cover it."""
    asked = command.asked
    question = command.text or question_of(asked.title, asked.body)
    found = await asking.search(kb, events, question, channel="github", hl=detect_lang(question))
    made = answer_comment(found, root) if found.result.answered else not_covered_comment(found, root)
    comment = made.replace(MARKER, COMMAND_MARKER, 1)
    if api is None:
        return Outcome(comment, False, "dry run: nothing posted")
    url = await run_in_threadpool(api.comment_on_issue, asked.repo, asked.number, comment)
    return Outcome(comment, True, "posted", url)
