"""Pasted stack traces and logs, reduced to what identifies the error.

A trace is mostly noise for search: ranks, pids, timestamps, addresses, paths and line
numbers. What identifies it is the exception type and message and the functions of the
framework it passed through. `reduce_trace` keeps those; other text passes unchanged.

A trace is taken up to `MAX_PASTE_CHARS` long and reduced before any limit on a query's
length is applied (`fits`), so its last line, the exception raised, is never cut off. A
trace pasted into a one-line search box arrives with its line breaks taken out; they are
put back before each frame, each `Traceback` and each exception.
"""

from __future__ import annotations

import re

__all__ = ["MAX_PASTE_CHARS", "looks_like_trace", "reduce_trace", "fits", "too_long"]

MAX_PASTE_CHARS = 50_000  # characters of a pasted trace or log taken, before it is reduced

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
_EXCEPTION = re.compile(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failed|Warning|Timeout)\w*)(?::\s*(?P<msg>.*))?$"
)
_PREFIX = re.compile(
    r"^(?:\s*(?:\[rank\d+\]:?|\(\w*(?:pid|Worker|Actor)[^)]*\)|\d{4}-\d\d-\d\d[ T][\d:.,]+|"
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
    r"\s*(?=Traceback \(most recent call last\)|File \"[^\"]+\", line \d+, in |\[rank\d+\]"
    r"|(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s)"
    r"|(?<=, in )(?<![\w.])([\w<>.]+)\s+"  # a frame's function, then its code
)


def _unflattened(text: str) -> str:
    """A trace that arrived on one line, with its line breaks back; any other text unchanged."""
    if "\n" in text or not ("Traceback (most recent call last)" in text or text.count('File "') >= 2):
        return text
    lines = _LINE_STARTS.sub(lambda m: f"{m.group(1)}\n" if m.group(1) else "\n", text).splitlines()
    return "\n".join(line for line in lines if _strip_prefix(line))


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
    lines = text.strip().splitlines()
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
        text = re.sub(r"[(\[]\s*[, ]*\s*[)\]]", "", text)
    return re.sub(r"\s+", " ", text).strip()


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
    for raw in text.splitlines():
        line = _strip_prefix(raw)
        if after_frame:
            after_frame = False
            if not _EXCEPTION.match(line):
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
        exception = _EXCEPTION.match(line)
        if exception:
            exceptions.append(_denoise(line))
        elif re.search(r"error|exception|failed|assert|timeout|mismatch", line, re.I):
            other.append(_denoise(line))
    # The last exception is the one raised; earlier ones are its causes.
    signal = [_first_words(line) for line in dict.fromkeys(reversed(exceptions))]
    signal += [_first_words(line) for line in list(dict.fromkeys(other))[:3]]
    signal += [failing_code] if failing_code and not failing_code.startswith("raise") else []
    signal += list(dict.fromkeys(reversed(frames)))[:4]
    reduced = "\n".join(s for s in signal if s)
    return reduced or _denoise(text)
