"""What the bot does with an event: the manners (whom and what it leaves alone), the mode (`suggest`, `comment`,
`mention`), the search at the channel's operating point, and the comment posted, updated or only shown.

Shared by the webhook (routes.py) and `kb github answer` (a workflow run): `respond` takes the event, searches
through the library's front door (recorded under the channel `github`) and, when the mode posts, calls the API.
In `suggest` mode, on the server, the comment is kept as a suggested answer on /insights (`Suggestions`) for a
maintainer to post or dismiss, and the issue labelled `KB_GITHUB_SUGGEST_LABEL` where that is set; an issue
edited has its suggestion replaced, and one closed, or no longer answered, has it dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Protocol

from kb import asking
from kb.channel_points import DRAFT_PRECISION
from kb.events import Events, Voted
from kb.knowledge import KnowledgeBase
from kb.text import detect_lang
from kb.verbatim import CERTAIN

from ...settings import ServerSettings
from . import CHANNEL
from .client import GitHubAPI, GitHubUnavailable, IssueThread
from .comment import MARKER, answer_comment, entry_of, not_covered_comment
from .events import MEMBERS, Closed, Command, Opened
from .settings import MODES
from .suggestions import SuggestedAnswer

__all__ = [
    "Outcome",
    "Teach",
    "Suggestions",
    "respond",
    "mode_for",
    "skip_reason",
    "MODES",
    "MIN_CHARS",
    "COMMAND_MARKER",
]

# Links an issue's question to an entry (None: marks it not covered), as `kb link` does; says what it did.
Teach = Callable[[str, str | None], Awaitable[str]]
# Takes a vote as every channel's are taken (server/votes.py); says what became of it.
Vote = Callable[[Voted], Awaitable[str]]


class Suggestions(Protocol):
    """Where suggest mode keeps its answers for a maintainer (the insights database's pending answers: `suggestions.py`)."""

    async def suggest(self, answer: SuggestedAnswer) -> None: ...

    async def drop_suggestion(self, repo: str, number: int) -> bool: ...


log = logging.getLogger("kb.server")

# Suggest mode's operating point: its answers wait for a maintainer on /insights, so it drafts from a lower
# precision than a comment posted in public (the channel's own), unless KB_CHANNEL_PRECISION sets a lower one.
SUGGEST_PRECISION = DRAFT_PRECISION
# An issue or Discussion is read whole (its title, then what its body asks): judged by the confidence fitted on whole
# issues (`kb calibrate --issues`), the channel's points read off that calibration's held-out curve.
READS = CHANNEL.reads
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


def skip_reason(asked: Opened, settings: ServerSettings) -> str:
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
    if len(asked.question) < MIN_CHARS:
        return f"it says too little to judge (under {MIN_CHARS} characters)"
    return ""


async def respond(
    kb: KnowledgeBase,
    events: Events,
    settings: ServerSettings,
    event: Opened | Command | Closed,
    api: GitHubAPI | None,
    root: str = "",
    teach: Teach | None = None,
    vote: Vote | None = None,
    suggestions: Suggestions | None = None,
    thread: IssueThread | None = None,
) -> Outcome:
    """Answer `event` as its repository's mode says; with no `api` (a dry run), post nothing and say what would be.
    A maintainer's `/faq link <entry>` or `/faq not-covered` teaches the knowledge base through `teach`; suggest
    mode keeps its answers in `suggestions` (None: only says what it would suggest). A close's votes are read from
    `thread`, the issue's comments as its harvest reads them too, when it is given."""
    if isinstance(event, Closed):
        dropped = suggestions is not None and await suggestions.drop_suggestion(event.asked.repo, event.asked.number)
        outcome = await _reactions(event.asked, api, vote, thread)
        return outcome if not dropped else replace(outcome, reason=outcome.reason + _DROPPED)
    if isinstance(event, Command):
        if event.bot:
            return Outcome("", False, f"a /faq command from {event.author}, a bot: left alone")
        words = event.text.split()
        if words and words[0] in ("link", "not-covered"):
            return await _taught(event, words, teach)
        return await _command(kb, events, event, api, root)
    outcome = await _asked(kb, events, settings, event, api, root)
    if suggestions is None:
        return outcome
    if outcome.reason != _SUGGESTED:
        dropped = await suggestions.drop_suggestion(event.repo, event.number)
        return outcome if not dropped else replace(outcome, reason=outcome.reason + _DROPPED)
    return await _suggest(settings, event, outcome, api, suggestions)


_SUGGESTED = "suggest mode: the answer is not posted"
_DROPPED = "; the answer suggested before is dropped"


async def _suggest(
    settings: ServerSettings, asked: Opened, outcome: Outcome, api: GitHubAPI | None, suggestions: Suggestions
) -> Outcome:
    """Suggest mode: the answer kept for a maintainer to post or dismiss on /insights, the issue labelled."""
    answer = SuggestedAnswer(
        asked.repo,
        asked.number,
        asked.kind,
        asked.title,
        asked.url,
        outcome.entry,
        outcome.confidence,
        outcome.comment,
        asked.node_id,
        asked.installation,
    )
    await suggestions.suggest(answer)
    reason = "suggest mode: kept on /insights for a maintainer to post or dismiss"
    label = settings.github_suggest_label
    if label and asked.kind == "issue":
        if api is None:
            reason += f"; not labelled {label}: no token or App to label with"
        else:
            try:
                await api.add_label(asked.repo, asked.number, label)
                reason += f"; labelled {label}"
            except GitHubUnavailable as exc:
                reason += f"; not labelled {label}: {exc}"
    return Outcome(outcome.comment, False, reason, entry=outcome.entry, confidence=outcome.confidence)


async def _asked(
    kb: KnowledgeBase, events: Events, settings: ServerSettings, event: Opened, api: GitHubAPI | None, root: str
) -> Outcome:
    """A new or edited issue, or a new Discussion: answered as the repository's mode says, when the bot is sure."""
    mode = mode_for(settings, event.repo)
    reason = skip_reason(event, settings)
    if not reason and mode == "mention":
        reason = "mention mode: only /faq commands are answered"
    if reason:
        return Outcome("", False, reason)
    question = event.question[: kb.settings.max_query_chars]
    found = await asking.search(
        kb,
        events,
        question,
        channel="github",
        hl=detect_lang(question),
        conversation=_where(event, settings),
        reads=READS,
        own_url=event.url,
    )
    point = kb.precision_for("github")
    if mode == "suggest":  # a draft a maintainer reads costs a click, not a public mistake: a lower point
        point = min(point, SUGGEST_PRECISION)
    needed = min(kb.searcher.answer_weights(READS).threshold(point), CERTAIN)
    result = found.result.at(needed)
    found = replace(found, result=result)
    sure = result.confidence
    if not result.answered:
        why = f"not sure enough: confidence {sure:.2f}, precision {point} needs {needed:.2f}"
        return Outcome("", False, why, confidence=sure)
    comment, entry = answer_comment(found, root), found.hits[0].entry.id
    if mode == "suggest":
        return Outcome(comment, False, _SUGGESTED, entry=entry, confidence=sure)
    if api is None:
        return Outcome(comment, False, "dry run: nothing posted", entry=entry, confidence=sure)
    if event.kind == "discussion":
        url = await api.comment_on_discussion(event.node_id, comment)
    else:
        url = await api.upsert_issue_comment(event.repo, event.number, comment, MARKER)
    return Outcome(comment, True, "posted", url, entry, sure)


def _where(asked: Opened, settings: ServerSettings) -> tuple[str, str] | None:
    """What the insights keep of where a question was asked: a public issue's repository and URL; a private
    one's only where KB_INSIGHTS_CHAT_IDS asks, as other chats' ids are."""
    return (asked.repo, asked.url) if not asked.private or settings.insights_chat_ids else None


async def _reactions(asked: Opened, api: GitHubAPI | None, vote: Vote | None, thread: IssueThread | None) -> Outcome:
    """An issue closed: each 👍 or 👎 on the bot's comment a vote on the entry it answered with."""
    if api is None or vote is None:
        return Outcome("", False, "closed: no API to read the reactions with")
    mine = await api.find_issue_comment(asked.repo, asked.number, MARKER, thread)
    entry = entry_of(str(mine.get("body", ""))) if mine else ""
    if mine is None or not entry:
        return Outcome("", False, "closed: no answer of the bot's on it")
    question = asked.question
    said = []
    for who, reaction in await api.reactions(asked.repo, int(mine["id"])):
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
    return Outcome("", False, await teach(asked.question, words[1] if words[0] == "link" else None))


async def _command(kb: KnowledgeBase, events: Events, command: Command, api: GitHubAPI | None, root: str) -> Outcome:
    """A `/faq` comment, answered in every mode: the FAQ's answer, or plainly that it does not cover it."""
    asked = command.asked
    question = (command.question or asked.question)[: kb.settings.max_query_chars]
    reads = "question" if command.question else READS  # `/faq` alone asks about the whole issue
    found = await asking.search(
        kb, events, question, channel="github", hl=detect_lang(question), reads=reads, own_url=asked.url
    )
    made = answer_comment(found, root) if found.result.answered else not_covered_comment(found, root)
    comment = made.replace(MARKER, COMMAND_MARKER, 1)
    if api is None:
        return Outcome(comment, False, "dry run: nothing posted")
    url = await api.comment_on_issue(asked.repo, asked.number, comment)
    return Outcome(comment, True, "posted", url)
