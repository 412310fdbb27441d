"""The `/faq` replies as Block Kit messages: an answer, a generated answer (the LLM's), a shared answer, help, a notice.

Every message has a top-level `text` (Slack's notification and screen-reader fallback),
at most 50 blocks, and section texts within Slack's 3,000-character limit; a long answer is
cut with a link to its page on this server. The buttons carry stable action ids
(`kb_share`, `kb_helpful`, `kb_unhelpful`) with the entry id as value, and the reply's
language in the `block_id` of their actions block (`kb_actions:zh`).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from kb.answer import Reply, reply_to, source_line
from kb.entries import Entry
from kb.hits import Hit
from kb.provenance import original_label

from ...bots.replies import RELATED_SHOWN, help_texts
from ...rendering.strings import LANGS, Translator
from .mrkdwn import escape, link, to_mrkdwn, trim

__all__ = [
    "answer_message",
    "reply_message",
    "generated_message",
    "shared_message",
    "help_message",
    "notice_message",
    "SECTION_LIMIT",
    "MAX_BLOCKS",
    "ACTIONS",
    "RELATED_SHOWN",
    "actions_lang",
]

SECTION_LIMIT = 3000  # characters in a section's text
MAX_BLOCKS = 50
FALLBACK_LIMIT = 500  # characters of the answer in the top-level `text`
QUESTION_LIMIT = 280
ACTIONS = ("kb_share", "kb_helpful", "kb_unhelpful")
_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")

Message = dict[str, Any]


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _permalink(root: str, entry: Entry) -> str:
    return f"{root}entries/{entry.id}"


def _title(entry: Entry, root: str) -> dict[str, Any]:
    return _section(f"*{link(_permalink(root, entry), _short(entry.question, QUESTION_LIMIT))}*")


def _answer(markdown: str, more_url: str, t: Translator) -> dict[str, Any]:
    text = to_mrkdwn(markdown) or "…"
    return _section(trim(text, SECTION_LIMIT, link(more_url, t("read_more"))))


def _source(entry: Entry, t: Translator) -> dict[str, Any]:
    source = source_line(entry, t.lang)
    colon = "：" if t.lang == "zh" else ": "
    note = f"\n{escape(source.note)}" if source.note else ""
    if source.original:
        note += f" {link(source.original, original_label(t.lang))}"
    return _context(f"{escape(t('chat_source'))}{colon}{link(source.url, source.label)}{note}")


def _entry_list(heading: str, hits: Sequence[Hit], root: str) -> dict[str, Any]:
    lines = [f"*{escape(heading)}*"]
    for hit in hits:
        e = hit.entry
        lines.append(
            f"• {link(_permalink(root, e), _short(e.question, QUESTION_LIMIT))} · {escape(e.source_label(e.lang))}"
        )
    return _section("\n".join(lines))


def _buttons(entry: Entry, t: Translator) -> dict[str, Any]:
    def button(action: str, label: str, style: str | None = None) -> dict[str, Any]:
        element: dict[str, Any] = {
            "type": "button",
            "action_id": action,
            "value": entry.id,
            "text": {"type": "plain_text", "text": label, "emoji": True},
        }
        if style:
            element["style"] = style
        return element

    return {
        "type": "actions",
        "block_id": f"kb_actions:{t.lang}",
        "elements": [
            button("kb_share", t("slack_share"), "primary"),
            button("kb_helpful", t("bot_helpful")),
            button("kb_unhelpful", t("bot_unhelpful")),
        ],
    }


def actions_lang(block_id: str) -> str:
    """The reply language a button's `block_id` carries (English when it names none)."""
    lang = block_id.rpartition(":")[2]
    return lang if lang in LANGS else "en"


def _message(text: str, blocks: list[dict[str, Any]], response_type: str = "ephemeral") -> Message:
    """`text` is the notification line, given as written: escaped here, so it mentions and links nothing."""
    assert len(blocks) <= MAX_BLOCKS
    return {"response_type": response_type, "text": escape(text), "blocks": blocks}


def answer_message(
    hits: Sequence[Hit], answered: bool, lang: str, root: str, pending: bool = False, note: str = ""
) -> Message:
    """The reply to a question: the best entry's answer, its source, related entries and buttons.

    Without a confident answer: a short notice and the nearest entries (`kb.answer.reply_to` decides). `pending` adds a line
    saying a generated answer follows (when an LLM is configured). `note` says the framework
    the question names has no answer in its FAQ (`kb.answer.elsewhere_note`).
    """
    return reply_message(reply_to(hits, answered, lang, note, pending, RELATED_SHOWN), "", root)


def reply_message(reply: Reply, question: str, root: str) -> Message:
    """The reply to `question` as `answer_message` writes it, from the reply itself (the buttons name the entry only)."""
    t = Translator(reply.lang)
    best = reply.best
    if best is None:
        blocks = [_section(escape(reply.notice))]
        if reply.entries:
            blocks.append(_entry_list(t("chat_suggestions"), reply.entries, root))
        return _message(reply.notice, blocks)
    # "May answer": the notice a section of its own above the answer, not a faint context line.
    opening = _section if reply.state.uncertain else _context
    blocks = [opening(escape(reply.notice))] if reply.notice else []
    blocks += [_title(best, root), _answer(best.answer, _permalink(root, best), t), _source(best, t)]
    if reply.entries:
        blocks.append(_entry_list(t(reply.entries_label), reply.entries, root))
    if reply.pending:
        blocks.append(_context(escape(t("bot_writing"))))
    blocks.append(_buttons(best, t))
    said = f"{reply.notice}\n" if reply.state.uncertain else ""
    return _message(f"{said}{best.question}\n{_short(best.answer, FALLBACK_LIMIT)}", blocks)


def generated_message(markdown: str, hits: Sequence[Hit], lang: str, question: str, root: str) -> Message:
    """The answer an LLM wrote from the entries (citations already linked), with the entries it cites."""
    t = Translator(lang)
    best = hits[0].entry
    blocks = [
        _answer(markdown, _permalink(root, best), t),
        _context(escape(t("chat_mode_llm"))),
        _entry_list(t("chat_source"), hits, root),
        _buttons(best, t),
    ]
    return _message(_short(markdown, FALLBACK_LIMIT), blocks)


def shared_message(entry: Entry, related: Sequence[Hit], lang: str, root: str, user_id: str) -> Message:
    """An entry's answer posted to the whole channel, saying who shared it."""
    t = Translator(lang)
    who = f"<@{user_id}>" if _USER_ID.match(user_id) else escape(t("slack_someone"))
    blocks = [_title(entry, root), _answer(entry.answer, _permalink(root, entry), t), _source(entry, t)]
    if related:
        blocks.append(_entry_list(t("chat_related"), related[:RELATED_SHOWN], root))
    blocks.append(_context(t("slack_shared_by", user=who)))
    return _message(f"{entry.question}\n{_short(entry.answer, FALLBACK_LIMIT)}", blocks, "in_channel")


def help_message(lang: str | None = None) -> Message:
    """How to use `/faq`; in both languages when the asker's language is not known."""
    texts = help_texts(lang, "slack_help")
    return _message("\n\n".join(texts), [_section(escape(text)) for text in texts])


def notice_message(text: str) -> Message:
    """A short ephemeral reply (an error, a thank-you), `text` shown as written."""
    return _message(text, [_section(escape(text))])
