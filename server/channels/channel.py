"""`Channel`: what the web app needs to know of one place the knowledge base answers, declared once.

A channel's package (`server/channels/<name>/`) declares one in its `__init__.py`, which imports
nothing heavy; the registry (server/channels/registry.py) lists them. Everything that names
channels reads that list: which routes the app mounts and which settings turn them on
(server/app.py), the all-or-none check of their settings (server/settings.py), the paths whose
errors are JSON and which the browser rate limit does not count (server/error_handler.py), the labels and
chart colours of `/insights`, the start-up lines, and the docs' tests.

Its code is its `plugin` (server/channels/plugin.py: routes, their state, what runs for the app's
lifetime, an error body, an /insights panel and its templates, `kb` subcommands), whose routes are
imported only when it is on. A channel that is off imports none of them, and its paths answer 404
with `off`, which names the settings to set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from .plugin import ChannelPlugin

__all__ = ["ASKS", "Channel"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_COLOUR = re.compile(r"^#[0-9a-f]{6}$")
ASKS = ("search", "chat")  # the kinds of question a channel publishes: timed in kb_search_seconds, kb_chat_seconds


@dataclass(frozen=True)
class Channel:
    """One place the knowledge base answers: its name, how people see it, how it is turned on, what it mounts."""

    name: str  # recorded with every question and vote, and the `channel` label of /metrics: `slack`
    label_en: str  # how /insights names it, in English and in Chinese
    label_zh: str
    colour: str  # its series' colour in /insights's chart, light theme (`#rrggbb`)
    colour_dark: str  # and in the dark theme
    docs: str  # the docs section that sets it up: `docs/channels.md#slack`
    settings: tuple[str, ...] = ()  # fields of its settings that turn it on, set all or none ((): always on)
    # Its own settings: a frozen dataclass of `kb.settings.setting` fields named `<channel>_...` with a `check()` that
    # raises SettingsError; server/settings.py composes them into `ServerSettings` (None: it has none).
    settings_class: type | None = field(default=None, compare=False)
    # Its code (server/channels/plugin.py): routes, their state and tasks, error body, panel, commands (None: none).
    plugin: ChannelPlugin | None = field(default=None, compare=False)
    prefix: str = ""  # the path its routes sit under (`/slack/`); "" when it has none of its own
    off: str = ""  # what its paths answer (404) while it is off: which settings to set
    platform: bool = False  # a platform's servers call it for everyone: not counted by the browser rate limit
    precision: float | None = (
        None  # its operating point unless KB_CHANNEL_PRECISION sets one (None: KB_ANSWER_PRECISION)
    )
    # What it hands the search, and so which confidence judges it (`kb.search.READS`): "question" (a title, a chat
    # message, a pasted error) or "issue" (a whole issue, title and body), each calibrated on its own kind of input.
    reads: str = "question"
    cross_site: bool = False  # other sites' pages call it with a bearer token: CORS for KB_ALLOWED_ORIGINS, with one
    headers: tuple[str, ...] = ()  # request headers its cross-site callers send besides a token (CORS allows them)
    exposed: tuple[str, ...] = ()  # response headers those callers may read (CORS exposes them)
    chat_ids: str = ""  # the field of its settings that records its workspace and conversation ids with questions
    # What its questions are published as (`kb.events`): "search" (a `Searched`, timed in kb_search_seconds) and/or
    # "chat" (a `Chatted`, timed in kb_chat_seconds; a chat bot's message is one even when the search answers it).
    asks: tuple[str, ...] = ()
    status: Callable[[Any], str] | None = field(default=None, compare=False)  # its start-up line

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"channel name {self.name!r}: lower-case letters, digits and _ only")
        for colour in (self.colour, self.colour_dark):
            if not _COLOUR.match(colour):
                raise ValueError(f"channel {self.name}: colour {colour!r} is not #rrggbb")
        if any(kind not in ASKS for kind in self.asks):
            raise ValueError(f"channel {self.name}: asks {self.asks!r}: each one of {', '.join(ASKS)}")
        if self.settings and (self.plugin is None or not self.off):
            raise ValueError(f"channel {self.name}: a channel turned on by settings needs a plugin and an off message")
        named = (*self.settings, self.chat_ids) if self.chat_ids else self.settings
        declared = {f.name for f in fields(self.settings_class)} if self.settings_class else set(named)
        if any(name not in declared for name in named):
            raise ValueError(f"channel {self.name}: settings {named!r} must be fields of its settings_class")

    def on(self, settings: Any) -> bool:
        """Whether it is turned on: always, or when its first setting is set (the settings check made sure of the rest)."""
        return not self.settings or bool(getattr(settings, self.settings[0]))

    def label(self, lang: str) -> str:
        return self.label_zh if lang == "zh" else self.label_en

    def keeps_chat_ids(self, settings: Any) -> bool:
        """Whether questions asked here are recorded with the workspace's and the conversation's ids."""
        return bool(self.chat_ids) and bool(getattr(settings, self.chat_ids))

    @property
    def variables(self) -> tuple[str, ...]:
        """Its settings as the environment names them: `KB_SLACK_SIGNING_SECRET`."""
        return tuple("KB_" + name.upper() for name in self.settings)
