"""Pasted stack traces and logs, reduced to what identifies the error.

A trace is mostly noise for search: ranks, pids, timestamps, addresses, paths and line
numbers. What identifies it is the exception type and message and the functions of the
framework it passed through. `reduce_trace` keeps those; other text passes unchanged.
"""

from __future__ import annotations

import re

__all__ = ["looks_like_trace", "reduce_trace"]

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


def looks_like_trace(text: str) -> bool:
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
