"""A long thread condensed by the LLM (`KB_LLM_*`) into one question and one answer, marked as the LLM's draft.

Without an LLM, or for a short thread, a draft is extractive: the issue's question and the maintainer's comment, as
`drafts.draft_of` makes it. A thread is long when its body and comments hold more than `LONG_THREAD` characters;
the LLM then reads its title, body and comments (each cut, `MAX_READ` in all, the maintainers' comments first) and
replies with JSON `{"question": ..., "answer": ...}` using only what the thread says. Its reply is cleaned as a
maintainer's comment is (`clean`: quotes, mentions and HTML neutralised) and the draft says so in its signals
(`condensed: "llm"`, and the model): `/insights` marks it. When the LLM fails or replies with something else, the
extractive draft stays, its signals saying why (`condense_failed`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import LLMFailed
from .clean import MAX_ANSWER, clean_answer, clean_question
from .drafts import MAX_QUESTION, Draft
from .rules import MEMBERS
from .threads import Thread

if TYPE_CHECKING:
    from ..llm import LLM

__all__ = ["condense", "is_long", "LONG_THREAD", "MAX_READ"]

LONG_THREAD = 6_000  # characters of a thread's body and comments above which the LLM condenses it
MAX_READ = 16_000  # characters of the thread the LLM reads, at most
MAX_PART = 4_000  # of one comment or the body
MAX_REPLY = 40_000  # characters of the LLM's reply read

SYSTEM = (
    "You turn a resolved GitHub issue thread into one FAQ entry. Reply with a JSON object and nothing else: "
    '{"question": "...", "answer": "..."}. The question: what the asker wanted to know, in one or two sentences, '
    "without logs or environment details. The answer: how the maintainers resolved it, in Markdown, using only what "
    "the thread says (commands, flags, versions, the pull request that fixed it); never add anything the thread "
    "does not say. Write in the language the thread is written in."
)


def is_long(thread: Thread) -> bool:
    """Whether a thread is long enough to be condensed: its body and comments over `LONG_THREAD` characters."""
    return len(thread.body) + sum(len(c.body) for c in thread.comments) > LONG_THREAD


def _read(thread: Thread, members: tuple[str, ...] = MEMBERS) -> str:
    """The thread as the LLM reads it: title, body, then the maintainers' comments (by `members`, the harvest's
    `Rules.associations`) and the others', each cut."""
    parts = [f"Title: {thread.title[:500]}", f"Issue body:\n{thread.body[:MAX_PART]}"]
    ordered = sorted(thread.comments, key=lambda c: c.association not in members)  # stable: in order within each
    for comment in ordered:
        who = "maintainer" if comment.association in members else "user"
        parts.append(f"Comment by {comment.author[:40]} ({who}):\n{comment.body[:MAX_PART]}")
    return "\n\n".join(parts)[:MAX_READ]


def _reply(text: str) -> tuple[str, str]:
    """The question and the answer of the LLM's reply; ValueError saying what is wrong with it."""
    text = text[:MAX_REPLY].strip()
    if text.startswith("```"):  # a reply fenced as a code block
        text = text.strip("`").removeprefix("json").strip()
    try:
        reply = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError(f"not JSON: {text[:80]!r}") from None
    if (
        not isinstance(reply, dict)
        or not isinstance(reply.get("question"), str)
        or not isinstance(reply.get("answer"), str)
    ):
        raise ValueError("not an object with a question and an answer")
    return reply["question"], reply["answer"]


def condense(draft: Draft, thread: Thread, llm: LLM, members: tuple[str, ...] = MEMBERS) -> Draft:
    """`draft` condensed by `llm` when `thread` is long: its question and answer the LLM's, marked so in its signals;
    else, or when the LLM fails, `draft` as it is (its signals saying why the LLM's was not kept). The comments of
    `members` (the author associations whose answers the harvest takes) are the maintainers' the LLM reads first.
    Blocks while the LLM writes: call it from a worker thread."""
    if not is_long(thread):
        return draft
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": _read(thread, members)}]
    try:
        question, answer = _reply(llm.complete(messages, response_format={"type": "json_object"}))
    except (LLMFailed, ValueError) as exc:
        return replace(draft, signals=draft.signals | {"condense_failed": str(exc)[:200]})
    question = clean_question(question[: MAX_QUESTION * 2])[:MAX_QUESTION].strip()
    answer = clean_answer(answer[: MAX_ANSWER * 2])
    if not question or not answer:
        return replace(draft, signals=draft.signals | {"condense_failed": "the LLM's question or answer was empty"})
    title = draft.headline  # the title stays the first paragraph: what drafts are grouped and shown by
    question = (question if question.startswith(title) else f"{title}\n\n{question}")[:MAX_QUESTION].rstrip()
    unnamed = [pr for pr in draft.signals.get("linked_prs", []) if isinstance(pr, str) and pr not in answer]
    if unnamed:  # the pull request that closed it stays named, as the extractive draft names it
        answer += "\n\nSee " + ", ".join(unnamed) + "."
    signals = draft.signals | {"condensed": "llm", "model": llm.model}
    return replace(draft, question=question, answer=answer, signals=signals)
