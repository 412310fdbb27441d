"""The question a GitHub issue asks: its title, then what its body asks, without the issue template around it.

An issue body is mostly not the question: a template's headings and checklists, an issue form's `_No response_`,
HTML comments with instructions, an environment section or list (`### System Info`, `- torch: 2.1`,
`Python version: 3.10`, a `pip list`, `collect_env` or `nvcc --version` dump), screenshots and links, a pasted
stack trace or log, and code (a launch script, a notebook cell, a config). `question_of` drops the first ones,
condenses a trace or log to its error lines (`kb.stacktrace.error_lines`, Python's and IPython's alike; a log with
none is code), leaves code out (or keeps its first `CODE_WORDS` flags and identifiers, when that is set), and
keeps the rest: the words the asker wrote, without image markup and URLs (a link keeps its text).

Code is code however it is written: in a fence of backticks or tildes (indented or not, with or without a
language), in a fence of middle dots (`···python`), in single backticks over several lines, or pasted with no
fence at all (lines of a trace or a log, a command continued with `\\`, indented code, a JSON config). An environment section runs to the next heading of its level or
higher: a bold line inside `### System Info` (`**nvcc --version Output:**`) is part of it. A `name==version`
line keeps the package's name, the one word that may tie the issue to a framework; a list of them is a dump.

It takes time linear in the body whatever is sent: the body is cut to `BODY_CHARS` first (GitHub's own limit, so
that a long trace keeps its last line, the error raised), HTML comments are found with `str.find`, each line is
read up to `LINE_CHARS`, and the few patterns run on one bounded line at a time. The question is cut to
`QUESTION_CHARS`, the search's limit on a query (KB_MAX_QUERY_CHARS' default), so the search takes it whole.
"""

from __future__ import annotations

import re

from .stacktrace import error_lines, looks_like_trace, starts_trace

__all__ = ["question_of", "BODY_CHARS", "QUESTION_CHARS", "LINE_CHARS", "CODE_WORDS"]

BODY_CHARS = 65_536  # characters of an issue's body read: GitHub's limit
QUESTION_CHARS = 2_000  # of the question: the search's default limit on a query
LINE_CHARS = QUESTION_CHARS  # characters of each line read
TITLE_CHARS = 256  # GitHub's limit on an issue's title
# Names kept of a code block that is neither a trace nor an environment dump. None: on whole issues from the
# trackers, dropping such code put the right entry first as often as keeping 6, 12 or 24 of its names, with fewer
# words in the question and a surer confidence (docs/channels.md).
CODE_WORDS = 0
PINNED_NAMES = 3  # `name==version` lines a paragraph keeps the names of; more are a dump
BOLD_LEVEL = 7  # a bold line is a heading under any Markdown one

# A section under a heading naming these holds the asker's environment, not the question.
_ENVIRONMENT_HEADINGS = (
    "environment",
    "system info",
    "versions",
    "version info",
    "ds_report",
    "环境",
    "版本",
    "系统信息",
)
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
# Lines of an `nvcc --version` banner and of a shell's environment: part of the asker's environment.
_BANNER_STARTS = (
    "nvcc: nvidia",
    "copyright (c)",
    "built on ",
    "cuda compilation tools",
    "build cuda_",
    "export path=",
    "export ld_library_path=",
    "export cuda_home=",
    "export cuda_visible_devices=",
)
# How the lines of a log begin when its levels are bracketed with more (`[INFO|tokenization_utils_base.py:2106]`).
_LOG_STARTS = tuple(f"[{level}|" for level in ("INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL"))
# Openings of a fence: backticks and tildes as Markdown has them, and middle dots as some editors write them.
_FENCES = ("```", "~~~", "···")
# Markup that is not words: an image (`![shot](url)`, `<img src=...>`), a link's target (`[text](url)` keeps its
# text), a bare URL. Each line is at most LINE_CHARS; no class can take the character that ends the part before it.
_IMAGE = re.compile(r"!\[[^\[\]\n]*\]\([^()\s]*\)|<img\b[^<>]*>?", re.I)
_LINK = re.compile(r"\[([^\[\]\n]*)\]\([^()\s]*\)")
_URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+")
# The names in a code block that identify it: a flag (`--colocate`, `--lr_scheduler_type`, not the `-neox` of
# `gpt-neox`) or an identifier with an inner capital, underscore or dot (`BitsAndBytesConfig`, `load_in_4bit`).
_NAME = re.compile(r"(?<![\w/.-])--?[A-Za-z][\w-]*|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


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
    """The body's blocks, in order: each code block's lines (fenced: in a fence, or in single backticks over
    several lines), each paragraph's; a section under an environment heading is left out up to the next heading
    of its level or higher, and a heading ends a paragraph."""
    blocks: list[tuple[list[str], bool]] = []
    paragraph: list[str] = []
    fence = ""  # the open fence's marker, "" outside one
    code: list[str] = []
    environment = 0  # the level of the environment heading the lines are under; 0: none
    closes = _tick_closes(lines)
    ticked = -1  # the line that closes an open span of single backticks; -1: none open
    for at, line in enumerate(lines):
        stripped = line.strip()
        if ticked >= 0:
            code.append(line)
            if at == ticked:
                ticked = -1
                if not environment:
                    blocks.append((_untick(code), True))
                code = []
            continue
        if fence:
            if stripped.startswith(fence):
                fence = ""
                if not environment:
                    blocks.append((code, True))
                code = []
            else:
                code.append(line)
            continue
        if stripped.startswith(_FENCES):
            blocks.append((paragraph, False))
            paragraph, fence = [], stripped[:3]
            continue
        if at in closes:
            blocks.append((paragraph, False))
            paragraph, code, ticked = [], [line], closes[at]
            continue
        heading = _heading(line)
        if heading is not None:
            level, words = heading
            blocks.append((paragraph, False))
            paragraph = []
            if environment and level > environment:
                continue  # a sub-heading of the environment section: still in it
            named = any(word in words.lower() for word in _ENVIRONMENT_HEADINGS)
            environment = level if named else 0
            continue
        if environment:
            continue
        if not stripped:
            blocks.append((paragraph, False))
            paragraph = []
        else:
            paragraph.append(line)
    if (fence or ticked >= 0) and not environment:
        blocks.append((_untick(code) if ticked >= 0 else code, True))
    blocks.append((paragraph, False))
    return [(block, fenced) for block, fenced in blocks if block]


def _tick_closes(lines: list[str]) -> dict[int, int]:
    """Spans of single backticks over several lines, as {the line that opens one: the line that closes it}: a
    line that starts with one backtick it leaves open, up to the next line that ends with one it leaves open.
    Read once, forward: a span never closed opens nothing (and no later one could close)."""
    spans: dict[int, int] = {}
    opened = -1
    for at, line in enumerate(lines):
        stripped = line.strip()
        odd = stripped.count("`") % 2 == 1
        if opened < 0:
            if odd and stripped.startswith("`") and not stripped.startswith("``"):
                opened = at
        elif odd and stripped.endswith("`") and not stripped.endswith("``"):
            spans[opened] = at
            opened = -1
    return spans


def _untick(code: list[str]) -> list[str]:
    """A span of single backticks' lines without the backticks that open and close it."""
    if not code:
        return code
    first, last = code[0].replace("`", "", 1), code[-1]
    if len(code) == 1:
        return [first[: first.rfind("`")]] if "`" in first else [first]
    return [first, *code[1:-1], last[: last.rfind("`")]]


def _heading(line: str) -> tuple[int, str] | None:
    """A Markdown heading's level and text ("### Describe the bug": 3), a line that is only bold
    ("**Environment**:", BOLD_LEVEL), or None for any other line."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) <= 3 and stripped.startswith("#"):
        hashes = len(stripped) - len(stripped.lstrip("#"))
        rest = stripped[hashes:]
        if hashes <= 6 and (not rest or rest[0] in " \t"):
            return hashes, rest.strip(" \t#")
    bold = line.strip().rstrip(":：").strip()
    if len(bold) > 4 and bold.startswith("**") and bold.endswith("**") and "**" not in bold[2:-2]:
        return BOLD_LEVEL, bold[2:-2]
    return None


def _kept(block: list[str], fenced: bool) -> list[str]:
    """What is kept of one block: a trace or log reduced to its error lines; an environment list or dump
    dropped; other code (fenced, or a paragraph mostly of code lines) left out or reduced to its names
    (`_code_names`); a paragraph without its checkboxes, empty form fields, environment lines and markup, and with
    any trace, log or code that follows its words reduced."""
    text = "\n".join(block)
    if looks_like_trace(text):
        start = 0 if fenced else next((at for at, line in enumerate(block) if _log_start(line)), 0)
        if not (start and looks_like_trace("\n".join(block[start:]))):
            start = 0
        return _words(block[:start]) + _trace(block[start:])
    lines = [line for line in block if line.strip()]
    if fenced:
        dump = lines and lines[0].strip().lower().startswith(_DUMP_STARTS)
        listed = sum(_environment_line(line) for line in lines)
        return [] if dump or listed * 2 >= len(lines) else _code_names(lines)
    coded = [_code_line(line) for line in lines]
    if len(lines) >= 3 and sum(coded) * 3 >= len(lines) * 2:  # a command or config pasted without a fence
        start = coded.index(True)
        return _words(lines[:start]) + _code_names(lines[start:])
    return _words(lines)


def _trace(lines: list[str]) -> list[str]:
    """A trace's or a log's error lines; a log with none is code."""
    reduced = error_lines("\n".join(lines))
    return reduced.splitlines() if reduced else _code_names(lines)


def _log_start(line: str) -> bool:
    """A line a trace or a log may start with: a `Traceback`, a frame, a prefixed or timestamped line."""
    stripped = line.strip()
    return starts_trace(line) or stripped.startswith(_LOG_STARTS) or _timestamped(stripped)


def _timestamped(stripped: str) -> bool:
    """A log line that starts with its time: `[2024-07-02 06:42:39,946] ...`, `07/02/2024 06:42:40 - INFO - ...`."""
    if stripped.startswith("[") and stripped[1:5].isdigit() and stripped[5:6] in "-/":
        return True
    return stripped[:2].isdigit() and stripped[2:3] in "/-" and " - " in stripped[:40]


def _code_line(line: str) -> bool:
    """A line of a command, a config, code or a log pasted without a fence: continued (`--stage pt \\`), a flag, a
    JSON key (`"fp16": {`), only brackets, indented code (`    x = f(y)`, `    if ok:`), or a log line
    (`[INFO|loader.py:12] ...`, `07/02/2024 06:42:40 - INFO - ...`)."""
    stripped = line.strip()
    listed = stripped.startswith(("- ", "* ", "+ ")) or stripped.split(". ", 1)[0].isdigit()
    indented = len(line) - len(line.lstrip(" ")) >= 4 and not listed  # a nested list item is prose
    return (
        stripped.endswith("\\")
        or stripped.startswith(_LOG_STARTS)
        or _timestamped(stripped)
        or (indented and (stripped.endswith((":", "(", ")", ",")) or " = " in stripped))
        or stripped.startswith("--")
        or (stripped.startswith('"') and '":' in stripped)
        or (bool(stripped) and set(stripped) <= set("{}[](),; "))
    )


def _words(lines: list[str]) -> list[str]:
    """A paragraph's lines as the asker wrote them, less checkboxes, empty form fields, environment lines and
    markup; a `name==version` line keeps its name, unless the paragraph lists more than PINNED_NAMES of them."""
    pinned = [_pinned(line) for line in lines]
    names = sum(bool(name) for name in pinned)
    kept = []
    for line, name in zip(lines, pinned):
        if name:
            if names <= PINNED_NAMES:
                kept.append(name)
            continue
        if _boilerplate(line) or _environment_line(line):
            continue
        cleaned = _URL.sub(" ", _LINK.sub(r"\1", _IMAGE.sub(" ", line)))
        if cleaned != line:  # markup taken out: the spaces it leaves closed up
            cleaned = " ".join(cleaned.split())
        if cleaned.strip():
            kept.append(cleaned)
    return kept


def _pinned(line: str) -> str:
    """The package's name of a `name==version` line (`deepspeed==0.12.6`, `torch == 2.4.0`); "" for other lines."""
    name, equals, version = line.strip().lstrip("-*+").partition("==")
    name, version = name.strip(), version.strip()
    if not equals or not name or " " in name or " " in version or not _VERSION.match(version):
        return ""
    return name if _WORD.fullmatch(name.lower()) else ""


def _code_names(lines: list[str]) -> list[str]:
    """What identifies a code block that is neither a trace nor a dump: its first CODE_WORDS flags and
    identifiers (each once, in order), as one line; none when it has none."""
    if CODE_WORDS <= 0:
        return []
    names: dict[str, None] = {}
    for line in lines:
        unquoted = " ".join(line.split('"')[::2])  # a string's words are values, not names
        for name in _NAME.findall(" ".join(unquoted.split("'")[::2])):
            if len(names) >= CODE_WORDS:
                break
            if _names_something(name):
                names.setdefault(name, None)
    return [" ".join(names)] if names else []


def _names_something(name: str) -> bool:
    """A flag, or an identifier made of parts (an inner capital, an underscore, a dot): a name the code's author
    chose or the framework's API, not a keyword or a plain word."""
    if name.startswith("-"):
        return len(name.lstrip("-")) > 1
    if name.isupper() or len(name) < 4:
        return False
    inner = name[1:]
    return "_" in inner.strip("_") or "." in inner or any(c.isupper() for c in inner)


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
    if stripped.lower().startswith(_BANNER_STARTS):
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
