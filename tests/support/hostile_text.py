"""Pasted text shaped to make a pattern backtrack: long runs of dots, brackets and spaces, one frame repeated."""

from __future__ import annotations

FRAME = (
    '  File "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
    "    return forward_call(*args, **kwargs)\n"
)
_HEAD = "Traceback (most recent call last):\n" + FRAME
_TAIL = "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB, thanks\n"


def _trace(middle: str, chars: int) -> str:
    """A trace of about `chars` characters whose middle is `middle` repeated."""
    return _HEAD + middle * ((chars - len(_HEAD) - len(_TAIL)) // len(middle)) + _TAIL


def _long_line(start: str, unit: str, chars: int) -> str:
    """A trace of about `chars` characters with one line of `start`, then `unit` repeated."""
    return _HEAD + start + unit * ((chars - len(_HEAD) - len(_TAIL) - len(start)) // len(unit)) + _TAIL


def hostile_texts(chars: int) -> dict[str, str]:
    """Each worst shape found, about `chars` characters long, by name."""
    flat = _trace(FRAME, chars).replace("\n", " ")
    return {
        "dots": _trace(".", chars),
        "brackets": _trace("[", chars),
        "closing brackets": _trace("])", chars),
        "spaces": _trace(" ", chars),
        "spaces then thanks": "How do I resume?" + " " * chars + "thanks x",
        "commas in brackets": _long_line("ValueError: (", " ,", chars),
        "one frame repeated": _trace(FRAME, chars),
        "one frame repeated, on one line": flat,
        "spaces, on one line": "Traceback (most recent call last) " + " " * chars + "x",
        "an error's name repeated": _long_line("A", "Error", chars),
        "a worker prefix never closed": _long_line("(", "pid", chars),
        "a count then spaces": "on 8" + " " * chars + "GPUs?",
    }
