"""A source document's text: read as UTF-8, with `\\r\\n` and `\\r` line endings made `\\n`; its language; a file name as a title."""

from __future__ import annotations

import re
from pathlib import Path

from kb.errors import SourceError

__all__ = ["read_text", "document_lang", "readable_name"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ACRONYMS = {"faq": "FAQ", "faqs": "FAQs", "qa": "Q&A", "api": "API", "gpu": "GPU", "llm": "LLM"}


def read_text(path: Path) -> str:
    """The text of `path`; a SourceError names the line of the first byte that is not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start : exc.start + 1]
        raise SourceError(path, f"not UTF-8: byte {bad!r} cannot be decoded", line) from exc
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def document_lang(text: str) -> str:
    """A document's language: `zh` when CJK characters make up at least 10% of its letters, else `en`.

    A question's is `kb.text.detect_lang`'s: two Chinese characters make it `zh`.
    """
    letters = sum(1 for c in text if c.isalpha())
    cjk = len(_CJK.findall(text))
    return "zh" if letters and cjk / letters >= 0.10 else "en"


def readable_name(stem: str) -> str:
    """A file name as a title: "team-faq" -> "Team FAQ", "gpu_notes" -> "GPU notes"."""
    words = [w for w in re.split(r"[-_.\s]+", stem) if w]
    words = [_ACRONYMS.get(w.lower(), w) for w in words]
    text = " ".join(words) or stem
    return text[:1].upper() + text[1:]
