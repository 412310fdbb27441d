"""The inventory of the packages' calls into third-party libraries that read text: one row for each `json.load(s)`,
`tomllib.load(s)`, jieba `cut` and markdown-it `parse`/`render` call in kb/, ingest/, server/, kbcli/ and trackers/
(tests/support/library_calls.py finds them by reading the code), in file order, saying what text it reads.

A call that reads text from outside (a request, a webhook, an upstream file, a model's reply, a harvested thread)
has a `run`: what its surface does with a text, timed by tests/quality/test_library_calls.py on hostile text of
the largest size the surface accepts (`chars`). A surface whose size makes a run of every shape too long for a
test is timed at `timed_at` characters, its growth checked there, and its time at full size estimated from it,
linearly. An upstream file (KB_SYNC_MAX_FILE_BYTES) has no budget of its own: the whole sync has its deadline
(KB_SYNC_TIMEOUT), which stops it; its row is checked linear, and under MARKDOWN_BUDGET at `timed_at`. A call that reads only
the project's own files (the index, the data directory's records, the shipped data) has none, and says so.
Pygments' lexers have an inventory of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from tests.support.hostile_patterns import module

GITHUB_BODY = 65_536  # characters: an issue or comment, a harvested answer; more than a written answer (20,000)
REQUEST_BODY = 262_144  # bytes: KB_MAX_BODY_BYTES, the largest request body (a webhook, a form) the server reads
SYNC_FILE = 5_000_000  # bytes: KB_SYNC_MAX_FILE_BYTES, the largest upstream file a sync reads
BUDGET = 2.0  # seconds per call on its worst hostile text, generous against a noisy machine
# markdown-it-py reads hostile Markdown in linear time but slowly (about 57 µs a character on a loaded 2-core
# machine: 3.7 s for 65,536 characters of `[a][`): its rows are timed at a quarter of their size and given more.
MARKDOWN_AT = 16_384
# jieba reads Chinese in linear time (in cuts, kb/text.py) but slowly: 1.7 to 3.1 s for 65,536 different characters.
JIEBA_BUDGET = 10.0
MARKDOWN_BUDGET = 30.0


@dataclass(frozen=True)
class Row:
    file: str
    call: str  # as written
    reads: str  # the text it reads, and where that comes from
    run: Callable[[str], object] | None = None  # what the surface does with an outside text; None: own files only
    chars: int = GITHUB_BODY
    timed_at: int = 0  # characters it is timed at, when less than `chars` (then estimated linearly)
    budget: float | None = BUDGET  # None: bounded by the sync's deadline (KB_SYNC_TIMEOUT), checked linear only


def _json(text: str) -> object:
    return module("json").loads(text)


def _toml(text: str) -> object:
    return module("tomllib").loads(text)


def _toml_file(text: str) -> object:
    """A TOML data file's text as `kb.tomlfile.load_toml` reads it: its keys' parts counted first."""
    return module("kb.tomlfile").long_key(text)[1] or _toml(text)


def _markdown_faq(name: str) -> Callable[[str], object]:
    return lambda text: getattr(module("ingest.markdown_faq"), name)(text)


def _faq_parse(text: str) -> object:
    return module("ingest.markdown_faq")._md.parse(text)


_UPSTREAM = "an upstream FAQ file a sync reads (KB_SYNC_MAX_FILE_BYTES)"
_OWN_INDEX = "the index's own files, written by the build"
_OWN_DATA = "the data directory's own records, written by the project"
_LLM = "a model's reply (an OpenAI-compatible server's body)"

ROWS = [
    Row("kb/adapter.py", "json.loads", "an adapter file's header, written by `kb tune`"),
    Row("kb/evaluate.py", "json.loads", "an evaluation set's lines, the maintainer's file"),
    Row("kb/harvest/condense.py", "json.loads", _LLM, _json),
    Row("kb/harvest/run.py", "json.loads", "the harvest's own record of threads read, in the data directory"),
    Row("kb/harvest/run.py", "json.loads", "the harvest's own record of threads read, in the data directory"),
    Row(
        "kb/hyperlinks.py",
        "_md.parse",
        "an answer's Markdown: a written or harvested answer, an upstream entry",
        lambda text: module("kb.hyperlinks").code_lines(text),
    ),
    Row(
        "kb/hyperlinks.py",
        "_md.parse",
        "an answer's Markdown: a written or harvested answer, an upstream entry",
        lambda text: module("kb.hyperlinks").drop_language_links(text),
    ),
    Row("kb/index.py", "json.loads", _OWN_INDEX),
    Row("kb/index.py", "json.loads", _OWN_INDEX),
    Row("kb/index_meta.py", "json.loads", _OWN_INDEX),
    Row("kb/insights/harvested.py", "json.loads", "the insights database's own columns"),
    Row("kb/insights/harvested.py", "json.loads", "the insights database's own columns"),
    Row("kb/insights/harvested.py", "json.loads", "the insights database's own columns"),
    Row("kb/insights/pending.py", "json.loads", "the insights database's own columns"),
    Row("kb/judge/llm.py", "json.loads", _LLM, _json),
    Row("kb/llm.py", "json.loads", _LLM, _json),
    Row("kb/llm.py", "json.loads", "a line of a model's streamed reply", _json),
    Row("kb/scoring.py", "json.loads", "the calibration file the build writes"),
    Row("kb/syncs.py", "json.loads", _OWN_DATA),
    Row("kb/syncs.py", "json.loads", _OWN_DATA),
    Row("kb/text.py", "tomllib.load", "the shipped glossary (kb/data)"),
    Row(
        "kb/text.py",
        "_jieba().cut_for_search",
        "each run of Chinese in a text tokenized: a question, an entry, a harvested thread",
        lambda text: module("kb.text").tokenize(text),
        budget=JIEBA_BUDGET,
    ),
    Row(
        "kb/tomlfile.py",
        "tomllib.loads",
        "a TOML data file of a sources folder (a manifest, tags): the deployer's, or a checkout of theirs",
        _toml_file,
    ),
    Row("kb/written.py", "json.loads", "the written answers' file, written by the server"),
    Row("kb/written.py", "json.loads", "the written answers' file, written by the server"),
    Row(
        "ingest/markdown_faq.py",
        "_md.parse",
        _UPSTREAM,
        _markdown_faq("title_of"),
        SYNC_FILE,
        MARKDOWN_AT,
        None,
    ),
    Row(
        "ingest/markdown_faq.py",
        "_md.parse",
        _UPSTREAM,
        _markdown_faq("heading_title"),
        SYNC_FILE,
        MARKDOWN_AT,
        None,
    ),
    Row(
        "ingest/markdown_faq.py",
        "_md.parse",
        _UPSTREAM,
        _markdown_faq("guess_entries_style"),
        SYNC_FILE,
        MARKDOWN_AT,
        None,
    ),
    Row("ingest/markdown_faq.py", "_md.parse", _UPSTREAM, _faq_parse, SYNC_FILE, MARKDOWN_AT, None),
    Row("ingest/pipeline.py", "json.loads", _OWN_INDEX),
    Row("ingest/tables.py", "json.loads", "a line of an upstream JSONL Q&A file", _json, SYNC_FILE, REQUEST_BODY),
    Row(
        "ingest/translation_checks.py",
        "_md.parse",
        "an entry's Markdown, to find its language",
        lambda text: module("ingest.translation_checks").holds_language(text, "zh"),
    ),
    Row(
        "ingest/translation_checks.py",
        "_md.parse",
        "an entry and a model's translation of it",
        lambda text: module("ingest.translation_checks").problem("An answer.", text, "en", "zh"),
    ),
    Row(
        "ingest/translation_checks.py",
        "_md.parse",
        "an entry and a model's translation of it",
        lambda text: module("ingest.translation_checks").problem(text, "An answer.", "en", "zh"),
    ),
    Row(
        "ingest/translation_draft.py",
        "_md.parse",
        "an entry's lines, cut into pieces to translate",
        lambda text: module("ingest.translation_draft")._tail(text.split("\n"), "headings"),
    ),
    Row(
        "ingest/upstream.py",
        "tomllib.loads",
        "one value of a manifest, edited by `kb sync`",
        lambda text: module("ingest.upstream")._parsed(text),
    ),
    Row(
        "server/channels/dingtalk/payload.py",
        "json.loads",
        "a DingTalk robot's message (a request body)",
        _json,
        REQUEST_BODY,
    ),
    Row(
        "server/channels/github/close_queue.py",
        "json.loads",
        "a queued close: the issue of a delivery",
        _json,
        REQUEST_BODY,
    ),
    Row("server/channels/feishu/events.py", "json.loads", "Feishu's answer to a challenge", _json, REQUEST_BODY),
    Row("server/channels/feishu/events.py", "json.loads", "a Feishu event (a request body)", _json, REQUEST_BODY),
    Row("server/channels/feishu/events.py", "json.loads", "Feishu's answer to a message sent", _json, REQUEST_BODY),
    Row("server/channels/feishu/events.py", "json.loads", "a Feishu message's content", _json, REQUEST_BODY),
    Row(
        "server/channels/github/events.py",
        "json.loads",
        "a GitHub webhook delivery (a request body)",
        _json,
        REQUEST_BODY,
    ),
    Row("server/channels/github/push.py", "tomllib.load", "the served sources folders' manifests, the deployer's"),
    Row(
        "server/channels/slack/mrkdwn.py",
        "_parser().parse",
        "an answer written for Slack: an entry, a model's answer",
        lambda text: module("server.channels.slack.mrkdwn").to_mrkdwn(text),
    ),
    Row("server/channels/slack/payload.py", "json.loads", "a Slack interaction (a form field)", _json, REQUEST_BODY),
    Row(
        "server/rendering/markdown.py",
        "_markdown().render",
        "an answer shown on a page: an entry, a written or harvested answer, a model's answer",
        lambda text: module("server.rendering.markdown").render_markdown(text, ["model"]),
    ),
    Row(
        "server/rendering/markdown.py",
        "_markdown().render",
        "an answer shown on a page: an entry, a written or harvested answer, a model's answer",
        lambda text: module("server.rendering.markdown").render_markdown(text + " "),
    ),
    Row(
        "server/routes/pages.py",
        "json.loads",
        "the chat form's earlier turns (a form field)",
        lambda text: module("server.routes.pages")._history(text),
        REQUEST_BODY,
    ),
    Row("kbcli/calibrate.py", "json.loads", "the calibration in use, written by `kb calibrate`"),
    Row("kbcli/harvest.py", "json.loads", "`kb harvest --from`'s file of threads", _json, SYNC_FILE, REQUEST_BODY),
    Row(
        "trackers/github/responses.py",
        "json.loads",
        "GitHub's API responses: the bot's calls, and the pages `kb harvest --repo` reads",
        _json,
        REQUEST_BODY,
    ),
    Row(
        "kbcli/terminal.py",
        "MarkdownIt('commonmark').parse",
        "an answer printed by `kb ask`: an entry, a model's answer",
        lambda text: module("kbcli.terminal").render_markdown(text),
    ),
]


def _markdown(row: Row) -> Row:
    """A markdown-it row timed at MARKDOWN_AT and given MARKDOWN_BUDGET (a sync's keeps the sync's deadline)."""
    if row.run is None or not row.call.endswith(("parse", "render")):
        return row
    budget = None if row.budget is None else max(row.budget, MARKDOWN_BUDGET)
    return replace(row, timed_at=row.timed_at or MARKDOWN_AT, budget=budget)


ROWS = [_markdown(row) for row in ROWS]
