"""The web app's settings: the library's (`kb.settings.Settings`), the site's own, and every channel's.

All come from the same `KB_` environment variables: a field `name` is set by `KB_NAME`.
The site's are its name and tagline, who may call it (origins, admin and metrics tokens), how
often it looks for a new index, and what it accepts from a client (rate, body size, proxies
believed); the harvest's tracker's (`TrackerSettings`: the API `kb harvest --repo` reads, its
token) are part of them. A channel declares its own in its package (a frozen dataclass of `setting` fields with
a `check` method, named by `Channel.settings_class`); `ServerSettings` is the site's settings with
every registered channel's composed in, so adding a channel adds its settings here without a line
in this file.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from kb.errors import SettingsError
from kb.settings import Settings, setting
from trackers.settings import TrackerSettings

from .channels import registry

__all__ = ["ServerSettings", "SiteSettings"]


@dataclass(frozen=True)
class SiteSettings(TrackerSettings, Settings):
    """The library's settings, the harvest's tracker's (`trackers.settings`) and the site's own; `ServerSettings` adds
    the channels'."""

    site_name: str = setting(
        "",
        "the site's name, in every page's header and title and as the home page's heading, in both languages; empty: "
        "the name the sources' manifest gives in its `[site]` table, else the one source's title, else its frameworks' "
        '("ROLL and slime FAQ")',
    )
    site_tagline: str = setting(
        "",
        "the home page's tagline; empty: the manifest's `[site]` tagline, else one naming the frameworks",
    )
    allowed_origins: str = setting(
        "",
        "comma-separated origins (`https://docs.example.com`) whose pages may embed the chat widget and call the API",
    )
    admin_token: str = setting(
        "",
        "bearer token for /insights and admin routes; not set, `kb serve` keeps one in $KB_DATA_DIR/admin-token "
        "(`kb admin-token` prints it); set and empty, they are off",
    )
    reload_interval: float = setting(
        2.0,
        "seconds between checks for a new index, which the server swaps in without dropping a request (`0`: only `POST "
        "/admin/reload`)",
        zero_off=True,
    )
    sync_interval: float = setting(
        0.0,
        "seconds between syncs of the sources that name an upstream Git `repo`, as [`kb "
        "sync`](your-faqs.md#keeping-sources-current) does; the replicas of one data directory take turns, and each "
        "swaps the new build in (`0`: off)",
        zero_off=True,
    )
    harvest_interval: float = setting(
        0.0,
        "seconds between harvests of the tracker (`kb harvest --repo`) for each of KB_HARVEST_REPOS (0: off)",
        zero_off=True,
    )
    harvest_repos: str = setting("", "the repositories harvested every KB_HARVEST_INTERVAL: `THUDM/slime,alibaba/ROLL`")
    rate_limit: str = setting(
        "600/minute",
        "requests per client (`N/second`, `N/minute`, `N/hour`; `off`: none); over it, 429 with `Retry-After`. The "
        "paths it does not count are listed below the table: among them the chat platforms', whose servers send every "
        "asker's questions (their bots take 20 a minute from each chat instead)",
    )
    max_body_bytes: int = setting(262_144, "largest request body accepted; larger gets 413")
    metrics_token: str = setting("", "bearer token for `/metrics`; empty: anyone who reaches the port may scrape it")
    base_url: str = setting(
        "",
        "this server's public URL (`https://faq.example.com`), for the links its pages, JSON and the chat bots' replies "
        "give; the `Host` header a client sends is never used. Set it behind a reverse proxy (empty: "
        "the address a request reached)",
    )
    trusted_proxies: str = setting(
        "",
        "comma-separated addresses or networks (`10.0.0.5`, `10.0.0.0/24`) of the reverse proxies whose "
        "`X-Forwarded-For` and `X-Forwarded-Proto` are believed; from anyone else, this machine included, they are "
        "ignored (empty: none)",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        _parse_rate(self.rate_limit)  # a bad KB_RATE_LIMIT stops start-up, naming the variable
        self.harvest_repo_list  # parsed now, so a malformed KB_HARVEST_REPOS stops start-up
        _parse_proxies(self.trusted_proxies)
        _check_base_url(self.base_url)
        _check_pairs(self)
        _check_channel_names(self)
        for declared in _declared():
            declared.check(self)

    @classmethod
    def of(cls, settings: Settings) -> Self:
        """`settings` as they are when they are a server's; else the library's, with the server's defaults."""
        if isinstance(settings, cls):
            return settings
        return cls(**{f.name: getattr(settings, f.name) for f in fields(Settings)})

    @property
    def harvest_repo_list(self) -> list[str]:
        """KB_HARVEST_REPOS as a list of `owner/name`; a SettingsError names one that is not."""
        repos = [r.strip() for r in self.harvest_repos.split(",") if r.strip()]
        for repo in repos:
            if not re.fullmatch(r"[\w.-]{1,100}/[\w.-]{1,100}", repo):
                raise SettingsError("KB_HARVEST_REPOS", self.harvest_repos, f"OWNER/NAME repositories, not {repo!r}")
        return repos

    @property
    def rate(self) -> tuple[int, float] | None:
        """KB_RATE_LIMIT as (requests, period in seconds); None when it is `off`."""
        return _parse_rate(self.rate_limit)

    @property
    def proxies(self) -> tuple[str, ...]:
        """KB_TRUSTED_PROXIES as a tuple of addresses and networks."""
        return _parse_proxies(self.trusted_proxies)

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip())


def _declared() -> tuple[Any, ...]:
    """Every registered channel's settings class, in the registry's order, each once."""
    return tuple(dict.fromkeys(c.settings_class for c in registry.CHANNELS if c.settings_class is not None))


def _compose() -> type[SiteSettings]:
    """The site's settings with every channel's: one frozen dataclass whose fields are all of theirs."""
    namespace = {
        "__doc__": "The library's settings, the site's and every registered channel's.",
        "__module__": __name__,
    }
    return dataclass(frozen=True)(type("ServerSettings", (SiteSettings, *_declared()), namespace))


if TYPE_CHECKING:

    class ServerSettings(SiteSettings):
        """The library's settings, the site's and every registered channel's."""

        def __getattr__(self, name: str) -> Any: ...  # a channel's setting: typed in its own package's class

else:
    ServerSettings = _compose()


_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}


def _parse_rate(raw: str) -> tuple[int, float] | None:
    """`N/second`, `N/minute` or `N/hour` as (N, seconds); `off` as None."""
    text = raw.strip().lower()
    if text == "off":
        return None
    count, _, unit = text.partition("/")
    if count.strip().isdigit() and int(count) > 0 and unit.strip() in _PERIODS:
        return int(count), _PERIODS[unit.strip()]
    raise SettingsError("KB_RATE_LIMIT", raw, "N/second, N/minute or N/hour with N above 0, or off")


def _check_base_url(raw: str) -> None:
    """An absolute http(s) URL with a host, no query or fragment (or empty)."""
    if not raw:
        return
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise SettingsError("KB_BASE_URL", raw, "an http or https URL like https://faq.example.com, or empty")


def _check_pairs(settings: SiteSettings) -> None:
    """A channel is configured whole or not at all: a missing setting stops start-up, named."""
    for group in (c.settings for c in registry.CHANNELS if len(c.settings) > 1):
        names = ["KB_" + name.upper() for name in group]
        given = [bool(getattr(settings, name)) for name in group]
        if any(given) and not all(given):
            missing = names[given.index(False)]
            raise SettingsError(
                missing, "", f"a value, since {names[given.index(True)]} is set (or leave {', '.join(names)} all empty)"
            )


def _check_channel_names(settings: SiteSettings) -> None:
    """KB_CHANNEL_PRECISION names channels this server has."""
    known = [c.name for c in registry.CHANNELS]
    for name in settings.channel_precisions:
        if name not in known:
            raise SettingsError(
                "KB_CHANNEL_PRECISION", name, "channel=precision pairs, a channel one of " + ", ".join(known)
            )


def _parse_proxies(raw: str) -> tuple[str, ...]:
    """Comma-separated IP addresses or networks (`10.0.0.5`, `10.0.0.0/24`, `::1`)."""
    proxies = tuple(p.strip() for p in raw.split(",") if p.strip())
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise SettingsError(
                "KB_TRUSTED_PROXIES", raw, f"IP addresses or networks separated by commas ({proxy!r} is neither)"
            ) from None
    return proxies
