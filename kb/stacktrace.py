"""Pasted stack traces and logs, reduced to what identifies the error.

A trace is mostly noise for search: ranks, pids, timestamps, addresses, paths and line
numbers. What identifies it is the exception type and message and the functions of the
framework it passed through. `reduce_trace` keeps those; other text passes unchanged.

A trace is taken up to `MAX_PASTE_CHARS` long and reduced before any limit on a query's
length is applied (`fits`), so its last line, the exception raised, is never cut off. A
trace pasted into a one-line search box arrives with its line breaks taken out; they are
put back before each frame, each `Traceback` and each exception.

Reducing takes time linear in the text, whatever is pasted: each line is read up to
`LINE_CHARS`, and no pattern has two quantifiers that can take the same characters (a run
of dots, spaces or brackets would make such a pattern backtrack over it once per character).
"""

from __future__ import annotations

import re

__all__ = ["MAX_PASTE_CHARS", "looks_like_trace", "reduce_trace", "fits", "too_long"]

MAX_PASTE_CHARS = 50_000  # characters of a pasted trace or log taken, before it is reduced
LINE_CHARS = 1_000  # characters of each line read: a frame, an exception and its first words fit

FRAMEWORKS = (
    "chatlearn",
    "roll",
    "slime",
    "megatron",
    "deepspeed",
    "vllm",
    "sglang",
    "ray",
    "transformer_engine",
    "flash_attn",
    "fastchat",
    "peft",
    "bitsandbytes",
    "mcore_adapter",
    "transformers",
    "torch",
)

# Words kept of each error line: a query is embedded from its first 64 model tokens
# (kb/embedding.py), and the framework's frames come after the errors.
MESSAGE_WORDS = 12
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>[\w<>.]+)')
# An exception's line: its dotted type, then its message. The type's last part must name an
# error (`_ERROR_NAME`) after its first letter, checked apart: in one pattern, `\w*Error\w*` backtracks on a long name.
_EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?P<name>[A-Z]\w*))(?::\s*(?P<msg>.*))?$")
_ERROR_NAME = re.compile(r"Error|Exception|Exit|Interrupt|Failed|Warning|Timeout")
_PREFIX = re.compile(
    r"^(?:\s*(?:\[rank\d+\]:?|\((?=\w*(?:pid|Worker|Actor))[^)]*\)|\d{4}-\d\d-\d\d[ T][\d:.,]+|"
    r"\[?(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\]?:?|\[[\d:.\- ]+\]))+\s*"
)
_NOISE = [
    (re.compile(r"0x[0-9a-fA-F]+"), " "),  # addresses
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.\-]+){2,}/?"), " "),  # paths
    (re.compile(r"\b(?:pid|rank|ip|node)[=:]\s*\S+", re.I), " "),
    (re.compile(r"\b\d+(?:\.\d+){3}(?::\d+)?\b"), " "),  # ip addresses
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])"), " "),  # bare numbers
]


# Where a line began in a trace whose line breaks a one-line box took out.
_LINE_STARTS = re.compile(
    r"(?<!\s)\s*(?=Traceback \(most recent call last\)|File \"[^\"]+\", line \d+, in |\[rank\d+\]"
    r"|(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s)"
    r"|(?<=, in )(?<![\w.])([\w<>.]+)\s+"  # a frame's function, then its code
)


def _unflattened(text: str) -> str:
    """A trace that arrived on one line, with its line breaks back; any other text unchanged."""
    if "\n" in text or not ("Traceback (most recent call last)" in text or text.count('File "') >= 2):
        return text
    lines = _lines(_LINE_STARTS.sub(lambda m: f"{m.group(1)}\n" if m.group(1) else "\n", text))
    return "\n".join(line for line in lines if _strip_prefix(line))


def _exception(line: str) -> re.Match[str] | None:
    """The match of an exception's line ("torch.OutOfMemoryError: CUDA out of memory."), or None."""
    match = _EXCEPTION.match(line)
    return match if match and _ERROR_NAME.search(match.group("name"), 1) else None  # after its first letter


def _lines(text: str) -> list[str]:
    """The lines of `text`, each up to LINE_CHARS."""
    return [line[:LINE_CHARS] for line in text.splitlines()]


def fits(text: str, limit: int) -> bool:
    """Whether `text` may be searched under a limit of `limit` characters: it is that short, or it is a
    trace of at most MAX_PASTE_CHARS whose reduction is."""
    if len(text) <= limit:
        return True
    return len(text) <= MAX_PASTE_CHARS and looks_like_trace(text) and len(reduce_trace(text)) <= limit


def too_long(what: str, length: int, limit: int) -> str:
    """The message for a `what` (query, message, question) that does not `fit`."""
    longest = f" (a pasted stack trace: {MAX_PASTE_CHARS})" if length > MAX_PASTE_CHARS else ""
    return f"the {what} is {length} characters; the limit is {limit}{longest}"


def looks_like_trace(text: str) -> bool:
    text = _unflattened(text)
    lines = _lines(text.strip())
    if len(lines) < 2:
        return False
    if "Traceback (most recent call last)" in text:
        return True
    frames = sum(bool(_FRAME.match(line)) for line in lines)
    prefixed = sum(bool((m := _PREFIX.match(line)) and m.group()) for line in lines)
    return frames >= 1 or prefixed >= 2


def _strip_prefix(line: str) -> str:
    return _PREFIX.sub("", line, count=1).strip()


def _denoise(text: str) -> str:
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    for _ in range(2):  # what is left of torch.Size([50304, 4096])
        text = _EMPTIED.sub("", text)
    return _SPACES.sub(" ", text).strip()


_EMPTIED = re.compile(r"[(\[][\s,]*[)\]]")  # brackets left with only commas and spaces in them
_SPACES = re.compile(r"\s+")
_ERROR_WORDS = re.compile(r"error|exception|failed|assert|timeout|mismatch", re.I)


def _first_words(line: str, limit: int = MESSAGE_WORDS) -> str:
    """An error line's start: its type and the first words of its message ("CUDA out of
    memory."), not the sizes and counts after them, so the frames fit what the model reads."""
    words = line.split()
    return " ".join(words[:limit])


def reduce_trace(text: str) -> str:
    """The exception lines and the framework's frames of a trace; other text unchanged."""
    if not looks_like_trace(text):
        return text
    text = _unflattened(text)
    exceptions: list[str] = []
    frames: list[str] = []
    other: list[str] = []
    after_frame = False  # the line after a frame is that frame's source code
    failing_code = ""  # the innermost framework frame's code: the expression that raised
    in_framework = False
    for raw in _lines(text):
        line = _strip_prefix(raw)
        if after_frame:
            after_frame = False
            if not _exception(line):
                failing_code = line if in_framework else ""
                continue
        if not line or line.startswith("Traceback (most recent call last)") or set(line) <= set("^~ "):
            continue
        frame = _FRAME.match(raw.strip()) or _FRAME.match(line)
        if frame:
            path = frame.group("path").replace("\\", "/").lower()
            in_framework = any(f"/{name}/" in path or f"/{name}." in path for name in FRAMEWORKS)
            if in_framework:
                frames.append(frame.group("func"))
            after_frame = True
            continue
        exception = _exception(line)
        if exception:
            exceptions.append(_denoise(line))
        elif _ERROR_WORDS.search(line):
            other.append(_denoise(line))
    # The last exception is the one raised; earlier ones are its causes.
    signal = [_first_words(line) for line in dict.fromkeys(reversed(exceptions))]
    signal += [_first_words(line) for line in list(dict.fromkeys(other))[:3]]
    signal += [failing_code] if failing_code and not failing_code.startswith("raise") else []
    signal += list(dict.fromkeys(reversed(frames)))[:4]
    reduced = "\n".join(s for s in signal if s)
    return reduced or _denoise(text)
