"""The question a GitHub issue asks: its title, then what its body asks, without the issue template around it.

An issue body is mostly not the question: a template's headings and checklists, an issue form's `_No response_`,
HTML comments with instructions, an environment list (`- torch: 2.1`, `Python version: 3.10`, a `pip list` or
`collect_env` dump) and a pasted stack trace. `question_of` drops the first ones, condenses a trace to its error
lines (`kb.stacktrace.reduce_trace`), and keeps the rest: the words the asker wrote.

It takes time linear in the body whatever is sent: the body is cut to `BODY_CHARS` first (GitHub's own limit, so
that a long trace keeps its last line, the error raised), HTML comments are found with `str.find`, each line is
read up to `LINE_CHARS`, and the few patterns run on one bounded line at a time. The question is cut to
`QUESTION_CHARS`, the search's limit on a query (KB_MAX_QUERY_CHARS' default), so the search takes it whole.
"""

from __future__ import annotations

import re

from .stacktrace import looks_like_trace, reduce_trace

__all__ = ["question_of", "BODY_CHARS", "QUESTION_CHARS", "LINE_CHARS"]

BODY_CHARS = 65_536  # characters of an issue's body read: GitHub's limit
QUESTION_CHARS = 2_000  # of the question: the search's default limit on a query
LINE_CHARS = QUESTION_CHARS  # characters of each line read
TITLE_CHARS = 256  # GitHub's limit on an issue's title

# A section under a heading naming these holds the asker's environment, not the question.
_ENVIRONMENT_HEADINGS = ("environment", "system info", "versions", "version info", "环境", "版本", "系统信息")
# Words that make a `key: value` line part of an environment list ("Python version: 3.10", "- torch: 2.1").
_ENVIRONMENT_WORDS = frozenset(
    "python torch pytorch cuda cudnn nccl os gpu gpus driver version versions platform transformers vllm sglang"
    " megatron deepspeed ray nvidia gcc libc cpu cpus memory ram hardware system kernel ubuntu centos conda pip"
    " numpy flash_attn flash-attn accelerate peft trl slime roll chatlearn build debug rocm hip cmake clang"
    " architecture model".split()
)
_ENVIRONMENT_VALUES = frozenset(("true", "false", "n/a", "none", "yes", "no", "unknown"))
_WORD = re.compile(r"[a-z][a-z0-9_-]*")  # a word of a lower-cased key
_VERSION = re.compile(r"v?\d+(?:\.[\w+-]+)+")  # 2.1, 12.1.105, 0.4.0.post1, 2.1.0+cu121
# Blank lines collapsed before the body is read line by line: a body of 65,536 line breaks is two lines.
_BLANK_LINE = re.compile(r"\n[ \t]+(?=\n)")  # a line of spaces; a run of spaces is met once, at its line break
_BLANK_LINES = re.compile(r"\n{3,}")
_DUMP_STARTS = ("collecting environment information", "pytorch version:", "package ", "versions of relevant")


def question_of(title: str, body: str, limit: int = QUESTION_CHARS) -> str:
    """The issue's title and its body's question, as one text of at most `limit` characters."""
    title = " ".join(title[:TITLE_CHARS].split())
    asked = _asked(body[:BODY_CHARS])
    return f"{title}\n\n{asked}".strip()[:limit].strip()


def _asked(body: str) -> str:
    """What the body asks: its blocks kept, reduced or dropped, blank lines collapsed."""
    text = _BLANK_LINES.sub("\n\n", _BLANK_LINE.sub("\n", _without_comments(body).replace("\r\n", "\n")))
    lines = [line[:LINE_CHARS].rstrip() for line in text.splitlines()]
    kept: list[str] = []
    for block, fenced in _blocks(lines):
        kept.extend(_kept(block, fenced))
        kept.append("")
    out: list[str] = []
    for line in kept:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _without_comments(text: str) -> str:
    """`text` without its HTML comments; an unclosed `<!--` hides the rest, as it does on GitHub."""
    pieces = []
    at = 0
    while (start := text.find("<!--", at)) != -1:
        pieces.append(text[at:start])
        end = text.find("-->", start + 4)
        if end == -1:
            return "".join(pieces)
        at = end + 3
    pieces.append(text[at:])
    return "".join(pieces)


def _blocks(lines: list[str]) -> list[tuple[list[str], bool]]:
    """The body's blocks, in order: each fenced code block's lines (fenced), each paragraph's; a section under an
    environment heading is left out, and a heading ends a paragraph."""
    blocks: list[tuple[list[str], bool]] = []
    paragraph: list[str] = []
    fence = ""  # the open fence's marker, "" outside one
    code: list[str] = []
    environment = False  # under a heading that names the environment
    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
                if not environment:
                    blocks.append((code, True))
                code = []
            else:
                code.append(line)
            continue
        if stripped.startswith(("```", "~~~")):
            blocks.append((paragraph, False))
            paragraph, fence = [], stripped[:3]
            continue
        heading = _heading(line)
        if heading is not None:
            blocks.append((paragraph, False))
            paragraph = []
            environment = any(word in heading.lower() for word in _ENVIRONMENT_HEADINGS)
            continue
        if environment:
            continue
        if not stripped:
            blocks.append((paragraph, False))
            paragraph = []
        else:
            paragraph.append(line)
    if fence and not environment:
        blocks.append((code, True))
    blocks.append((paragraph, False))
    return [(block, fenced) for block, fenced in blocks if block]


def _heading(line: str) -> str | None:
    """A Markdown heading's text ("### Describe the bug"), or a line that is only bold ("**Environment**:"),
    or None for any other line."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) <= 3 and stripped.startswith("#"):
        hashes = len(stripped) - len(stripped.lstrip("#"))
        rest = stripped[hashes:]
        if hashes <= 6 and (not rest or rest[0] in " \t"):
            return rest.strip(" \t#")
    bold = line.strip().rstrip(":：").strip()
    if len(bold) > 4 and bold.startswith("**") and bold.endswith("**") and "**" not in bold[2:-2]:
        return bold[2:-2]
    return None


def _kept(block: list[str], fenced: bool) -> list[str]:
    """What is kept of one block: a trace reduced to its error lines; an environment list or dump dropped;
    a paragraph without its checkboxes, empty form fields and environment lines."""
    text = "\n".join(block)
    if looks_like_trace(text):
        return reduce_trace(text).splitlines()
    lines = [line for line in block if line.strip()]
    if fenced:
        dump = lines and lines[0].strip().lower().startswith(_DUMP_STARTS)
        listed = sum(_environment_line(line) for line in lines)
        return [] if dump or listed * 2 >= len(lines) else lines
    return [line for line in lines if not _boilerplate(line) and not _environment_line(line)]


def _boilerplate(line: str) -> bool:
    """A checklist item ("- [x] I have searched the existing issues") or an issue form's empty field."""
    stripped = line.strip()
    if stripped == "_No response_":
        return True
    return stripped[:1] in "-*" and stripped[1:2] in " \t" and stripped[2:].lstrip()[:3] in ("[ ]", "[x]", "[X]")


def _environment_line(line: str) -> bool:
    """A line of an environment list: `- torch: 2.1`, `Python version: 3.10.12`, `Is CUDA available: True`,
    `[pip3] numpy==1.26.4`, `transformers==4.40.0`, a `pip list` row (`vllm  0.4.2`)."""
    stripped = line.strip().lstrip("-*+").strip()
    if not stripped or len(stripped) > 160 or stripped.endswith(("?", "？")):
        return False
    if stripped.startswith(("[pip", "[conda]")) or set(stripped) <= set("-= \t"):
        return True
    words = stripped.split()
    if len(words) == 1 and "==" in stripped:
        return True
    if len(words) in (2, 3) and ":" not in stripped and _VERSION.fullmatch(words[1]):
        return True  # a `pip list` or `conda list` row
    key, colon, value = stripped.partition(":")
    if not colon or not value.strip() or len(key) > 40 or len(value) > 100 or len(key.split()) > 5:
        return False
    key = key.lower()
    if "error" in key or "exception" in key or "warning" in key:
        return False
    value = value.strip().lower()
    return (
        bool(_ENVIRONMENT_WORDS.intersection(_WORD.findall(key)))
        or value in _ENVIRONMENT_VALUES
        or bool(_VERSION.match(value))
    )
