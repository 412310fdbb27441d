"""Answers for the chat: the best entry's own answer with its source, or an honest "no
confident answer" with the nearest entries; and follow-up questions read in context.

One answer model for every channel: `compose_answer` picks the entries (an `Answer`), `source_line`
says where an entry's answer comes from, and `reply_to` is a reply as a chat bot gives it (a `Reply`:
the best entry, its related ones, or a notice and the nearest), which each platform writes in its markup.
The pages and the JSON API give the `Answer` (its Markdown `text` written here from the same pieces)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .entries import Entry
from .hits import Hit, SearchResult
from .provenance import original_url, version_note
from .text import tokenize
from .verdict import AnswerState
from .wording import LANGS, words

__all__ = [
    "Answer",
    "compose_answer",
    "elsewhere_note",
    "followup_query",
    "RELATED",
    "NEAREST",
    "SourceLine",
    "source_line",
    "Reply",
    "reply_to",
]

RELATED = 3  # entries offered beside an answer, and on an entry's page
NEAREST = 3  # entries offered when the FAQ has no confident answer


@dataclass(frozen=True)
class SourceLine:
    """Where an entry's answer comes from, as a reply cites it."""

    label: str  # the source's title in the reader's language and its version: "slime 问答 · 2025-06-30"
    url: str  # the entry's deep link, else its document
    note: str  # the text is a translation, or in another language than the reader's ("" when neither)
    original: str  # with a note about a translation: the original's URL ("" for none)


def source_line(entry: Entry, lang: str) -> SourceLine:
    """The source line of `entry` (as given) for a reader of `lang`."""
    label = " · ".join(filter(None, (entry.source_title_in(lang), entry.source_version)))
    note = version_note(entry, lang)
    return SourceLine(label, entry.url or entry.source_url, note, original_url(entry) if note else "")


@dataclass(frozen=True)
class Reply:
    """What a chat reply says, in one language."""

    lang: str
    # The line it opens with: the FAQ has no confident answer, its first entry may answer, or the named
    # framework's FAQ lacks it.
    notice: str
    best: Entry | None  # the entry whose answer is shown (the answer, or one that may answer); None without
    entries: tuple[Hit, ...]  # beside an answer, the related entries; beside one that may answer, the others
    pending: bool = False  # a generated answer follows (an LLM is configured)
    state: AnswerState = AnswerState.NOT_COVERED  # LIKELY: `best` may answer, not certain
    confidence: float = 0.0  # the chance that the first entry answers (`SearchResult.confidence`)

    @property
    def answered(self) -> bool:
        return self.best is not None and not self.state.uncertain

    @property
    def entries_label(self) -> str:
        """The key (kb/data/strings.toml) of the heading over `entries`: related, other or nearest entries."""
        if self.best is None:
            return "chat_suggestions"
        return "chat_others" if self.state.uncertain else "chat_related"


def reply_to(
    hits: Sequence[Hit],
    answered: bool,
    lang: str,
    note: str = "",
    pending: bool = False,
    related: int = RELATED,
    state: AnswerState = AnswerState.NOT_COVERED,
    confidence: float = 0.0,
) -> Reply:
    """The reply for a search's hits (in `lang`): the best entry and up to `related` others, or a notice and the nearest.

    `note` says the framework the question names has no answer in its FAQ (`elsewhere_note`). Below the
    channel's point, a `state` of LIKELY shows the first entry's answer whole as `best`, under a notice
    saying it may answer (with its `confidence`) but is not certain, then the other nearest entries:
    never "no confident answer" above an entry that may be the answer."""
    if not answered or not hits:
        if hits and state.uncertain:
            notice = " ".join(filter(None, (note, words(state, lang, confidence=f"{confidence:.2f}"))))
            return Reply(lang, notice, hits[0].entry, tuple(hits[1:NEAREST]), state=state, confidence=confidence)
        notice = note or words("chat_no_answer", lang)
        return Reply(lang, notice, None, tuple(hits[:NEAREST]), state=AnswerState.NOT_COVERED, confidence=confidence)
    return Reply(lang, note, hits[0].entry, tuple(hits[1 : 1 + related]), pending, AnswerState.ANSWERED, confidence)


@dataclass(frozen=True)
class Answer:
    text: str  # Markdown
    answered: bool
    sources: tuple[Hit, ...]  # the answering entry first when answered, then related ones
    note: str = ""  # the framework the question names has no answer in its FAQ (`elsewhere_note`)
    confidence: float = 0.0  # the chance that the first source answers (`SearchResult.confidence`)
    state: AnswerState = AnswerState.NOT_COVERED  # LIKELY: the first source may answer


def _link(hit: Hit) -> str:
    e = hit.entry
    label = e.question.replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({e.url or e.source_url})"


def compose_answer(result: SearchResult, lang: str) -> Answer:
    """The extractive answer: the best entry's answer verbatim, its source, related entries.

    The entries are those the search page shows (`SearchResult.worth_showing`): beside an
    answer, only those within the calibrated margin of its score (often none); without one,
    the nearest few. The hits are given as they are (`SearchResult.in_language` picks the
    reader's version); an answer in another language than `lang` opens with a line saying so."""
    hits = result.worth_showing()[: RELATED + 1]
    elsewhere = elsewhere_note(result, lang)
    if result.answered and hits:
        lines = _quoted(hits[0], elsewhere, lang)
        if len(hits) > 1:
            lines += ["", f"{words('answer_related', lang)}:"] + [f"- {_link(h)}" for h in hits[1:]]
        return Answer("\n".join(lines), True, tuple(hits), elsewhere, result.confidence, AnswerState.ANSWERED)
    if not hits:
        return Answer(words("answer_empty", lang), False, ())
    if result.state.uncertain:  # the first may answer: its answer, set apart and marked not certain, then the others
        hits = hits[:NEAREST]
        said = words(result.state, lang, confidence=f"{result.confidence:.2f}")
        quoted = _quoted(hits[0], "", lang)
        lines = [f"{elsewhere} {said}" if elsewhere else said, ""]
        lines += [f"> {line}".rstrip() for line in [f"**{_link(hits[0])}**", ""] + quoted]
        if len(hits) > 1:
            lines += ["", f"{words('answer_others', lang)}:"] + [f"- {_link(h)}" for h in hits[1:]]
        return Answer("\n".join(lines), False, tuple(hits), elsewhere, result.confidence, result.state)
    opening = f"{elsewhere} {words('answer_nearest', lang)}" if elsewhere else words("answer_none", lang)
    lines = [opening, ""] + [f"- {_link(h)}" for h in hits[:RELATED]]
    return Answer("\n".join(lines), False, tuple(hits[:RELATED]), elsewhere, result.confidence, result.state)


def _quoted(hit: Hit, elsewhere: str, lang: str) -> list[str]:
    """The lines quoting an entry: the framework note, the version note, its answer verbatim, its source."""
    best = hit.entry
    note = [f"*{elsewhere}*", ""] if elsewhere else []
    said = version_note(best, lang) if lang in LANGS else ""
    note += [f"*{said}*", ""] if said else []
    source = source_line(best, lang)
    return note + [best.answer.strip(), "", f"{words('answer_source', lang)}: [{source.label}]({source.url})"]


def elsewhere_note(result: SearchResult, lang: str) -> str:
    """One line in the reader's language when the question names a framework whose FAQ has
    no confident answer ("ROLL's FAQ does not cover this."), saying which FAQ the answer
    found comes from instead; "" otherwise."""
    if not result.elsewhere:
        return ""
    if result.answered and result.hits:
        return words("answer_from_other", lang, named=result.named, other=result.hits[0].entry.source_label(lang))
    return words("answer_not_covered", lang, named=result.named)


# A follow-up leans on the question before it: "what about for sglang?", "那 vLLM 呢？"
_FOLLOWUP = re.compile(
    r"^\s*(?:what about|how about|and (?:for|with|in|if)|and what|same for|what if|"
    r"那|那么|那如果|如果是|换成|改成|还有|另外)|(?:呢|吗)\s*[?？]?\s*$",
    re.IGNORECASE,
)


# Names a follow-up swaps in for one of the same kind asked about before: "what about for
# sglang?" after a vLLM question drops vLLM, but keeps "Megatron" in a question about
# converting Megatron checkpoints when the follow-up names another training framework.
KINDS = (
    ("chatlearn", "roll", "slime", "deepspeed", "fastchat"),  # training frameworks
    ("sglang", "vllm"),  # inference engines
    ("megatron", "fsdp"),  # training back ends
    ("lora", "qlora"),
)


def _named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None


def _swap(before: str, message: str) -> str:
    """The previous question without the names the follow-up replaces."""
    for kind in KINDS:
        if any(_named(name, message) for name in kind):
            for name in kind:
                if _named(name, before) and not _named(name, message):
                    before = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", before, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", before).strip()


def followup_query(message: str, history: Sequence[dict[str, Any]] | None, subject: str = "") -> str:
    """The text to search for: the message, joined to the previous question when it is a follow-up.

    `history` is the conversation so far: [{"role": "user" | "assistant", "content": "..."}].
    A follow-up that names another framework ("what about for sglang?") replaces the one
    the previous question named. `subject` is the question of the entry the conversation
    is about (a follow-up asked from an entry's page): every message is read with it, so
    "how do I do that on 2 nodes?" is searched as a question about that entry.
    """
    previous = [
        str(turn.get("content", "")).strip()
        for turn in (history or [])
        if isinstance(turn, dict) and turn.get("role") == "user" and str(turn.get("content", "")).strip()
    ]
    short = len(tokenize(message)) <= 1
    query = message
    if previous and (_FOLLOWUP.search(message) or short):
        query = f"{_swap(previous[-1], message)} {message}"
    return f"{_swap(subject, message)} {query}" if subject.strip() else query
