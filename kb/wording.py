"""The wording: the strings a reader is shown, in Chinese and English, from one table (kb/data/strings.toml).

The library's notes (an answer's "Source", "ROLL's FAQ does not cover this.", who
translated an entry) and the web app's pages read the same table: the library with `words`,
the server with `server.rendering.strings.Translator`, which adds the channels' own tables
(each kept beside its channel, read with `load_strings`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import RootModel, ValidationInfo, field_validator

from .tomlfile import DataModel, load_toml

__all__ = ["LANGS", "DEFAULT_LANG", "STRINGS_FILE", "load_strings", "pick", "strings", "words"]

LANGS = ("zh", "en")
DEFAULT_LANG = "en"
STRINGS_FILE = Path(__file__).parent / "data" / "strings.toml"


class _Text(DataModel):
    """One string in both languages: a text, or a list of texts."""

    zh: str | list[str]
    en: str | list[str]

    @field_validator("zh", "en", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> Any:
        if not (isinstance(value, str) or isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ValueError(f"field {info.field_name!r} must be a string or a list of strings, got {value!r}")
        if not value:
            raise ValueError(f"field {info.field_name!r} is empty")
        return value


_Strings = RootModel[dict[str, _Text]]


def load_strings(path: Path) -> dict[str, dict[str, Any]]:
    """A string table (the library's, or one a channel keeps beside it): {key: {"zh": ..., "en": ...}}; every key
    must have both languages, and a fault names the file and the key."""
    return load_toml(path, _Strings, "the string table").data


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, Any]]:
    """The library's string table (kb/data/strings.toml)."""
    return load_strings(STRINGS_FILE)


def words(key: str, lang: str, /, **values: Any) -> str:
    """The string `key` of the library's table in `lang` (see `pick`)."""
    return pick(strings(), key, lang, **values)


def pick(table: dict[str, dict[str, Any]], key: str, lang: str, /, **values: Any) -> str:
    """The string `key` of `table` in `lang` (in English for a language the table lacks), placeholders filled; with
    `n=1`, the string `<key>_one` where the table has one ("1 entry", not "1 entries")."""
    if values.get("n") == 1 and f"{key}_one" in table:
        key = f"{key}_one"
    text: str = table[key][lang if lang in LANGS else DEFAULT_LANG]
    return text.format(**values) if values else text
