"""Chat replies (server/bots/replies.py) written as Markdown, for the platforms whose messages are Markdown: Feishu, DingTalk.

A reply is a few parts, each a Markdown block: the notice (for one that "may answer", that it is not
certain), the entry's question linked to its page here, its answer (cut to a platform's limit, with a
link to the whole), its source, the related, other or nearest entries, and a line saying a generated answer (the LLM's) follows. A platform joins them
(DingTalk) or sets each in a block of its own (Feishu's cards). Text from the FAQ goes through
the platform's `escape` (Feishu reads some HTML tags in Markdown, `<at id=all>` among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from kb.answer import Reply, source_line
from kb.hits import Hit
from kb.provenance import original_label

from ..permalinks import permalink
from ..rendering.strings import Translator
from .replies import shorten

__all__ = ["Parts", "parts_of", "generated_parts", "entry_list", "link", "ANSWER_LIMIT"]

ANSWER_LIMIT = 4000  # characters of an answer shown in a message; past it, a link to the whole
QUESTION_LIMIT = 280

Escape = Callable[[str], str]


def _same(text: str) -> str:
    return text


def link(url: str, text: str, escape: Escape = _same) -> str:
    """`[text](url)`, the text's brackets escaped; just the text when the URL is not http(s)."""
    label = escape(text).replace("[", "\\[").replace("]", "\\]")
    if not url.startswith(("https://", "http://")):
        return label
    return f"[{label}]({url.replace(' ', '%20').replace(')', '%29')})"


def _short(text: str, limit: int = QUESTION_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Parts:
    """A reply's Markdown blocks ("" for one it does not have)."""

    notice: str
    title: str
    answer: str
    source: str
    entries: str
    pending: str

    def joined(self) -> str:
        return "\n\n".join(
            part for part in (self.notice, self.title, self.answer, self.source, self.entries, self.pending) if part
        )


def entry_list(heading: str, hits: Sequence[Hit], root: str, escape: Escape = _same) -> str:
    """A bold heading and a line for each entry: its question linked to its page here, and its framework."""
    lines = [f"**{escape(heading)}**"]
    for hit in hits:
        e = hit.entry
        lines.append(f"- {link(permalink(root, e.id), _short(e.question), escape)} · {escape(e.source_label(e.lang))}")
    return "\n".join(lines)


def parts_of(reply: Reply, root: str, escape: Escape = _same, limit: int = ANSWER_LIMIT) -> Parts:
    """The Markdown of a reply; its answer cut to `limit` characters."""
    t = Translator(reply.lang)
    notice = escape(reply.notice)
    best = reply.best
    if best is None:
        nearest = entry_list(t("chat_suggestions"), reply.entries, root, escape) if reply.entries else ""
        return Parts(notice, "", "", "", nearest, "")
    page = permalink(root, best.id)
    answer, cut = shorten(best.answer.strip() or "…", limit)
    source = source_line(best, reply.lang)
    colon = "：" if reply.lang == "zh" else ": "
    cited = f"{escape(t('chat_source'))}{colon}{link(source.url, source.label, escape)}"
    if source.note:
        cited += f"\n{escape(source.note)}"
        if source.original:
            cited += f" {link(source.original, original_label(reply.lang), escape)}"
    return Parts(
        f"*{notice}*" if notice else "",
        f"**{link(page, _short(best.question), escape)}**",
        escape(answer) + (f"\n\n{link(page, t('read_more'))}" if cut else ""),
        cited,
        entry_list(t(reply.entries_label), reply.entries, root, escape) if reply.entries else "",
        escape(t("bot_writing")) if reply.pending else "",
    )


def generated_parts(markdown: str, hits: Sequence[Hit], lang: str, root: str, escape: Escape = _same) -> Parts:
    """The Markdown of an answer an LLM wrote (citations linked already), with the entries it cites."""
    t = Translator(lang)
    answer, cut = shorten(markdown, ANSWER_LIMIT)
    more = f"\n\n{link(permalink(root, hits[0].entry.id), t('read_more'))}" if cut and hits else ""
    return Parts(
        "",
        "",
        escape(answer) + more,
        escape(t("chat_mode_llm")),
        entry_list(t("chat_source"), hits, root, escape) if hits else "",
        "",
    )
