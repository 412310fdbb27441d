"""Interface language: the library's string table (kb/data/strings.toml, `kb.wording`), and choosing zh or en for a request.

The language comes from the `kb_lang` cookie when the reader chose one with the toggle,
else from the best match in `Accept-Language`, else English.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.wording import DEFAULT_LANG, LANGS, strings, words

__all__ = ["LANGS", "DEFAULT_LANG", "COOKIE", "CONTENT_COOKIE", "Translator", "strings", "negotiate", "choose_lang"]

COOKIE = "kb_lang"
CONTENT_COOKIE = "kb_hl"  # the language an entry page was last switched to


@dataclass(frozen=True)
class Translator:
    """`t("key", n=3)` gives the string for `key` in this language, placeholders filled (`n=1`: `<key>_one` where
    the table has one, as `kb.wording.words` does)."""

    lang: str

    def __call__(self, key: str, /, **values: Any) -> str:
        return words(key, self.lang, **values)

    def list(self, key: str) -> list[str]:
        return list(strings()[key][self.lang])

    @property
    def other(self) -> str:
        """The language the toggle switches to."""
        return "en" if self.lang == "zh" else "zh"


def negotiate(accept_language: str | None) -> str:
    """The best of zh/en for an `Accept-Language` header, honouring q-values."""
    best, best_q = DEFAULT_LANG, -1.0
    for part in (accept_language or "").split(","):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in LANGS:
            continue
        q = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                q = float(params[2:])
            except ValueError:
                q = 0.0
        # Equal q-values keep the order the header lists them in.
        if q > best_q and q > 0:
            best, best_q = primary, q
    return best


def choose_lang(cookie: str | None, accept_language: str | None) -> str:
    """The cookie wins when it names a known language; otherwise the header decides."""
    if cookie in LANGS:
        return cookie  # type: ignore[return-value]
    return negotiate(accept_language)
