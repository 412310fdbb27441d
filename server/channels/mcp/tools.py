"""The MCP server for coding agents: the tools `search_faq`, `get_entry`, `explain_error`, `list_sources`
and the resources `kb://entries/{id}`, the same over stdio (`kb mcp`) and Streamable HTTP (`/mcp`).

Each tool translates: its arguments in, `kb.asking` (the library's front door, so every
question is recorded for the insights with the channel `mcp`) or the knowledge base's
entries read, plain data out. A search says whether the FAQ answers the question, and when
it does not, says so in words an agent cannot take for an answer; nothing is written here
that the FAQ does not say.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from pydantic import Field, StrictInt
from starlette.requests import Request

from kb import asking
from kb.answer import compose_answer
from kb.entries import Entry
from kb.errors import QueryError, shown
from kb.events import Events
from kb.hits import Hit, hit_fields
from kb.knowledge import KnowledgeBase
from kb.provenance import version_note
from kb.stacktrace import MAX_PASTE_CHARS

from ...deps import base_url
from ...permalinks import permalink
from ...rendering.strings import Translator

__all__ = ["create_mcp", "ENTRY_URI", "entry_uri", "CHANNEL"]

CHANNEL = "mcp"  # what the insights record these questions under
ENTRY_URI = "kb://entries/{id}"
MAX_HITS = 20

INSTRUCTIONS = """\
A bilingual (Chinese/English) FAQ knowledge base for LLM-training frameworks (RLHF: ChatLearn,
ROLL, slime, Megatron, DeepSpeed, sglang, vLLM). Search it before answering a question about an
error or a setting of these frameworks; quote the entry and cite its `url`. When a result says
`state: "answered"`, the first entry answers it; `state: "likely"`, the first entry may answer it
(its `confidence` says how likely): offer it as likely, saying it may not fit; `answer` is the reply as
the FAQ's chat gives it, in Markdown; `state: "not_covered"`,
the FAQ has no answer: say so rather than inventing one. In either of the last two states a `see_also`
list may name resolved tracker threads that may help: offer their links to read, never as the FAQ's answer."""

Lang = Literal["zh", "en"]


def entry_uri(entry_id: str) -> str:
    return ENTRY_URI.format(id=entry_id)


def server_version() -> str:
    """This package's version, as the MCP server tells a client it is."""
    try:
        return package_version("kb")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


# The tools' arguments, as their schemas describe them to an agent.
Query = Annotated[str, Field(description="the question, an error message or a flag, in Chinese or English")]
HitCount = Annotated[StrictInt, Field(ge=1, le=MAX_HITS, description="at most this many entries")]
SearchLang = Annotated[Lang | None, Field(description="the language of the entries given (default: the query's)")]
Framework = Annotated[str | None, Field(description="only entries of this framework's FAQ (list_sources names them)")]
Trace = Annotated[str, Field(description="a pasted traceback or log, as printed")]
TraceLang = Annotated[Lang | None, Field(description="the language of the entries given (default: the trace's)")]
EntryId = Annotated[str, Field(description="an entry id, as search_faq gives it (e.g. slime-b0ab398d)")]
EntryLang = Annotated[
    Lang | None,
    Field(description="the language to give it in (default: the entry's own, its `lang`, as search_faq gives it)"),
]


def create_mcp(current: Callable[[], KnowledgeBase], events: Events, name: str = "kb") -> MCPServer[Any]:
    """The MCP server over the knowledge base `current()` returns when a tool is called (the build
    served at that moment), publishing each question asked to `events`."""
    mcp: MCPServer[Any] = MCPServer(name, instructions=INSTRUCTIONS, version=server_version(), log_level="WARNING")

    @mcp.tool(title="Search the FAQ")
    async def search_faq(
        query: Query, ctx: Context, k: HitCount = 5, lang: SearchLang = None, framework: Framework = None
    ) -> dict[str, Any]:
        """Search the LLM-training frameworks' FAQ: the best entries (answer in Markdown, source, link), and whether the FAQ answers it."""
        return await searched(current(), events, query, _root(ctx), k, lang, framework)

    @mcp.tool(title="Explain an error")
    async def explain_error(trace: Trace, ctx: Context, lang: TraceLang = None) -> dict[str, Any]:
        """Find the FAQ entry for a traceback or log: reduced to its errors and the framework's frames, then searched."""
        # Reduced as every search reduces a pasted trace (kb.search.searched_text); a log longer than a
        # paste may be keeps its end, where the error that identifies it is.
        return await searched(current(), events, trace[-MAX_PASTE_CHARS:], _root(ctx), 5, lang, None, "trace")

    @mcp.tool(title="Get an entry")
    async def get_entry(id: EntryId, ctx: Context, lang: EntryLang = None) -> dict[str, Any]:
        """One FAQ entry whole: question, answer in Markdown, source, and its links in each language it has."""
        entry = _entry(current(), id, ToolError)
        shown = entry.localized(lang)
        return {
            **_entry_fields(shown, lang or shown.lang, _root(ctx)),
            "links": {version.lang: version.url for version in entry.versions()},
        }

    @mcp.tool(title="List the FAQs")
    async def list_sources() -> dict[str, Any]:
        """The FAQ documents searched: each one's name, framework, version, languages, entry count and link."""
        return sources(current())

    @mcp.resource(ENTRY_URI, name="entry", title="FAQ entry", mime_type="text/markdown")
    async def entry_resource(id: str) -> str:
        """One FAQ entry as Markdown, in each language it has (its own first): question, answer and source, to cite."""
        return "\n\n---\n\n".join(_markdown(v) for v in _entry(current(), id, ResourceNotFoundError).versions())

    return mcp


async def searched(
    kb: KnowledgeBase,
    events: Events,
    query: str,
    root: str | None,
    k: int,
    lang: str | None,
    framework: str | None,
    argument: str = "query",
) -> dict[str, Any]:
    """A search as `/api/search` makes it (the same checks, the same reduction of a pasted trace); an error
    names the tool's `argument` the text came in."""
    tags = (_framework_tag(kb, framework),) if framework else ()
    try:
        found = await asking.search(kb, events, query, channel=CHANNEL, k=k, tags=tags, hl=lang)
    except QueryError as exc:
        field = argument if exc.field == "q" else exc.field
        raise ToolError(f"{field}: {exc.message}") from None
    result, hl = found.result, found.hl
    answer: dict[str, Any] = {
        "query": result.query,
        "searched": result.searched,
        "answered": result.answered,
        "confidence": result.confidence,
        "state": result.state,
        "message": Translator(hl)(
            f"agent_{result.state}",  # the state's wording for an agent
            confidence=f"{result.confidence:.2f}",
        ),
        # The reply as every channel composes it (kb.answer): the answer, or the first entry's marked not certain.
        "answer": compose_answer(result.in_language(hl), hl).text,
        "note": found.note,  # "ROLL's FAQ does not cover this." where the question names a framework
        "lang": hl,
        "hits": [_hit(h, hl, root) for h in found.worth_showing],
    }
    if found.see_also:  # resolved tracker threads for a question the FAQ may not answer: never its answer
        answer["see_also"] = [thread.to_json() for thread in found.see_also]
        answer["message"] += " " + Translator(hl)("agent_see_also")
    return answer


def sources(kb: KnowledgeBase) -> dict[str, Any]:
    """The FAQ documents `list_sources` gives: each one's name, framework, version, languages, entry count and link."""
    counts: dict[str, int] = {}
    urls: dict[str, dict[str, str]] = {}  # each source's page in each language its entries have
    for entry in kb.entries:
        counts[entry.source] = counts.get(entry.source, 0) + 1
        for version in entry.versions():
            urls.setdefault(entry.source, {}).setdefault(version.lang, version.source_url)
    return {
        "sources": [
            {
                "name": s.name,
                "title": s.title,
                "titles": s.titles or {s.lang: s.title},
                "framework": s.framework,
                "version": s.version,
                "languages": sorted({s.lang, *urls.get(s.name, {})}),
                "url": s.url,
                "urls": {**urls.get(s.name, {}), s.lang: s.url},
                "entries": counts.get(s.name, 0),
            }
            for s in kb.sources
        ]
    }


def _markdown(entry: Entry) -> str:
    where = " · ".join(filter(None, (entry.source_title_in(entry.lang), entry.source_version)))
    note = version_note(entry, entry.lang)
    return "\n".join(
        [f"# {entry.question}", "", *([f"*{note}*", ""] if note else []), entry.answer.strip(), ""]
        + [f"{Translator(entry.lang)('answer_source')}: [{where}]({entry.url or entry.source_url})"]
    )


def _framework_tag(kb: KnowledgeBase, framework: str) -> str:
    """The tag of the framework named (any case); a ToolError naming those there are for another."""
    known = sorted({e.framework for e in kb.entries if e.framework})
    match = next((name for name in known if name.lower() == framework.strip().lower()), None)
    if match is None:
        raise ToolError(f"framework: no FAQ of the framework {shown(framework)}; the frameworks are {', '.join(known)}")
    return match.lower()


def _entry(kb: KnowledgeBase, entry_id: str, error: type[Exception]) -> Entry:
    entry = kb.by_id.get(entry_id.strip())
    if entry is None:
        raise error(f"no entry with id {shown(entry_id)}; search_faq gives the ids (e.g. slime-b0ab398d)")
    return entry


def _root(ctx: Context) -> str | None:
    """This server's root URL over HTTP, as the web API makes its permalinks (KB_BASE_URL, else the address
    the request reached, never its `Host` header); None over stdio: no pages to link to."""
    try:
        request = ctx.request_context.request
    except (ValueError, AttributeError):
        return None
    return base_url(request) if isinstance(request, Request) and "app" in request.scope else None


def _hit(hit: Hit, hl: str, root: str | None) -> dict[str, Any]:
    """A hit's fields as every channel gives them (`kb.hits.hit_fields`), with MCP's own: where the entry is for
    a reader (`place`: its link, else its file and line), its resource URI, and its page on this server when
    the call came over HTTP."""
    fields = {**hit_fields(hit, hl), "score": round(hit.score, 3), "place": hit.entry.place}
    fields["resource"] = entry_uri(hit.entry.id)
    if root:
        fields["permalink"] = permalink(root, hit.entry.id)
    return fields


def _entry_fields(e: Entry, hl: str, root: str | None) -> dict[str, Any]:
    """An entry's fields as a hit's, without what only a search gives (its score and the words it matched)."""
    fields = _hit(Hit(e, 0.0, 1), hl, root)
    del fields["score"], fields["matched"]
    return fields
