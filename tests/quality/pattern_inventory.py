"""The inventory of the packages' regular expressions: one row for each `re.compile` and inline `re.` call in kb/,
ingest/, server/, kbcli/ and trackers/, in file order, with the size of hostile text it is timed on and how it is used.

tests/quality/test_hostile_patterns.py finds the patterns by reading the code (tests/support/hostile_patterns.py)
and fails when one has no row here (a new pattern) or a row has no pattern (one removed), then times each on
hostile text. A row's `chars` is the most text its surface hands it: 65,536 by default, GitHub's limit on an issue
or comment and more than a query (2,000), a pasted trace (50,000 is reduced line by line) or a chat message takes;
`how` is "match" for a pattern only ever matched at the start of a bounded line or value; `make` makes a pattern
built at run time (from a glossary, a tag table, a setting) from the shipped data or a typical value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from tests.support.hostile_patterns import module

GITHUB_BODY = 65_536  # characters: the largest text from outside any surface reads before it is cut


def _glossary() -> list[re.Pattern[str]]:
    found = module("kb.glossary").load_glossary()._english_re
    return [found] if found is not None else []


def _tag_patterns() -> list[re.Pattern[str]]:
    return [p for tag in module("kb.tags").tag_table().tags.values() for p in tag.patterns]


@dataclass(frozen=True)
class Row:
    file: str
    key: str  # the pattern's text, or the expression that makes it at run time
    chars: int = GITHUB_BODY
    how: str = "finditer"  # or "match"
    make: Callable[[], list[re.Pattern[str]]] | None = None
    prepare: Callable[[str], str] = str  # what the surface does to text before the pattern sees it
    # Why a pattern the analysis (tests/support/redos.py) finds superlinear holds: its surface bounds it, or the
    # finding is a false alarm (the timing on hostile text is the check). Empty: the analysis must find nothing.
    redos: str = ""


_ENTRY_LINE = "reads the shipped entries' own lines, each cut to 300 characters first: bounded whatever its shape"
_TAGS_BOUNDED = (
    "runs of ASCII are cut to 100 characters before the tags read the text (`prepare`): a repeat runs over 100 at most"
)


def _bounded(text: str) -> str:
    """Text as the tags read it: runs of ASCII and of spaces cut to 100 characters (`kb.tags.bounded`)."""
    cut: str = module("kb.tags").bounded(text)
    return cut


ROWS = [
    # kb/answer.py
    Row(
        "kb/answer.py",
        "^\\s*(?:what about|how about|and (?:for|with|in|if)|and what|same for|what if|那|那么|那如果|如果是|换成|改成|还有|另外)|(?:呢|吗)\\s*[?？]?\\s*$",
    ),
    Row(
        "kb/answer.py",
        "f'(?<![\\\\w-]){re.escape(name)}(?![\\\\w-])'",
        make=lambda: [re.compile(rf"(?<![\w-]){re.escape('megatron-lm')}(?![\w-])")],
    ),
    Row(
        "kb/answer.py",
        "f'(?<![\\\\w-]){re.escape(name)}(?![\\\\w-])'",
        make=lambda: [re.compile(rf"(?<![\w-]){re.escape('megatron-lm')}(?![\w-])")],
    ),
    Row("kb/answer.py", "\\s+"),
    # kb/embedding.py
    Row("kb/embedding.py", "[\\t\\n\\x20-\\x7e\\u3000-\\u303f\\u3400-\\u4dbf\\u4e00-\\u9fff\\uff01-\\uff5e]*"),
    # kb/evaluate.py
    Row("kb/evaluate.py", "[\\s*`#]+"),
    # kb/folds.py
    Row("kb/folds.py", "https?://(?:www\\.)?github\\.com/([^/]+/[^/#?]+)", chars=2000, how="match"),
    # kb/glossary.py
    Row("kb/glossary.py", "f'(?<![a-z0-9_])(?:{_trie(english)})(?![a-z0-9_])'", make=_glossary),
    # kb/hubs.py
    Row("kb/hubs.py", '\\]\\(\\s*<?[^()<>\\s]+>?(?:\\s+\\"[^\\"]*\\")?\\s*\\)'),
    Row("kb/hubs.py", "<(?:https?|ftp)://[^<>\\s]+>|<[^<@>\\s]+@[^<>\\s]+>"),
    Row("kb/hubs.py", "(?:https?|ftp)://\\S+|www\\.\\S+"),
    Row("kb/hubs.py", "\\w"),
    # kb/hyperlinks.py
    Row("kb/hyperlinks.py", "`+"),
    Row("kb/hyperlinks.py", "(!?\\[[^\\[\\]\\n]*\\]\\()(\\s*)(<[^<>\\n]*+>|[^\\s()<>]+)"),
    Row("kb/hyperlinks.py", "<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\\s<>]*>"),
    Row("kb/hyperlinks.py", "^(\\s{0,3}\\[[^\\]]+\\]:\\s*)(\\S+)"),
    Row("kb/hyperlinks.py", "https?://[!#-&(-;=?-_a-~]+"),
    Row("kb/hyperlinks.py", "\\n{3,}"),
    # kb/index.py
    Row("kb/index.py", "^Error in .*? at \\S+: "),
    # kb/insights/report.py
    Row("kb/insights/report.py", "^\\s*(\\d{1,5})\\s*([hdw])\\s*$"),
    # kb/insights/sql.py
    Row(
        "kb/insights/sql.py",
        "pattern",
        make=lambda: [re.compile(p, re.DOTALL) for p, _ in module("kb.insights.sql")._POSTGRES],
    ),
    # kb/issue_question.py
    Row("kb/issue_question.py", "[a-z][a-z0-9_-]*"),
    Row("kb/issue_question.py", "v?\\d+(?:\\.[\\w+-]+)+", how="match"),
    Row("kb/issue_question.py", "\\n[ \\t]+(?=\\n)"),
    Row("kb/issue_question.py", "\\n{3,}"),
    Row("kb/issue_question.py", "!\\[[^\\[\\]\\n]*\\]\\([^()\\s]*\\)|<img\\b[^<>]*>?"),
    Row("kb/issue_question.py", "\\[([^\\[\\]\\n]*)\\]\\([^()\\s]*\\)"),
    Row("kb/issue_question.py", "(?:https?|ftp)://\\S+|www\\.\\S+"),
    Row("kb/issue_question.py", "(?<![\\w/.-])--?[A-Za-z][\\w-]*|[A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*"),
    # kb/judge/llm.py
    Row("kb/judge/llm.py", "HTTP (400|422)"),
    # kb/llm.py
    Row("kb/llm.py", "[\\[【]\\s*(\\d+(?:\\s*[,，、]\\s*\\d+)*)\\s*[\\]】](?!\\()"),
    Row("kb/llm.py", "\\d+"),
    # kb/noise.py
    Row(
        "kb/noise.py",
        "^\\s*(?:[\\[【(（]\\s*(?:bug|bugs|usage|question|questions|help wanted|help|feature|feature request|discussion|doc|docs|misc|installation|install|performance|rfc|enhancement|new model|urgent|求助|问题|咨询|提问|疑问|bug反馈|已解决|solved)\\s*[\\]】)）]\\s*(?:[:：]\\s*)?)+",
    ),
    Row("kb/noise.py", "^\\s*(?:bug|question|help|issue|q)\\s*[:：]\\s*"),
    Row(
        "kb/noise.py",
        "^\\s*(?:(?:hi|hello|hey|dear)(?:\\s+(?:all|everyone|there|team|guys|developers|authors))?|大家好|各位(?:大佬|老师|好)?|你好|您好|老师好|请教(?:一下|一个问题|个问题)?|请问(?:一下)?)[\\s,，!！。:：]*",
    ),
    Row("kb/noise.py", "(?:thanks?(?: you)?(?: in advance)?|thx|谢谢(?:大家|各位)?|多谢|感谢)\\Z"),
    Row(
        "kb/noise.py",
        "(?<![\\w.])v?\\d+\\.\\d+(?:\\.\\d+)+(?:[-+.]?\\w+)?(?![\\w.])|(?<![\\w.])v\\d+(?:\\.\\d+)?(?![\\w.])",
    ),
    Row(
        "kb/noise.py",
        "\\b(?:on|with|using|in)?\\s*\\d+\\s*(?:[x×*]\\s*)?(?:nodes?\\s+of\\s+)?(?:H100|H800|H20|A100|A800|A10|V100|L40S?|4090|3090|GPUs?|cards?|nodes?)\\b|(?<!\\d)\\d+\\s*(?:卡|张卡|台机器|机)",
        redos="a false alarm: `\\b` comes first and a run of spaces has no word boundary inside it, so each run is "
        "entered once, from the word before it",
    ),
    Row("kb/noise.py", "[ \\t]{2,}"),
    Row("kb/noise.py", "\\w"),
    # kb/settings.py
    Row("kb/settings.py", "[a-z][a-z0-9_]*"),
    Row("kb/settings.py", ":[^:@/]*@"),
    # kb/quoted_errors.py: an entry's question and answer, read once when the search is built, a line cut to
    # LINE_CHARS (300) first; a question is compared with `str` operations, never a pattern
    Row(
        "kb/quoted_errors.py",
        "[A-Za-z_][\\w.]*(?:Error|Exception):[^\\n]*|\\bassert [^\\n]+",
        chars=300,
        redos=_ENTRY_LINE,
    ),
    Row("kb/quoted_errors.py", '“([^”\\n]+)”|\\"([^\\"\\n]+)\\"|`([^`\\n]+)`', chars=300, redos=_ENTRY_LINE),
    Row("kb/quoted_errors.py", "[A-Za-z0-9]_[A-Za-z0-9]|[a-z]\\.[a-z_]|\\w\\[|\\w\\(|/\\w", chars=300),
    Row("kb/quoted_errors.py", "\\A\\s*[\\w.]*(?:Error|Exception)\\b:?", chars=300, how="match"),
    # kb/stacktrace.py
    Row("kb/stacktrace.py", '^\\s*File "(?P<path>[^"]+)", line \\d+, in (?P<func>[\\w<>.]+)'),
    Row("kb/stacktrace.py", "^(?P<type>(?:[A-Za-z_]\\w*\\.)*(?P<name>[A-Z]\\w*))(?::\\s*(?P<msg>.*))?$"),
    Row("kb/stacktrace.py", "Error|Exception|Exit|Interrupt|Failed|Warning|Timeout"),
    Row(
        "kb/stacktrace.py",
        "^(?:\\s*(?:\\[rank\\d+\\]:?|\\((?=\\w*(?:pid|Worker|Actor))[^)]*\\)|\\d{4}-\\d\\d-\\d\\d[ T][\\d:.,]+|\\[?(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\\]?:?|\\[[\\d:.\\- ]+\\]))+\\s*",
    ),
    Row("kb/stacktrace.py", "0x[0-9a-fA-F]+"),
    Row("kb/stacktrace.py", "(?:[A-Za-z]:)?(?:/[\\w.\\-]+){2,}/?"),
    Row("kb/stacktrace.py", "\\b(?:pid|rank|ip|node)[=:]\\s*\\S+"),
    Row("kb/stacktrace.py", "\\b\\d+(?:\\.\\d+){3}(?::\\d+)?\\b"),
    Row("kb/stacktrace.py", "(?<![\\w.])\\d+(?:\\.\\d+)?(?![\\w.])"),
    Row(
        "kb/stacktrace.py",
        '(?<!\\s)\\s*(?=Traceback \\(most recent call last\\)|File \\"[^\\"]+\\", line \\d+, in |\\[rank\\d+\\]|(?<![\\w.])(?:[A-Za-z_]\\w*\\.)*[A-Z]\\w*(?:Error|Exception):\\s)|(?<=, in )(?<![\\w.])([\\w<>.]+)\\s+',
    ),
    Row("kb/stacktrace.py", "[(\\[][\\s,]*[)\\]]"),
    Row("kb/stacktrace.py", "\\s+"),
    Row("kb/stacktrace.py", "error|exception|failed|assert|timeout|mismatch"),
    # kb/tags.py
    Row("kb/tags.py", "[a-z0-9][a-z0-9-]*"),
    Row(
        "kb/tags.py",
        "f'(?<![!-~])([!-~]{{{MAX_RUN}}})[!-~]+|(?<![ \\\\t-\\\\r])([ \\\\t-\\\\r]{{{MAX_RUN}}})[ \\\\t-\\\\r]+'",
    ),
    Row("kb/tags.py", "[A-Za-z0-9_]"),
    Row("kb/tags.py", "[A-Za-z0-9_]$"),
    Row(
        "kb/tags.py",
        "before + re.escape(word).replace('\\\\ ', '\\\\s+') + after",
        make=lambda: [module("kb.tags")._keyword(w) for w in ("out of memory", "oom", "nccl")],
    ),
    Row("kb/tags.py", "pattern", make=_tag_patterns, prepare=_bounded, redos=_TAGS_BOUNDED),
    Row("kb/tags.py", "p", make=_tag_patterns, prepare=_bounded, redos=_TAGS_BOUNDED),
    Row("kb/tags.py", "[^a-z0-9]+"),
    # kb/text.py
    Row("kb/text.py", "f'[{_CJK}]+|[A-Za-z0-9_][A-Za-z0-9_.\\\\-/\\\\[\\\\]:]*'"),
    Row("kb/text.py", "[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\\d+"),
    Row(
        "kb/text.py",
        "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\ud800-\\udfff\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]",
    ),
    Row("kb/text.py", "f'[{_CJK}]'"),
    Row("kb/text.py", "f'[{_CJK}]'"),
    Row("kb/text.py", "-+"),
    Row("kb/text.py", "[^A-Za-z0-9_]+"),
    # kb/tomlfile.py
    Row(
        "kb/tomlfile.py",
        "\\s*(\\[\\[?)\\s*([\\w.\\-\\\"']+(?:[ \\t]+[\\w.\\-\\\"']+)*)\\s*\\]\\]?\\s*(?:#.*)?$",
        how="match",
    ),
    Row("kb/tomlfile.py", "\\d{4}-\\d{2}-\\d{2}"),
    Row(
        "kb/tomlfile.py",
        'f"""\\\\s*(?:{re.escape(key)}|\\\\"{re.escape(key)}\\\\"|\'{re.escape(key)}\')\\\\s*="""',
        how="match",
        make=lambda: [re.compile(rf"\s*(?:{re.escape('ref')}|\"{re.escape('ref')}\"|'{re.escape('ref')}')\s*=")],
    ),
    Row("kb/tomlfile.py", "line (\\d+)"),
    # kb/written.py
    Row("kb/written.py", "[,，、;；|\\n]"),
    # ingest/changes.py
    Row("ingest/changes.py", "/(blob|tree|raw)/[^/\\s)>\\\"']+/"),
    # ingest/columns.py
    Row("ingest/columns.py", "[\\s\\-()（）\\[\\]【】_]+"),
    # ingest/export.py
    Row("ingest/export.py", "<(https?://[^\\s<>]+)>"),
    # ingest/headings.py
    Row(
        "ingest/headings.py",
        "</?(?:a|abbr|b|big|br|code|del|em|font|i|img|ins|kbd|mark|small|span|strong|sub|sup|u|wbr)(?:\\s[^<>]*)?/?>",
    ),
    Row("ingest/headings.py", "\\s+"),
    # ingest/linebreaks.py
    Row("ingest/linebreaks.py", "(?:^|(?<=\\s))```([\\w+#.-]*+)\\s"),
    Row("ingest/linebreaks.py", "```(?=\\s|$)"),
    Row("ingest/linebreaks.py", "(?<!\\s)\\s+(?=#{1,6} \\S)"),
    Row("ingest/linebreaks.py", "(?<=[?？])\\s+|(?<!\\s)\\s+(?=\\d{1,3}[.)]\\s|\\[|[-+*]\\s)"),
    Row("ingest/linebreaks.py", "(?<=[。．.!！?？:：;；])\\s+(?=(?:\\d{1,3}[.)]|[-+*])\\s)"),
    Row("ingest/linebreaks.py", "(?<=\\\\)\\s+|(?<!\\s)\\s+(?=#\\S)|(?<!\\s)\\s+(?=[A-Za-z_][\\w.]*\\s*=[^=])"),
    Row("ingest/linebreaks.py", "(?:^|\\s)#{1,6} \\S"),
    Row("ingest/linebreaks.py", "#{1,6} "),
    Row("ingest/linebreaks.py", "\\n{3,}"),
    # ingest/manifest.py
    Row("ingest/manifest.py", "[A-Za-z0-9][A-Za-z0-9._-]*"),
    Row("ingest/manifest.py", "https?://"),
    Row("ingest/manifest.py", "^-|\\.\\.|@\\{|[\\x00-\\x20\\x7f~^:?*\\[\\\\]|(?:\\.lock|/|\\.)$|^/|//"),
    Row("ingest/manifest.py", "([A-Za-z][A-Za-z0-9+.-]*)://(?:[^@/]*@)?([^/]*)", how="match"),
    Row("ingest/manifest.py", "(?:[^@/:]+@)?([^/:]+):", how="match"),
    Row("ingest/manifest.py", "[\\x00-\\x20\\x7f]"),
    # ingest/document.py
    Row("ingest/document.py", "[\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff]"),
    Row("ingest/document.py", "[-_.\\s]+"),
    # ingest/staging.py: bytes patterns over a fetched file of up to KB_SYNC_MAX_FILE_BYTES, timed as their text twins
    Row(
        "ingest/staging.py",
        "b'^[ \\\\t]{0,3}#{1,6}[ \\\\t]'",
        chars=5_000_000,
        make=lambda: [re.compile(r"^[ \t]{0,3}#{1,6}[ \t]", re.M)],
    ),
    Row(
        "ingest/staging.py",
        "b'^[ \\\\t]*(?:\\\\d+[.)]|[-*+])[ \\\\t]+\\\\*\\\\*'",
        chars=5_000_000,
        make=lambda: [re.compile(r"^[ \t]*(?:\d+[.)]|[-*+])[ \t]+\*\*", re.M)],
    ),
    # ingest/markdown_faq.py
    Row("ingest/markdown_faq.py", "[\\s:：。.!！?？]*"),
    Row("ingest/markdown_faq.py", "( *)(\\d{1,9}[.)]|[-+*])( *)", how="match"),
    Row("ingest/markdown_faq.py", "(?<!\\s)\\s*[(（][^()（）]*[)）]$"),
    Row("ingest/markdown_faq.py", "L\\d+"),
    # ingest/table_faq.py
    Row("ingest/table_faq.py", "[A-Za-z0-9][A-Za-z0-9._-]{0,99}"),
    Row("ingest/table_faq.py", "[A-Za-z0-9][A-Za-z0-9._-]*"),
    Row("ingest/table_faq.py", "<(https?://[^\\s<>]+)>\\Z"),
    Row("ingest/table_faq.py", "[,，、;；|\\n]"),
    Row("ingest/table_faq.py", "(?<!\\s)\\s*\\n\\s*"),
    Row("ingest/table_faq.py", "(?<!\\s)\\s*\\n\\s*"),
    # ingest/translation_checks.py
    Row("ingest/translation_checks.py", "[\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff]"),
    Row("ingest/translation_checks.py", "[A-Za-z]"),
    Row("ingest/translation_checks.py", "https?://[!#-&(-;=?-_a-~]+"),
    Row("ingest/translation_checks.py", "```\\s*(markdown|md)?\\s*"),
    # ingest/translation_files.py
    Row(
        "ingest/translation_files.py",
        "\\s*\\[\\[?\\s*([^\\]\\s](?:[^\\]]*[^\\]\\s])?)\\s*\\]\\]?\\s*(?:#.*)?$",
        how="match",
    ),
    Row("ingest/translation_files.py", "\\s+"),
    # ingest/upstream.py
    Row(
        "ingest/upstream.py",
        "(?:https://|git@|ssh://git@)github\\.com[:/]([^/]+)/(.+?)(?:\\.git)?/?$",
        how="match",
    ),
    Row("ingest/upstream.py", "/(blob|tree|raw)/[^/]+/.*$"),
    Row("ingest/upstream.py", "\\s*\\[", how="match"),
    Row(
        "ingest/upstream.py",
        "f'([ \\\\t]*{re.escape(key)}[ \\\\t]*=[ \\\\t]*)'",
        how="match",
        make=lambda: [re.compile(rf"([ \t]*{re.escape('version')}[ \t]*=[ \t]*)")],
    ),
    Row(
        "ingest/upstream.py",
        'f"""\\\\s*name\\\\s*=\\\\s*[\\\\"\']{re.escape(source)}[\\\\"\']"""',
        how="match",
        make=lambda: [re.compile(rf"\s*name\s*=\s*[\"']{re.escape('slime')}[\"']")],
    ),
    # server/channels/channel.py
    Row("server/channels/channel.py", "^[a-z][a-z0-9_]*$"),
    Row("server/channels/channel.py", "^#[0-9a-f]{6}$"),
    # server/channels/feishu/card.py
    Row("server/channels/feishu/card.py", "^ {0,3}(`{3,}+|~{3,}+)[^\\n]*+\\n.*?(?:^ {0,3}\\1[^\\n]*$|\\Z)"),
    Row("server/channels/feishu/card.py", "(?<!`)(`++).+?(?<!`)\\1(?!`)"),
    Row("server/channels/feishu/card.py", "!\\[([^\\[\\]\\n]*)\\]\\("),
    # server/channels/feishu/events.py
    Row("server/channels/feishu/events.py", "[ \\t]+"),
    # server/channels/github/comment.py
    Row("server/channels/github/comment.py", "<!-- kb-faq-entry: ([\\w.-]+) -->"),
    # server/channels/github/push.py
    Row("server/channels/github/push.py", "^[a-z][\\w+.-]*://(?:[^@/]*@)?(.*)$"),
    Row("server/channels/github/push.py", "^[^@/:]+@([^:/]+):(.*)$"),
    # server/channels/openai/routes.py
    Row(
        "server/channels/openai/routes.py",
        "[\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\uff00-\\uffef]",
    ),
    # server/channels/slack/blocks.py
    Row("server/channels/slack/blocks.py", "^[UW][A-Z0-9]{2,20}$"),
    # server/channels/slack/mrkdwn.py
    Row("server/channels/slack/mrkdwn.py", "&[a-z]{0,3}$"),
    # server/forms.py
    Row("server/forms.py", "[A-Za-z0-9_-]{32}"),
    # server/request_checks.py
    Row("server/request_checks.py", '["\\\\\\[\\]{}]'),
    # server/rendering/highlight.py
    Row("server/rendering/highlight.py", "^[ \\t]*\\$ "),
    Row(
        "server/rendering/highlight.py",
        "^[ \\t]*(?:export |pip3? |python3? |bash |sh |git |conda |torchrun |deepspeed |cd |sudo |docker |apt-get |ray |nvidia-smi)",
    ),
    Row("server/rendering/highlight.py", "\\A\\s*Traceback \\(most recent call last\\):"),
    # server/rendering/markdown.py
    Row("server/rendering/markdown.py", "[\\x00-\\x20\\x7f]+"),
    Row(
        "server/rendering/markdown.py",
        "'|'.join((_bounded(w) for w in words))",
        make=lambda: [module("server.rendering.markdown")._terms_pattern(["slime", "resume training", "c++"])],
    ),
    Row("server/rendering/markdown.py", "[A-Za-z0-9_]"),
    Row("server/rendering/markdown.py", "[A-Za-z0-9_]$"),
    Row("server/rendering/markdown.py", "(<[^<>]*>)|([._/=])(?=\\S)"),
    Row("server/rendering/markdown.py", "<[^<>]*>"),
    Row("server/rendering/markdown.py", "\\S+"),
    Row("server/rendering/markdown.py", "\\s+"),
    Row("server/rendering/markdown.py", "```[^\\n]*|`|\\*\\*|__|!?\\[([^\\[\\]\\n]*)\\]\\([^()\\n]*\\)"),
    # server/bots/replies.py
    Row("server/bots/replies.py", "^[ \\t]*```"),
    # server/routes/docs.py
    Row(
        "server/routes/docs.py",
        "<(script|style)>(.*?)</\\1>",
        redos="reads the API-docs pages fastapi-offline ships (Swagger UI's and ReDoc's HTML), never outside text",
    ),
    # server/sessions.py
    Row("server/sessions.py", "[A-Za-z0-9_-]{24}\\.[0-9a-f]{32}"),
    # kbcli/terminal.py
    Row("kbcli/terminal.py", "(?<!\\s)\\s+((?:\\x1b\\[[0-9;]*m)*)$"),
    Row(
        "kbcli/terminal.py",
        "\\n\\s*\\n",
        redos="a false alarm: the run `\\s*` crosses ends at a newline it gives back (a match, after which the search "
        "resumes), or it is entered once, from the newline that starts it",
    ),
    Row("kbcli/terminal.py", "[^\\s\\[\\]()]+"),
    # ingest/upstream.py
    Row("ingest/upstream.py", "[ \\t]*[A-Za-z0-9_-]+[ \\t]*=", how="match"),
    Row("ingest/upstream.py", "[^=]*=[ \\t]*", how="match"),
    Row("ingest/upstream.py", "\\s+"),
    # kb/harvest/clean.py
    Row("kb/harvest/clean.py", "(?<![\\w`/@.])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))(?![\\w/])"),
    Row("kb/harvest/clean.py", "<"),
    Row("kb/harvest/clean.py", "</?[A-Za-z][A-Za-z0-9-]{0,30}(?:\\s[^<>]{0,2000})?/?>"),
    Row("kb/harvest/clean.py", "\\n{3,}"),
    # kb/harvest/drafts.py
    Row(
        "kb/harvest/drafts.py",
        "^\\s*(?:\\[[^\\]\\n]{1,40}\\]\\s*[:：]?\\s*|【[^】\\n]{1,40}】\\s*[:：]?\\s*|(?:question|bug|help|feature|q)\\s*[:：]\\s*)+",
    ),
    Row("kb/harvest/drafts.py", "https://github\\.com/([\\w.-]{1,100}/[\\w.-]{1,100})"),
    Row("kb/harvest/drafts.py", "https://github\\.com/[\\w.-]{1,100}/[\\w.-]{1,100}/pull/\\d{1,9}"),
    # kb/harvest/notes.py
    Row("kb/harvest/notes.py", "[\\u3400-\\u9fff\\uf900-\\ufaff]"),
    Row("kb/harvest/notes.py", "https?://\\S{1,500}"),
    Row("kb/harvest/notes.py", "@[\\w-]{1,39}"),
    Row("kb/harvest/notes.py", "[，：:]"),
    Row("kb/harvest/notes.py", "(?:[.!?;](?:\\s|$)|[。！？；\\n])+"),
    Row(
        "kb/harvest/notes.py",
        "\\bclosing\\b|^\\s*close[sd]?\\b|\\b(?:i'?ll|i will|we'?ll|we will|let me|let'?s|will|to|can|could|please|so) close\\b|\\bclose (?:this|the issue|it|now|for now|as|since|because)\\b|\\bre-?open\\b|\\bfeel free to (?:re-?open|ask|comment|open|reach|let|ping)\\b|\\b(?:as|is|was|marked|being) stale\\b|\\bstale (?:issue|thread)\\b|\\b(?:due to|for|of|after) inactivity\\b|\\b(?:lack of|no|without) (?:activity|response|further (?:activity|response|discussion))|\\bglad\\b|\\bhappy to (?:hear|help)\\b|\\bgreat to hear\\b|\\bgood to (?:hear|know)\\b|\\bseems? (?:like )?(?:the issue |this |it |that )?(?:is |has been |was |got )?(?:fixed|resolved|solved)\\b|\\bthanks? (?:you )?(?:so much |very much |a lot )?for (?:the |your )?(?:\\w{1,20} )?(?:report|feedback|flagging|confirm|update|letting|reaching|supports?|interest|attention|patience|recognition)|\\b(?:no|without) (?:reply|response|feedback) from\\b|\\bhaven'?t heard back\\b|\\bdid(?:n'?t| not) (?:reply|respond)\\b|关闭|关掉|关了|重新打开|重开|视为(?:已)?解决|(?:未|没有?)(?:回复|回应|反馈)|长时间(?:没有|未|无)|如果?还有(?:其他|其它)?问题|有问题(?:可以)?(?:再|随时)|欢迎(?:再)?(?:提|反馈)|不客气",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:will|'ll) be (?:added|supported|released|explained|implemented|fixed|open-?sourced|published|available)\\b|\\b(?:we|i)(?: will|'ll) (?:add|support|release|explain|implement|fix|open-?source|publish|look into|consider)\\b|\\b(?:to-?do|todo) list\\b|\\bstay tuned\\b|\\bcoming soon\\b|\\bin (?:the|a) (?:next|future|later|coming) (?:release|version|update|report)\\b|\\binvestigating\\b|\\b(?:i'?m|i am|we'?re|we are) (?:now |still |currently )?(?:looking into|working on|implement\\w{0,6}|investigating)\\b|\\bin the next (?:few |couple of )?(?:days?|weeks?|months?)\\b|\\bhop(?:e|ing) to (?:get|have|release|add|publish|put)\\b|\\b(?:we|i) (?:have not|haven't|havent) (?:yet )?(?:tried|tested|compared|checked)\\b|\\bnote to self\\b|\\b(?:in|on) (?:our|the) (?:plan|roadmap|to-?do)\\b|\\b(?:we|i)(?:'re| are| am|'m) working with\\b|加到需求列表|后续(?:会|将)|之后(?:会|将)|即将|敬请期待|计划中|(?:我们|我)(?:会|将)(?:尽快)?(?:进行)?(?:修复|支持|添加|更新|实现|开源|发布)|正在(?:排查|调查|修复|开发|实现)",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\bpushed (?:a |the |new |some )?(?:fix|fixes|changes|commits?|update)\\b|\\bno longer (?:persists|occurs|happens|reproduces|appears|exists|an issue|a problem)\\b|\\b(?:should|must) (?:be )?(?:fixed|work|resolved) now\\b|\\bhopefully (?:it |this )?(?:works|is fixed|fixed)\\b|\\b(?:is|has been|was|got) (?:now |already )?(?:fixed|supported)\\b|已(?:经)?(?:在.{0,60})?(?:修复|支持)|(?:都|已经?)?支持了|修复了|不再(?:出现|复现)",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:can|could) do nothing\\b|\\bnothing (?:we|i) can do\\b|\\bnothing (?:can|could) be done\\b|\\bwon'?t fix\\b|\\bnot (?:going|planning) to (?:fix|support|add|share|release)\\b|\\bno plans? (?:to|for)\\b|\\bdo(?:n'?t| not) plan to\\b|\\bout of (?:the )?scope\\b|\\b(?:not related to|unrelated to) (?:the development of )?(?:this|the|our) (?:repo|repository|project|codebase|library)\\b|\\b(?:ask|post|raise|open) (?:it |this |that )?(?:in|on) (?:the |our )?(?:discussions?|forum)\\b|不会修复|无法修复|暂不支持|不打算支持|(?:暂时|目前)?没有.{0,20}计划|超纲|超出(?:了)?(?:我们|我)?的?(?:能力|范围)|不属于.{0,6}(?:bug|范围)|(?:在|去|到)讨论区|(?:到|去|在)\\s{0,3}(?:这里|那里|那边|上游|官方)?\\s{0,3}提\\s{0,3}(?:个|一个)?\\s{0,3}issues?|移步.{0,30}?(?:反馈|提问|询问|咨询|提\\s{0,3}issue)|\\b(?:open|raise|file|report|post) (?:an |the |this |it |a new )?(?:issue )?(?:in|on|at|to|with) (?:the )?(?:\\S{1,40} )?(?:repo|repository|upstream|tracker)\\b",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\bclos(?:e|ing) (?:all|every|many|these|a (?:lot|number) of) (?:the |of the )?(?:old|older|open|stale|inactive|outdated|remaining|existing|previous)?\\s?(?:\\w{1,20} )?(?:issues|tickets|threads)\\b|批量关闭|统一关闭",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:solved|resolved|fixed it|figured (?:it )?out|works now|it works)\\b|解决了|已解决|搞定|跑通了",
    ),
    Row(
        "kb/harvest/notes.py",
        'f"(?<!not a )(?<!not )(?<!n\'t a )\\\\bdup(?:e|licate)?d? (?:of|to) {_REF}|\\\\bduplication of\\\\s{{0,3}}(?:#\\\\d|https?://)|\\\\bclos(?:e|ing|ed)\\\\b[^.\\\\n]{{0,40}}\\\\b(?:in favou?r of|because of|as (?:a )?dup(?:e|licate)?(?: of)?) {_REF}|\\\\bsame (?:issue|problem|question|bug) as {_REF}|(?<!not )\\\\b(?:is|as) a duplicate\\\\b|\\\\bduplicate (?:issue|question)\\\\b|\\\\bmerg(?:e|ed|ing) (?:this|it)(?: issue| thread)? (?:with|into) <?{_REF}|\\\\b(?:tracked|tracking|track (?:it|this)|continue (?:the discussion |this )?)(?:in|at|on|under) <?{_REF}|(?:合并到|移步(?:到)?)\\\\s{{0,3}}{_REF}|\\\\b(?:discussed|answered|addressed|covered|tracked) (?:here|in|at|under)\\\\s{{0,3}}:?\\\\s{{0,3}}<?{_REF}|与\\\\s{{0,3}}{_REF}\\\\s{{0,3}}重复|重复(?:了)?(?:的)?(?:问题|issue)|\\\\bduplicated?\\\\s{{0,3}}$"',
    ),
    Row(
        "kb/harvest/notes.py",
        "https://github\\.com/[\\w.-]{1,100}/[\\w.-]{1,100}/(?:pull|commit)/\\w{1,40}|#\\d{1,9}\\b",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:supported|implemented|fixed|merged|added|landed|resolved|done|released|addressed)\\b|支持|修复|合入|合并|已加|发布",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:thanks?|thx|ty|works? (?:now|for me|well|fine)|it works|(?:then|and) it works|solved|resolved|fixed it|that did it|got it|gotcha|appreciate|that'?s what i (?:want|need)(?:ed)?)\\b|谢谢|感谢|多谢|解决了|可以了|好了|成功了|明白了|懂了|搞定|跑通了|厉害|解决[^，。,.!?！？\\s]{1,12}问题了|问题(?:已经?)?解决了",
    ),
    Row(
        "kb/harvest/notes.py",
        "(?:no(?! problem| worries)\\b|nope\\b|not (?:that|this|the (?:issue|problem|cause|reason))\\b|that'?s not (?:it|the (?:issue|problem|cause|reason))\\b|(?:应该|好像|似乎)?(?:不是|并不是)(?:这个|那个)?(?:问题|原因)?|(?:加了|改了|试了|换了)(?:也|还是)一样)",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:i'?ll|i will|will|let me|going to|gonna) (?:try|test|check|look)\\b|\\b(?:i'?m|i am) (?:trying|testing|checking)\\b|我(?:先|再)?(?:看下|看看|试试|试一下|去试|再试|研究一下)|正在(?:尝试|试)|稍后(?:试|尝试)",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:error|exception|fails?|failed|failure|crash(?:es|ed)?|hangs?|oom|out of memory|traceback|still|another|new (?:issue|problem|error)|but now|now (?:i )?(?:get|got|see|have|meet))\\b|\\b(?:does|did|do)n'?t (?:work|help)\\b|\\bnot work(?:ing)?\\b|报错|错误|失败|还是|又出现|新的问题|另一个问题|不行|没用",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\bfollow-?up\\b|\\bbut now\\b|\\bnow,? (?:the \\w{1,20} |it |i )?(?:fails?|failed|crash(?:es|ed)?|throws?|hangs?|get|got)\\b|\\b(?:another|a new) (?:issue|problem|error|bug)\\b|又出现|又报错|新的问题|另一个问题|现在又|但是现在",
    ),
    Row(
        "kb/harvest/notes.py",
        "^\\s{0,5}[\\[【(]?\\s{0,3}(?:feature(?: request)?|feat|rfc|roadmap|proposal|model request|new model|功能请求|需求|新功能)\\s{0,3}[\\]】):：]|\\b(?:new|next|stable) (?:release|version)\\b|\\brelease request\\b|\\brequest (?:for )?(?:a )?(?:new )?(?:stable )?release\\b|\\btag a (?:new )?(?:stable )?release\\b|发布新版本|发新版|\\breleas(?:e|ing) (?:the |your |of )?(?:final |trained |pretrained |full )?(?:model )?(?:weights|checkpoints?|models?|code|datasets?)\\b|\\b(?:model |weights? |checkpoints? |code )release\\b|(?:啥|什么)时候(?:发布|开源)|何时(?:发布|开源)|是否(?:会)?开源|\\b(?:time-?line|eta)\\b.{0,30}?\\b(?:release|code|weights?|checkpoints?|models?)\\b",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:is|was) (?:this|it|that|the issue) (?:still|now|fixed|resolved|solved)\\b|\\bstill (?:an? )?(?:issue|problem)\\b|\\bhave you (?:resolved|solved|fixed)\\b|\\b(?:does|did) (?:it|this) still\\b|\\bany (?:update|progress)s?\\b|是否(?:已经)?解决|还有问题吗|解决了吗|还存在吗",
    ),
    Row(
        "kb/harvest/notes.py",
        "多少|怎么|怎样|如何|为什么|为啥|什么原因|哪里|哪个|是否|有没有|能不能|可不可以|(?:^|[.!;] )(?:how (?:do|does|can|should|to|much|many)|why (?:do|does|is|are)|is there|are there|can i|could i|should i|do i|does it)\\b",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\bby myself\\b|\\b(?:solved|fixed|resolved|figured out) (?:it |this |the (?:problem|issue) )?(?:myself|on my own)\\b|自己解决|自行解决|自己搞定|自己找到|自己弄好|https://github\\.com/[\\w.-]{1,100}/[\\w.-]{1,100}/(?:issues|pull|discussions)/\\d{1,9}|#\\d{2,9}\\b",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\banswer(?:ing)? my own question\\b|\\bi (?:found|figured out|worked out) (?:the|a) (?:solution|fix|way|cause)\\b|\\bi (?:solved|fixed) it (?:by|with)\\b|(?:我)?自己(?:来)?回答|自问自答|(?:我)?(?:自己)?找到了?(?:解决)?(?:办法|方法|原因)",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:that'?s|that is|this is|it'?s|is|are) (?:correct|right)\\b|\\bexactly\\b|\\bas (?:\\w{1,30} )?(?:said|mentioned|suggested|pointed out)\\b|说得对|说的对|是对的|正确|没错",
    ),
    Row(
        "kb/harvest/notes.py",
        "\\b(?:are there|is there|do you have|any) (?:any )?plans? (?:to|for|on)\\b|\\bwill you (?:support|add)\\b|\\bplease (?:add|support)\\b|\\bwould be (?:nice|great) (?:to|if you could) (?:add|support)\\b|\\bwhen (?:will|can|would) (?:\\S{1,30} ){1,6}be (?:supported|added|available|released)\\b|(?:是否|有没有)(?:有)?计划|(?:能否|可否|能不能|是否可以|[希期]望(?:能够?|可以)?)(?:支持|增加|添加)|[希期]望(?:能够?|可以)?提供|什么时候.{0,8}支持",
    ),
    # kb/harvest/replies.py
    Row(
        "kb/harvest/replies.py",
        "\\b(?:can|could|would) you(?: please)? (?:share|provide|post|open|paste|send|give|try|check|tell)\\b|\\bplease (?:share|provide|post|paste|send|open a new)\\b|能否提供|请提供|麻烦提供|可以提供一下|提供一?下(?!载)|\\blet (?:me|us) know (?:if|whether) (?:it|this|that) (?:works?|worked|helps?|helped|fix(?:es|ed)?|solves?|solved)\\b|\\b(?:submit|open|send|make|create) (?:a |an )?(?:pr|mr|pull request|merge request)\\b|欢迎.{0,6}(?:pr|PR)|提(?:个|一个)?\\s?(?:pr|PR)|\\bprs? (?:are|is) welcome\\b|\\bif you could (?:share|provide|post|paste|send|give)\\b|请(?:按照?.{0,20}?)?补充|麻烦(?:再)?补充",
    ),
    Row(
        "kb/harvest/replies.py",
        "\\bstill\\b.{0,40}\\b(?:not|doesn'?t|don'?t|fails?|error|wrong|same|broken|hangs?|crash)|\\bsame (?:problem|issue|error|thing)\\b|\\b(?:does|did)(?:n'?t| not) (?:work|help|fix|solve)\\b|\\bnot work(?:ing)?\\b|还是不行|还是有|仍然|依然|没用|不行",
    ),
    Row(
        "kb/harvest/replies.py",
        "(?:i have |i got |i had |i'?m having |i met |having )?(?:the )?same (?:problem|issue|error|thing|here)(?:,? too| here| as well)?[ .!,，。！~]{0,5}|me too[ .!~]{0,5}|\\+1|我也(?:是|一样|遇到了?(?:同样的|这个|相同的)?(?:问题)?)[ 。！!~]{0,5}|同问|一样的问题",
    ),
    # kb/harvest/rules.py
    Row("kb/harvest/rules.py", "\\b(?:use|using)\\b|使用|请用|可以用|参考"),
    Row(
        "kb/harvest/rules.py",
        "https?://(?!github\\.com/[\\w.-]{1,100}/[\\w.-]{1,100}/(?:pull|issues|commit|discussions)/)(?!(?:private-)?user-images\\.githubusercontent\\.com|github\\.com/user-attachments/)\\S{1,500}",
    ),
    # server/channels/github/job_summary.py
    Row("server/channels/github/job_summary.py", "`+"),
    # server/settings.py
    Row("server/settings.py", "[\\w.-]{1,100}/[\\w.-]{1,100}"),
    # trackers/github/rest.py
    Row("trackers/github/rest.py", '<([^<>\\s]{1,2000})>;\\s*rel="next"', chars=8_000),
    # trackers/github/session.py
    Row("trackers/github/session.py", "[\\w.-]{1,100}/[\\w.-]{1,100}"),
]
