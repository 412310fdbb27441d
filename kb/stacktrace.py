"""Pasted stack traces and logs, reduced to what identifies the error.

A trace is mostly noise for search: ranks, pids, timestamps, addresses, paths and line
numbers. What identifies it is the exception type and message and the functions of the
framework it passed through. `reduce_trace` keeps those; other text passes unchanged.

IPython's and Jupyter's tracebacks are read as Python's: their header (`AttributeError   Traceback (most recent
call last)`), their frames (`File ~/env/lib/python3.10/site-packages/peft/peft_model.py:686, in PeftModel.load`,
`Cell In[3], line 5`, an older `<ipython-input-3-...> in <module>`) and their numbered source lines
(`----> 5 foo()`, the line that raised) are frames and code, never the error.

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

__all__ = ["MAX_PASTE_CHARS", "looks_like_trace", "reduce_trace", "error_lines", "starts_trace", "fits", "too_long"]

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
    frames = sum(bool(_FRAME.match(line) or _notebook_frame(line)) for line in lines)
    prefixed = sum(_prefixed(line) for line in lines)
    return frames >= 1 or prefixed >= 2


def starts_trace(line: str) -> bool:
    """Whether `line` may be a trace's or a log's first: a `Traceback` header, a frame, a prefixed log line."""
    line = line[:LINE_CHARS]
    return (
        "Traceback (most recent call last)" in line
        or bool(_FRAME.match(line))
        or _notebook_frame(line) is not None
        or _prefixed(line)
    )


def _prefixed(line: str) -> bool:
    """A log line: one that starts with a rank, a process, a timestamp or a level (`_PREFIX`)."""
    match = _PREFIX.match(line)
    return bool(match and match.group())


def _notebook_frame(line: str) -> tuple[str, str] | None:
    """An IPython or Jupyter frame's path and function: `File ~/a/b.py:686, in Class.method(self, x)` (or its
    path a link, `File [~/a/b.py:686](https://...)`), `Cell In[3], line 5` (the path "", the function "<cell>"),
    `/a/b.py in func(x)`, `<ipython-input-3-ab> in <module>`; None for any other line. Read with string methods."""
    stripped = line.strip()
    if stripped.startswith("Cell In[") and ", line " in stripped:
        return "", "<cell>"
    if stripped.startswith("File ") and not stripped.startswith('File "'):
        where, comma, called = stripped[5:].rpartition(", in ")
        path = where.strip().lstrip("[").split("]", 1)[0]
    else:
        where, comma, called = stripped.partition(" in ")
        path = where.strip()
        if not (path.endswith(".py") or path.startswith("<ipython-input-")) or " " in path:
            return None
    func = called.split("(", 1)[0].strip()
    if not comma or not path or not func or not all(c.isalnum() or c in "_<>." for c in func):
        return None
    head, colon, number = path.rpartition(":")
    return (head if colon and number.isdigit() else path), func


def _numbered(line: str) -> tuple[bool, str] | None:
    """A notebook frame's source line: whether it is the one that raised (`----> 5 foo()`) and its code; the
    number may be a link (`[684](https://...)     else:`). None for any other line."""
    stripped = line.strip()
    raised = stripped.startswith("-") and ">" in stripped[:16] and set(stripped[: stripped.find(">")]) <= {"-"}
    if raised:
        stripped = stripped[stripped.find(">") + 1 :].lstrip()
    if stripped.startswith("[") and (close := stripped.find("](")) > 1 and stripped[1:close].isdigit():
        end = stripped.find(")", close)
        return (raised, stripped[end + 1 :].strip()) if end != -1 else None
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    if digits and (digits == len(stripped) or stripped[digits] == " "):
        return raised, stripped[digits:].strip()
    return None


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
    """The exception lines and the framework's frames of a trace (a log with none: itself, denoised); other text
    unchanged."""
    if not looks_like_trace(text):
        return text
    return error_lines(text) or _denoise(_unflattened(text))


def error_lines(text: str) -> str:
    """The exception lines, error lines and the framework's frames of a trace or log; "" when it has none."""
    text = _unflattened(text)
    exceptions: list[str] = []
    frames: list[str] = []
    other: list[str] = []
    after_frame = False  # the line after a frame is that frame's source code
    failing_code = ""  # the innermost framework frame's code: the expression that raised
    in_framework = False
    notebook = False  # in a notebook frame, whose source lines are numbered
    for raw in _lines(text):
        line = _strip_prefix(raw)
        if after_frame:
            after_frame = False
            if not _exception(line):
                failing_code = line if in_framework else ""
                continue
        if not line or "Traceback (most recent call last)" in line or set(line) <= set("^~- "):
            continue
        if notebook and (numbered := _numbered(raw)) is not None:
            raised, code = numbered
            if raised:
                failing_code = code if in_framework else ""
            continue
        frame = _FRAME.match(raw.strip()) or _FRAME.match(line)
        where = (frame.group("path"), frame.group("func")) if frame else _notebook_frame(line)
        if where is not None:
            path = where[0].replace("\\", "/").lower()
            in_framework = any(f"/{name}/" in path or f"/{name}." in path for name in FRAMEWORKS)
            if in_framework:
                frames.append(where[1])
            after_frame, notebook = frame is not None, frame is None
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
    return "\n".join(s for s in signal if s)
