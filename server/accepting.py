"""A draft from the tracker accepted as a written answer, and what start-up settles of an accept a stop cut short.

An accept saves the answer first (`server/written.py`), then decides the draft, then builds; the other threads that
asked the same are linked to the answer once a build serves it. A server stopped anywhere in between leaves the
file as the record, which start-up reads (`settle_accepts`): a waiting draft whose thread an answer in the file
came from is marked accepted as that answer, the answers the served build lacks are built, and the other threads of
the drafts they accept are linked then.
"""

from __future__ import annotations

import logging

from kb.errors import InsightsOff, InsightsUnreachable
from kb.harvest.drafts import Draft
from kb.insights.harvested import KeptDraft
from kb.insights.service import Insights
from kb.knowledge import KnowledgeBase
from kb.written import WrittenAnswer

from .reload import Reloader
from .written import Written

__all__ = ["asked_elsewhere", "link_threads", "settle_accepts"]

log = logging.getLogger("kb.server")


def asked_elsewhere(draft: Draft, answer: WrittenAnswer) -> list[tuple[str, str]]:
    """The questions (and their threads) to link to `answer` as alternates: the draft's other threads, and the body's
    wording of its own when the answer is headed by another."""
    asked = [(a.question, a.url) for a in draft.alternates]
    if " ".join(draft.question.split()) != answer.question_in(answer.lang):
        asked.insert(0, (draft.question, draft.url))
    return asked


async def link_threads(insights: Insights, served: KnowledgeBase, answer_id: str, asked: list[tuple[str, str]]) -> bool:
    """Link `asked` to the served answer `answer_id` (linking again replaces a link: a retry adds none); whether
    they were linked (a warning says why not)."""
    try:
        for question, url in asked:
            await insights.link_from_tracker(served, question, answer_id, url)
    except (InsightsOff, InsightsUnreachable) as exc:  # the answer is saved and served all the same
        log.warning(
            "the answer %s from the tracker is served, but its other threads were not linked: %s", answer_id, exc
        )
        return False
    return True


async def settle_accepts(insights: Insights, written: Written, reloader: Reloader) -> None:
    """Start-up: the drafts and the build brought in line with the written answers' file (see the module's text)."""
    answers = {a.id: a for a in await written.answers()}
    try:
        waiting = (await insights.harvested())[0] if insights.feedback_on else []
        for kept in waiting:
            found = _saved_for(kept, answers)
            if found is not None and await insights.run(
                insights.drafts.decide, kept.draft.repo, kept.draft.number, "accepted", found
            ):
                log.warning("the draft %s was accepted as %s before a stop; marked so", kept.key, found)
    except (InsightsOff, InsightsUnreachable) as exc:
        log.warning("the drafts from the tracker could not be settled at start-up: %s", exc)
    built = await written.reconcile()
    if not built or not insights.feedback_on:
        return
    served = reloader.served.kb
    try:
        accepted = {k.written_id: k for k in await insights.run(insights.drafts.all, "accepted", 1000)}
    except (InsightsOff, InsightsUnreachable):
        return
    for answer_id in built:
        decided = accepted.get(answer_id)
        if decided is not None and answer_id in served.by_id and answer_id in answers:
            asked = asked_elsewhere(decided.draft, answers[answer_id])
            if asked and await link_threads(insights, served, answer_id, asked):
                await reloader.relearn()
    await reloader.rethread()


def _saved_for(kept: KeptDraft, answers: dict[str, WrittenAnswer]) -> str | None:
    """The id of the saved answer that came from `kept`'s thread (the answer's `url`), if one did."""
    return next(
        (i for i, a in answers.items() if a.extra.get("harvested") and a.extra.get("url") == kept.draft.url), None
    )
