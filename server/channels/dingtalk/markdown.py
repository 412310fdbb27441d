"""The DingTalk robot's replies as Markdown messages: an answer, a generated answer (the LLM's), help, a notice.

A message is `{"msgtype": "markdown", "markdown": {"title", "text"}}`: the title is what a
notification shows, the text the reply's Markdown parts (server/bots/markdown.py). DingTalk
shows a subset of Markdown (headings, bold, links, lists, quotes); code comes as written.
"""

from __future__ import annotations

from typing import Any, Sequence

from kb.answer import Reply
from kb.hits import Hit

from ...bots.markdown import generated_parts, parts_of
from ...bots.replies import help_texts

__all__ = ["answer_message", "generated_message", "help_message", "notice_message", "TITLE_LIMIT"]

TITLE_LIMIT = 60  # characters of a notification's title

Message = dict[str, Any]


def _message(title: str, text: str) -> Message:
    title = " ".join(title.split())
    title = title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1] + "…"
    return {"msgtype": "markdown", "markdown": {"title": title, "text": text}}


def answer_message(reply: Reply, question: str, root: str) -> Message:
    """The answer to `question`, or the notice that the FAQ has none with the nearest entries (titled by the entry's
    question, or the notice)."""
    title = reply.best.question if reply.best is not None else reply.notice
    return _message(title, parts_of(reply, root).joined())


def generated_message(markdown: str, hits: Sequence[Hit], lang: str, question: str, root: str) -> Message:
    """The answer an LLM wrote from the entries (citations linked), with the entries it cites."""
    return _message(markdown, generated_parts(markdown, hits, lang, root).joined())


def help_message(lang: str | None = None) -> Message:
    """How to ask the robot; in both languages when the asker's is not known."""
    texts = help_texts(lang)
    return _message(texts[0].split("\n")[0], "\n\n".join(texts))


def notice_message(text: str) -> Message:
    """A short reply (an error, a limit), `text` shown as written."""
    return _message(text, text)
