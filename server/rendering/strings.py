"""Interface language: the strings (the library's table and each channel's beside it), and choosing zh or en for a request.

`strings()` is the library's table (kb/data/strings.toml, `kb.wording`) with the chat bots'
(server/channels/strings.toml) and each registered channel package's own `strings.toml`, one
mechanism for every channel; a key in two tables stops the server, naming both files.

The language comes from the `kb_lang` cookie when the reader chose one with the toggle,
else from the best match in `Accept-Language`, else English.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from kb import wording
from kb.wording import DEFAULT_LANG, LANGS, load_strings, pick

from ..channels import registry

__all__ = ["LANGS", "DEFAULT_LANG", "COOKIE", "CONTENT_COOKIE", "Translator", "strings", "negotiate", "choose_lang"]

COOKIE = "kb_lang"
CONTENT_COOKIE = "kb_hl"  # the language an entry page was last switched to


@dataclass(frozen=True)
class Translator:
    """`t("key", n=3)` gives the string for `key` in this language, placeholders filled (`n=1`: `<key>_one` where
    the table has one, as `kb.wording.words` does)."""

    lang: str

    def __call__(self, key: str, /, **values: Any) -> str:
        return pick(strings(), key, self.lang, **values)

    def list(self, key: str) -> list[str]:
        return list(strings()[key][self.lang])

    @property
    def other(self) -> str:
        """The language the toggle switches to."""
        return "en" if self.lang == "zh" else "zh"


def tables() -> list[Path]:
    """The channels' string tables: the chat bots' shared one, then each registered package's that has one."""
    packages = ("server.channels", *registry.PACKAGES)
    found = [Path(str(importlib.import_module(name).__file__)).parent / "strings.toml" for name in packages]
    return [path for path in found if path.is_file()]


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, Any]]:
    """Every string a reader is shown: the library's table and the channels' (`tables`), each key from one only."""
    table = dict(wording.strings())
    where = dict.fromkeys(table, wording.STRINGS_FILE)
    for path in tables():
        for key, text in load_strings(path).items():
            if key in table:
                raise ValueError(f"string table {path}: key {key!r} is already in {where[key]}")
            table[key], where[key] = text, path
    return table


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
