"""Hyperlinks in an answer (Markdown): relative targets made absolute, bare URLs made into autolinks,
lines that only link to the page in other languages dropped. And the link an entry gives to where it came from:
`web_link` keeps an http(s) URL only, `tracker_link` a thread's on the tracker's own host only.

Code (fences, indented blocks, code spans) is never touched. The markdown-it tokens
say which lines are code; within the other lines a few small patterns find inline
links, autolinks and code spans.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["absolutize_links", "drop_language_links", "code_lines", "web_link", "tracker_link", "TRACKER_HOSTS"]

TRACKER_HOSTS = frozenset({"github.com"})  # where the threads harvested from the tracker live

_md = MarkdownIt("commonmark")

_LANGUAGE_NAMES = {
    "english", "chinese", "中文", "简体中文", "繁體中文", "繁体中文", "英文", "english version",
    "中文版", "日本語", "japanese", "한국어", "korean", "en", "zh", "zh-cn",
}  # fmt: skip

_BACKTICKS = re.compile(r"`+")  # a code span opens and closes with runs of backticks of one length
# A pointy-bracket destination ends at the next `<` (as in CommonMark), so an unclosed `[](<` is read up to the next
# one, not to the end of its line once per copy.
_INLINE_LINK = re.compile(r"(!?\[[^\[\]\n]*\]\()(\s*)(<[^<>\n]*+>|[^\s()<>]+)")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
_REF_DEFINITION = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)")
# A bare URL is ASCII: it ends at whitespace, at the first CJK or full-width
# character (`见（https://a.b/c）`, `https://a.b/c 工具`), or at `<`, `>`, quotes, backticks.
_BARE_URL = re.compile(r"https?://[!#-&(-;=?-_a-~]+")
_TRAILING = ".,;:!?'\"*"


def web_link(url: str) -> str:
    """`url` when a page may link it: an absolute http(s) URL with a host, no credentials and nothing a browser
    would strip or read otherwise (whitespace, control characters, backslashes, quotes); "" for anything else,
    a `javascript:` or `data:` URL among them."""
    if not url or not url.isprintable() or any(ch in url for ch in " \\\"'<>`"):
        return ""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.username or port:
        return ""
    return url


def tracker_link(url: str, hosts: frozenset[str] = TRACKER_HOSTS) -> str:
    """`url` when it is a thread on the tracker: an http(s) link (`web_link`) to the tracker's own host
    (github.com, for GitHub's threads); "" for anything else, however it came in (a file of threads, an API)."""
    url = web_link(url)
    return url if url and urlsplit(url).hostname in hosts else ""


def code_lines(markdown: str) -> set[int]:
    """0-based numbers of the lines inside fenced or indented code blocks (fences included)."""
    lines: set[int] = set()
    for token in _md.parse(markdown):
        if token.type in ("fence", "code_block", "html_block") and token.map:
            lines.update(range(*token.map))
    return lines


def _is_language_links(inline: Token) -> bool:
    """A paragraph of links to the page in other languages, e.g. `[English](../en/qa.md)`."""
    links, inside = 0, False
    texts: list[str] = []
    for child in inline.children or []:
        if child.type == "link_open":
            links, inside, texts = links + 1, True, []
        elif child.type == "link_close":
            inside = False
            if "".join(texts).strip().lower() not in _LANGUAGE_NAMES:
                return False
        elif child.type == "text" and inside:
            texts.append(child.content)
        elif child.type == "text" and child.content.strip(" |/·•-"):
            return False
        elif child.type not in ("text", "softbreak"):
            return False
    return links > 0


def drop_language_links(markdown: str) -> str:
    """`markdown` without navigation paragraphs that only link to other-language pages."""
    tokens = _md.parse(markdown)
    drop: set[int] = set()
    for i, token in enumerate(tokens):
        if token.type == "paragraph_open" and token.map and _is_language_links(tokens[i + 1]):
            drop.update(range(*token.map))
    if not drop:
        return markdown
    kept = [line for number, line in enumerate(markdown.split("\n")) if number not in drop]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")


def _resolve(target: str, base_url: str) -> str:
    wrapped = target.startswith("<") and target.endswith(">")
    url = target[1:-1] if wrapped else target
    if not base_url or not url or url.startswith("#") or urlsplit(url).scheme:
        return target
    url = urljoin(base_url, url)
    return f"<{url}>" if wrapped else url


def _trim_url(url: str) -> str:
    while url and url[-1] in _TRAILING:
        url = url[:-1]
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1]
    return url


def _wrap_bare_urls(text: str) -> str:
    def wrap(match: re.Match[str]) -> str:
        start = match.start()
        if start and text[start - 1] == "<":  # already an autolink
            return match.group(0)
        url = _trim_url(match.group(0))
        return f"<{url}>{match.group(0)[len(url) :]}"

    return _BARE_URL.sub(wrap, text)


def _prose(text: str, base_url: str) -> str:
    """Rewrite links in text that holds no code spans."""
    out: list[str] = []
    pos = 0
    spans = sorted(
        [(m.start(), m.end(), "link", m) for m in _INLINE_LINK.finditer(text)]
        + [(m.start(), m.end(), "auto", m) for m in _AUTOLINK.finditer(text)]
    )
    for start, end, kind, match in spans:
        if start < pos:
            continue
        out.append(_wrap_bare_urls(text[pos:start]))
        if kind == "link":
            opener, space, target = match.groups()
            out.append(opener + space + _resolve(target, base_url))
        else:
            out.append(match.group(0))
        pos = end
    out.append(_wrap_bare_urls(text[pos:]))
    return "".join(out)


def _code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each code span of a line, as CommonMark reads them: a run of backticks up to the next run of
    the same length (a run with none after it is only backticks). Linear in the line, whatever its backticks."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    following = [-1] * len(runs)  # the index of the next run of the same length
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        following[i], last[length] = last.get(length, -1), i
    spans, i = [], 0
    while i < len(runs):
        if following[i] == -1:
            i += 1
            continue
        spans.append((runs[i][0], runs[following[i]][1]))
        i = following[i] + 1
    return spans


def _line(line: str, base_url: str) -> str:
    definition = _REF_DEFINITION.match(line)
    if definition:
        return definition.group(1) + _resolve(definition.group(2), base_url)
    out: list[str] = []
    pos = 0
    for start, end in _code_spans(line):
        out.append(_prose(line[pos:start], base_url))
        out.append(line[start:end])
        pos = end
    out.append(_prose(line[pos:], base_url))
    return "".join(out)


def absolutize_links(markdown: str, base_url: str) -> str:
    """`markdown` with relative link targets resolved against `base_url` and bare URLs
    wrapped as `<https://...>` autolinks. An empty `base_url` leaves relative links be."""
    code = code_lines(markdown)
    lines = markdown.split("\n")
    return "\n".join(line if number in code else _line(line, base_url) for number, line in enumerate(lines))
