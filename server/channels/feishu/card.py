"""The Feishu bot's replies as interactive cards (card JSON 2.0): an answer, a generated answer (the LLM's), help, a notice.

An answer card holds the reply's Markdown parts (server/bots/markdown.py), each a rich-text
(`markdown`) block, and two buttons, Helpful and Not helpful, whose callback value names the
entry, the vote, the reply's language and the question (`vote_value`; `button_vote` reads it
back). Feishu's Markdown reads some HTML tags (`<at id=all></at>` mentions everyone,
`<font>`, `<link>`), so `card_markdown` writes every `<` outside code as `&lt;`; and a card's
image must be one uploaded to Feishu, so an image in an answer becomes a link to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from kb.answer import Reply
from kb.hits import Hit

from ...bots.markdown import Parts, generated_parts, parts_of
from ...bots.replies import help_texts
from ...rendering.strings import LANGS, Translator

__all__ = [
    "answer_card",
    "generated_card",
    "notice_card",
    "help_card",
    "card_markdown",
    "vote_value",
    "button_vote",
    "ButtonVote",
    "QUESTION_KEPT",
]

Card = dict[str, Any]
QUESTION_KEPT = 500  # characters of the question a button carries back, for the vote's record

_FENCE = re.compile(r"^ {0,3}(`{3,}+|~{3,}+)[^\n]*+\n.*?(?:^ {0,3}\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(?<!`)(`++).+?(?<!`)\1(?!`)", re.DOTALL)  # a run of backticks is tried once
_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\(")


def _plain(text: str) -> str:
    return _IMAGE.sub(r"[\1](", text).replace("<", "&lt;")


def _outside(pattern: re.Pattern[str], text: str, write: Any) -> str:
    """`text` with `write` applied to what `pattern` does not match (code stays as written)."""
    out, at = [], 0
    for match in pattern.finditer(text):
        out += [write(text[at : match.start()]), match.group(0)]
        at = match.end()
    return "".join(out + [write(text[at:])])


def card_markdown(markdown: str) -> str:
    """Markdown as a card shows it: `<` outside code as `&lt;` (so no tag, no mention), images as links."""
    return _outside(_FENCE, markdown, lambda prose: _outside(_CODE_SPAN, prose, _plain))


def _markdown(content: str, small: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"tag": "markdown", "content": content}
    if small:
        block["text_size"] = "notation"
    return block


def _card(elements: list[dict[str, Any]]) -> Card:
    return {"schema": "2.0", "config": {"update_multi": True, "width_mode": "fill"}, "body": {"elements": elements}}


def _blocks(parts: Parts) -> list[dict[str, Any]]:
    blocks = [_markdown(part) for part in (parts.notice, parts.title, parts.answer) if part]
    if parts.source:
        blocks.append(_markdown(parts.source, small=True))
    if parts.entries:
        blocks.append(_markdown(parts.entries))
    if parts.pending:
        blocks.append(_markdown(parts.pending, small=True))
    return blocks


def vote_value(entry_id: str, helpful: bool, lang: str, question: str) -> dict[str, str]:
    """What a vote button gives back when pressed."""
    return {
        "kb": "vote",
        "entry": entry_id,
        "vote": "up" if helpful else "down",
        "lang": lang,
        "q": question[:QUESTION_KEPT],
    }


@dataclass(frozen=True)
class ButtonVote:
    entry_id: str
    helpful: bool
    lang: str
    question: str


def button_vote(value: Mapping[str, Any]) -> ButtonVote | None:
    """The vote a pressed button's value carries; None for a value that is not one of this bot's votes."""
    entry, vote = value.get("entry"), value.get("vote")
    if value.get("kb") != "vote" or not isinstance(entry, str) or not entry or vote not in ("up", "down"):
        return None
    lang = value.get("lang")
    question = value.get("q")
    return ButtonVote(
        entry,
        vote == "up",
        lang if lang in LANGS else "en",
        question[:QUESTION_KEPT] if isinstance(question, str) else "",
    )


def _buttons(entry_id: str, lang: str, question: str) -> dict[str, Any]:
    t = Translator(lang)

    def button(helpful: bool) -> dict[str, Any]:
        return {
            "tag": "column",
            "width": "auto",
            "elements": [
                {
                    "tag": "button",
                    "text": {"tag": "plain_text", "content": t("bot_helpful" if helpful else "bot_unhelpful")},
                    "type": "default",
                    "behaviors": [{"type": "callback", "value": vote_value(entry_id, helpful, lang, question)}],
                }
            ],
        }

    return {"tag": "column_set", "columns": [button(True), button(False)]}


def answer_card(reply: Reply, question: str, root: str) -> Card:
    """The card answering `question`: the reply's parts, and the vote buttons under an answer."""
    blocks = _blocks(parts_of(reply, root, card_markdown))
    if reply.best is not None:
        blocks.append(_buttons(reply.best.id, reply.lang, question))
    return _card(blocks)


def generated_card(markdown: str, hits: Sequence[Hit], lang: str, question: str, root: str) -> Card:
    """The answer an LLM wrote from the entries (citations linked), the entries it cites, and the vote buttons."""
    blocks = _blocks(generated_parts(markdown, hits, lang, root, card_markdown))
    if hits:
        blocks.append(_buttons(hits[0].entry.id, lang, question))
    return _card(blocks)


def help_card(lang: str | None = None) -> Card:
    """How to ask the bot; in both languages when the asker's is not known."""
    return _card([_markdown(card_markdown(text)) for text in help_texts(lang)])


def notice_card(text: str) -> Card:
    """A short reply (an error, a limit), `text` shown as written."""
    return _card([_markdown(card_markdown(text))])
