"""The OpenAI-compatible API's settings: the keys it accepts and the model name it answers as."""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import setting

__all__ = ["OpenAISettings"]


@dataclass(frozen=True)
class OpenAISettings:
    """`KB_API_KEYS` and `KB_API_MODEL`, one part of the server's settings (server/settings.py composes them)."""

    api_keys: str = setting(
        "",
        "comma-separated keys for the OpenAI-compatible API (`/v1/`), each accepted as `Authorization: Bearer <key>`; "
        "empty: open, as the JSON API is",
    )
    api_model: str = setting("kb", "the model name `/v1/models` lists and `/v1/chat/completions` answers as")

    def check(self) -> None:
        """Nothing to check: any keys, any name."""

    @property
    def keys(self) -> tuple[str, ...]:
        """KB_API_KEYS as a tuple (empty: the OpenAI-compatible API is open)."""
        return tuple(k.strip() for k in self.api_keys.split(",") if k.strip())
