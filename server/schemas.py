"""The JSON shapes of the API (as in DESIGN.md), and how entries and hits become them."""

from __future__ import annotations

from typing import Annotated, Iterable, Literal, cast

from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema, field_validator

from kb.chat import HISTORY_CHARS, HISTORY_TURNS
from kb.entries import Entry
from kb.hits import Hit, hit_fields
from kb.learning.questions import LearnedQuestion
from kb.provenance import original_url, version_note
from kb.see_also import Resolved
from kb.text import clean_query
from kb.verdict import AnswerState as State

from .permalinks import permalink
from .rendering.markdown import render_markdown

__all__ = [
    "SeeAlsoOut",
    "see_also_out",
    "SourceOut",
    "HitOut",
    "SearchOut",
    "EntryOut",
    "ChatTurn",
    "ChatIn",
    "ChatOut",
    "HealthOut",
    "AdapterOut",
    "WidgetConfigOut",
    "ErrorOut",
    "hit_out",
    "entry_out",
    "MAX_TURNS",
    "MAX_TURN_CHARS",
    "MAX_HISTORY_CHARS",
    "AlternateOut",
    "alternate_out",
    "Lang",
    "Origin",
    "TranslatedBy",
    "ChatMode",
    "CleanText",
]

# The library holds these as plain strings; a model built from them checks each value.
Lang = Literal["zh", "en"]
Origin = Literal["asked", "tracker", "maintainer"]  # kb.learning.questions.ORIGINS
TranslatedBy = Literal["maintainers", "machine"]
ChatMode = Literal["extractive", "llm", "fallback"]
# A `state` field: one of the enum's words, given in the schema as a Literal of them would be.
AnswerState = Annotated[
    str, AfterValidator(lambda v: State(v).value), WithJsonSchema({"type": "string", "enum": [s.value for s in State]})
]


class SourceOut(BaseModel):
    name: str = Field(description="source id, as used by the `source` filter")
    title: str = Field(description="the FAQ document's title, in the reader's language where it has one")
    titles: dict[str, str] = Field(
        default_factory=dict,
        description='the title in each language it has, e.g. {"zh": "ROLL 问答", "en": "ROLL Q&A"}',
    )
    url: str = Field(description="pinned page of the FAQ document")
    framework: str
    version: str


class HitOut(BaseModel):
    id: str
    question: str
    answer: str = Field(description="Markdown")
    answer_html: str = Field(description="the answer rendered to safe HTML")
    score: float
    source: SourceOut
    url: str = Field(description="deep link into the original FAQ; empty when its source has no url (then see `file`)")
    file: str = Field(default="", description="the Markdown file the entry is in, as its sources manifest names it")
    permalink: str = Field(description="this entry's page on this server")
    section: str
    tags: list[str]
    lang: str = Field(description="the language of the question, answer and url given")
    languages: list[str] = Field(description='the languages the entry has, e.g. ["en", "zh"] or ["zh"]')
    note: str = Field(
        default="",
        description="one line in the reader's language when the text given is not the authors' own in that language: "
        "the entry has no version in it, or this version is a translation (who made it); empty otherwise",
    )
    translated_by: TranslatedBy | None = Field(
        default=None,
        description="who translated the text given, when it is not the authors' own: this knowledge base's "
        "maintainers, or a machine (an LLM's draft; see `note` for whether a maintainer reviewed it)",
    )
    original_url: str | None = Field(
        default=None, description="for a translation: the deep link to the original it was translated from"
    )
    reviewed: bool = Field(
        default=False, description="for a machine translation: whether a maintainer has reviewed it (as `note` says)"
    )
    matched: list[str] = Field(description="query terms found in the entry, for highlighting")


class SeeAlsoOut(BaseModel):
    title: str = Field(description="the question the thread asked (its title, as harvested)")
    url: str = Field(description="the thread on the tracker")
    repo: str = Field(description="the repository it is in, OWNER/NAME")
    number: int = Field(description="its issue or Discussion number")


_SEE_ALSO = (
    "when `state` is `likely` or `not_covered`: up to three resolved tracker threads found by searching them as "
    "the entries are (harvested from closed issues and answered Discussions: drafts waiting and accepted ones), best "
    'first, to show below the entries as "a resolved issue that may help", never as the FAQ\'s answer and never '
    "the question's own thread; empty otherwise"
)


class SearchOut(BaseModel):
    query: str
    answered: bool = Field(
        description="whether the best hit's `confidence` reaches the channel's operating point (KB_ANSWER_PRECISION, "
        "KB_CHANNEL_PRECISION)"
    )
    confidence: float = Field(
        description="the chance that the first hit answers the question, calibrated on held-out real questions "
        "(of answers given at 0.8-0.9, about 8 in 10 were right); 1.0 when the question is an entry's own "
        "question, title or learned alternate, asked as it stands"
    )
    state: AnswerState = Field(
        description="`answered`: the confidence reaches the channel's operating point (as `answered`); `likely`: "
        "below it but above the calibration's floor, under which the questions the FAQ does not cover lie: the "
        "first hit may answer, show it first with its confidence; `not_covered`: below the floor, the hits are "
        "only the nearest entries"
    )
    hl: str = Field(description="the reader's language the hits are given in where they have it")
    hits: list[HitOut]
    shown: int = Field(
        description="how many of the hits, from the first, deserve showing: when `answered`, the best and those "
        "scoring close to it; otherwise the nearest three at most, which may not answer the question"
    )
    note: str | None = Field(
        default=None,
        description="when the question names a framework whose FAQ has no confident answer, one line in the "
        "reader's language saying so, and which framework's FAQ the answer is from (\"ROLL's FAQ does "
        "not cover this; this answer is from slime's FAQ.\"); null otherwise",
    )
    see_also: list[SeeAlsoOut] = Field(default_factory=list, description=_SEE_ALSO)


class AlternateOut(BaseModel):
    question: str = Field(description="the question as it was asked")
    lang: Lang
    origin: Origin = Field(
        description="`asked`: asked on this server and linked by a maintainer; `tracker`: from an issue tracker; "
        "`maintainer`: written by a maintainer"
    )
    url: str = Field(description="where it was asked, when that is public (an issue); empty otherwise")
    date: str = Field(description="when it was asked or linked, YYYY-MM-DD; empty when not known")


class EntryOut(BaseModel):
    id: str
    question: str
    answer: str
    answer_html: str
    source: SourceOut
    url: str = Field(description="deep link into the original FAQ; empty when its source has no url (then see `file`)")
    file: str = Field(default="", description="the file the entry is in, as its sources manifest names it")
    line: int = Field(
        default=0, description="the entry's line in `file` (in a workbook, its row of `sheet`); 0 when not known"
    )
    sheet: str = Field(default="", description="the workbook's sheet the entry is a row of; empty outside a workbook")
    permalink: str
    section: str
    tags: list[str]
    lang: str
    languages: list[str]
    note: str = Field(
        default="", description="as a hit's `note`: the text given is in another language, or a translation"
    )
    translated_by: TranslatedBy | None = Field(default=None, description="as a hit's")
    original_url: str | None = Field(default=None, description="as a hit's")
    related: list[HitOut]
    alternates: list[AlternateOut] = Field(
        default=[],
        description="other wordings of the entry's question that the knowledge base has learned: kept beside "
        "the FAQ (`<source>.alternates.toml`) or linked by a maintainer; the reader's language first",
    )


# The chat limits keep the largest valid request inside the default KB_MAX_BODY_BYTES (256 KiB),
# even with every character sent as a six-byte `\uXXXX` escape: 2,000 + 40,000 characters.
MAX_TURNS = HISTORY_TURNS  # the API takes no more than the chat reads (kb.chat.recent_turns), and says so
MAX_TURN_CHARS = 20_000
MAX_HISTORY_CHARS = HISTORY_CHARS

# Control characters and lone surrogates are removed as the text is read (see kb.text.clean_query).
CleanText = Annotated[str, AfterValidator(clean_query)]


class ChatTurn(BaseModel):
    role: Literal["user", "assistant"]
    content: CleanText = Field(max_length=MAX_TURN_CHARS)


class ChatIn(BaseModel):
    message: CleanText = Field(description="the question, in Chinese or English")
    history: list[ChatTurn] = Field(
        default=[],
        max_length=MAX_TURNS,
        description=f"earlier turns, oldest first: at most {MAX_TURNS}, {MAX_HISTORY_CHARS} characters in all",
    )
    hl: Lang | None = Field(
        default=None, description="the reader's language, for the answer and its sources; default: the message's"
    )
    lang: Lang | None = Field(default=None, description="the same as `hl` (older name)")
    about: str | None = Field(
        default=None,
        max_length=200,
        description="the id of the entry the conversation is about (`/chat?about=`): each question is read with its question",
    )

    @field_validator("history")
    @classmethod
    def _history_fits(cls, history: list[ChatTurn]) -> list[ChatTurn]:
        total = sum(len(turn.content) for turn in history)
        if total > MAX_HISTORY_CHARS:
            raise ValueError(f"the earlier turns hold {total} characters; the limit is {MAX_HISTORY_CHARS} in all")
        return history


class ChatOut(BaseModel):
    answer: str = Field(description="Markdown")
    answer_html: str
    answered: bool
    confidence: float = Field(description="the chance that the first source answers the question (as in search)")
    state: AnswerState = Field(
        description="as in `/api/search`: `answered`, `likely` (the first source may answer) or `not_covered`"
    )
    mode: ChatMode = Field(
        description="`llm`: written by the LLM; `fallback`: the LLM failed, this is the extractive answer"
    )
    sources: list[HitOut]
    lang: Lang = Field(
        description="the reader's language, which the answer is in: `hl` when given, else the question's"
    )
    session: str | None = Field(
        default=None,
        description="a voting session, to send back as `session` with votes on this answer (`POST /api/feedback`) "
        "by a client that sends no cookies; null while votes are off",
    )
    note: str | None = Field(
        default=None,
        description="as in `/api/search`: the framework the question names has no confident answer in its FAQ, "
        "one line in the reader's language, to show before the answer; null otherwise",
    )
    see_also: list[SeeAlsoOut] = Field(default_factory=list, description=_SEE_ALSO)


class JudgeOut(BaseModel):
    kind: Literal["cross-encoder", "llm"]
    model: str
    judged: int = Field(description="questions the judge read since start-up")
    skipped: int = Field(description="questions the first stage led by the calibration's skip_gap or more, not judged")
    cached: int = Field(description="questions whose verdict was kept from an earlier search of this build")
    failed: dict[str, int] = Field(
        description="verdicts not used, by kind (invalid, out_of_range, timeout, error): the first stage's order stood"
    )


class AdapterOut(BaseModel):
    fitted_at: str = Field(description="when `kb tune` (or a refit from /insights) fitted it, ISO-8601 UTC")
    questions: int = Field(description="the labelled questions it was fitted on")
    links: int = Field(description="how many of them were links made from the insights page or `kb link`")
    digest: str = Field(description="the first 16 hex digits of the map's SHA-256")


class HealthOut(BaseModel):
    ok: bool
    entries: int
    model: str
    build: str = Field(description="the index build served (as in the `X-KB-Index` header)")
    built_at: str
    index_age_seconds: float
    llm: bool
    insights_waiting: int = Field(description="questions and votes not yet written to the insights database")
    insights_dropped: int = Field(
        description="questions and votes dropped since start-up: more than KB_INSIGHTS_QUEUE_SIZE were waiting"
    )
    judge: JudgeOut | None = Field(None, description="the second-stage judge (KB_RERANK_MODEL, KB_RERANK), if any")
    adapter: AdapterOut | None = Field(
        None, description="the query adapter the search maps questions with (`kb tune`; KB_QUERY_ADAPTER), if any"
    )


class WidgetConfigOut(BaseModel):
    feedback: bool = Field(
        description="whether this server takes votes (POST /api/feedback), so the widget shows its buttons"
    )
    max_message_chars: int = Field(description="the longest question accepted, in characters (KB_MAX_QUERY_CHARS)")
    max_paste_chars: int = Field(
        description="the longest pasted stack trace or log accepted, in characters: it is reduced to its errors "
        "and the framework's frames, which must then fit max_message_chars"
    )


class ErrorOut(BaseModel):
    ok: Literal[False] = False
    error: str
    status: int


def _source(entry: Entry, reader: str) -> SourceOut:
    return SourceOut(
        name=entry.source,
        title=entry.source_title_in(reader),
        titles=entry.source_titles or {entry.lang: entry.source_title},
        url=entry.source_url,
        framework=entry.framework,
        version=entry.source_version,
    )


def see_also_out(threads: Iterable[Resolved]) -> list[SeeAlsoOut]:
    """The "see also" threads as the JSON gives them."""
    return [SeeAlsoOut(**thread.to_json()) for thread in threads]


def hit_out(hit: Hit, base_url: str, hl: str | None = None) -> HitOut:
    """`base_url` ends with "/"; the permalink is `{base_url}entries/{id}`. `hl` is the
    reader's language: an entry shown in another says so in `note`."""
    e = hit.entry
    return HitOut(
        **hit_fields(hit, hl),
        answer_html=str(render_markdown(e.answer)),
        permalink=permalink(base_url, e.id),
    )


def entry_out(entry: Entry, related: list[Hit], base_url: str, reader: str | None = None) -> EntryOut:
    """`reader` is the reader's language (default: the entry's own)."""
    return EntryOut(
        note=version_note(entry, reader or entry.lang),
        translated_by=cast(TranslatedBy | None, entry.translated_by or None),
        original_url=original_url(entry) or None,
        id=entry.id,
        question=entry.question,
        answer=entry.answer,
        answer_html=str(render_markdown(entry.answer)),
        source=_source(entry, reader or entry.lang),
        url=entry.url,
        file=entry.file,
        line=entry.line,
        sheet=entry.sheet,
        permalink=permalink(base_url, entry.id),
        section=entry.section,
        tags=list(entry.tags),
        lang=entry.lang,
        languages=list(entry.languages),
        related=[hit_out(h, base_url) for h in related],
    )


def alternate_out(question: LearnedQuestion) -> AlternateOut:
    return AlternateOut(
        question=question.question,
        lang=cast(Lang, question.lang),
        origin=cast(Origin, question.origin),
        url=question.url,
        date=question.date,
    )
