"""An issue harvested when GitHub says it closed: its comments read, `kb harvest`'s rules applied, its draft kept.

The webhook's `issues` `closed` delivery carries the issue (its state reason, labels, author, when it closed) but
not its comments: they are read through the bot's async client (`GitHubAPI.issue_comments`: at most
`threads.MAX_COMMENTS`, each answer capped, rate limits waited out within the call's deadline), once for the close's
harvest and its votes (`IssueThread`). The thread is then
read, chosen and cleaned as `kb harvest` does (`kb.harvest`: every text cut to `MAX_TEXT` first, the rules linear
in it; a long thread condensed by the LLM when `KB_LLM_*` set one up) in a worker thread, checked against the entries with one search, and kept in the insights database for
/insights: as one more thread of a waiting draft that asks the same (as `kb harvest` groups a run's threads), else
as a draft of its own; "see also" reads the drafts again. The repositories harvested are KB_HARVEST_REPOS when it names
some, else every one the webhook hears from.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kb.harvest import Draft, Rules, ThreadQuestion, decide, draft_of, from_rest
from kb.harvest.condense import condense
from kb.harvest.drafts import SAME_QUESTION, same_framework
from kb.harvest.threads import ThreadRefused

from .events import Opened

if TYPE_CHECKING:
    from kb.insights.service import Insights
    from kb.knowledge import KnowledgeBase
    from kb.llm import LLM

    from ...reload import Reloader
    from ...settings import ServerSettings
    from .client import IssueThread

__all__ = ["harvest_closed", "draft_of_closed"]


def _issue(asked: Opened) -> dict[str, Any]:
    """The issue as GitHub's REST API gives it, from what the delivery said."""
    return {
        "number": asked.number,
        "title": asked.title,
        "body": asked.body,
        "html_url": asked.url,
        "state": "closed",
        "state_reason": asked.state_reason,
        "user": {"login": asked.author, "type": "Bot" if asked.bot else "User"},
        "labels": [{"name": label} for label in asked.labels],
        "closed_at": asked.closed_at,
    }


def draft_of_closed(
    asked: Opened, comments: list[dict[str, Any]], rules: Rules = Rules(), llm: LLM | None = None
) -> Draft | str:
    """The draft a closed issue makes with these comments (a long thread's condensed by `llm`, when there is one), or
    why it makes none. Linear in the text, and the LLM blocks: run it off the event loop."""
    try:
        thread = from_rest(asked.repo, _issue(asked), comments)
    except ThreadRefused as refused:  # not UTF-8 text: no harvest of it will do better
        return str(refused)
    choice = decide(thread, rules)
    if isinstance(choice, str):
        return choice
    draft = draft_of(choice)
    if draft is None:
        return "nothing left of the answer"
    return condense(draft, thread, llm, rules.associations) if llm is not None else draft


async def harvest_closed(
    asked: Opened,
    thread: IssueThread | None,
    kb: KnowledgeBase,
    insights: Insights,
    reloader: Reloader,
    settings: ServerSettings,
) -> str:
    """Harvest the issue `asked` that GitHub says closed: its draft kept for /insights (and shown as "see also"), or
    why not. Its comments are `thread`'s (None: no API to read them with), read once for the close's votes too.
    GitHubUnavailable when they cannot be read; a KBError when the draft cannot be kept."""
    repos = {repo.lower() for repo in settings.harvest_repo_list}
    if repos and asked.repo.lower() not in repos:
        return f"not harvested: {asked.repo} is not in KB_HARVEST_REPOS"
    if asked.kind != "issue" or asked.private:
        return "not harvested: only public issues are"
    if asked.state_reason != "completed":  # the rules refuse it whatever its comments: none are read
        return f"not harvested: closed as {asked.state_reason or 'unknown reason'}"
    if not insights.feedback_on:
        return "not harvested: there is no insights database to keep drafts in"
    if thread is None:
        return "not harvested: no GitHub token to read its comments with (KB_GITHUB_TOKEN or a GitHub App)"
    comments = await thread.comments()
    rules = Rules(associations=settings.harvest_association_list, confirmed_only=settings.harvest_confirmed_only)
    made = await asyncio.to_thread(draft_of_closed, asked, comments, rules, reloader.llm)
    if isinstance(made, str):
        return f"not harvested: {made}"
    result = await kb.search(made.headline, k=1)  # an entry answers it already: offered as its alternate
    if result.answered and result.hits and same_framework(result.hits[0].entry, made.repo):
        made = replace(made, entry_id=result.hits[0].entry.id)
    # A draft waiting that asks the same (as `kb harvest` groups threads) takes the thread as one more asking it.
    lead = reloader.see_also.draft_asking(result.vector, kb.searcher.embedder.model, SAME_QUESTION)
    if lead is not None and lead.repo == made.repo and lead.number != made.number:
        if await insights.run(
            insights.drafts.join,
            lead.repo,
            lead.number,
            ThreadQuestion(made.question, made.url, made.number, made.closed_at),
        ):
            await reloader.rethread()
            return f"harvested: it asks what #{lead.number} asked, and joined that draft"
    await insights.run(insights.drafts.keep, [made])
    await reloader.rethread()
    return f"harvested: a draft from {made.signals.get('answer')} answer by {made.answer_author}"
