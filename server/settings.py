"""The web app's settings: the library's (`kb.settings.Settings`) and those only a server has.

Both come from the same `KB_` environment variables: a field `name` is set by `KB_NAME`.
The server's are its name and tagline, who may call it (origins, tokens, API keys, Slack's secret,
the Feishu and DingTalk apps' credentials),
how often it looks for a new index, and what it accepts from a client (rate, body size,
proxies believed).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, fields
from urllib.parse import urlsplit

from kb.errors import SettingsError
from kb.settings import Settings, setting

from .channels import registry

__all__ = ["ServerSettings"]


@dataclass(frozen=True)
class ServerSettings(Settings):
    """The library's settings and the web app's own."""

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
    slack_signing_secret: str = setting(
        "",
        "the Slack app's signing secret; every Slack request is verified with it (empty: Slack off)",
    )
    slack_response_base: str = setting(
        "https://hooks.slack.com",
        "the only address Slack answers (a written answer, a late one, a shared entry, a thank-you) are posted to: a "
        "request's `response_url` anywhere else is not used and the refusal is logged; see [outbound "
        "calls](deployment.md#outbound-calls)",
    )
    feishu_app_id: str = setting(
        "",
        "the Feishu (Lark) app's App ID; with `KB_FEISHU_APP_SECRET` and `KB_FEISHU_VERIFICATION_TOKEN` it turns the "
        "bot on (one without the others stops start-up, naming the missing one; see "
        "[Feishu](channels.md#feishu-lark-the-faq-bot)) (empty: Feishu off)",
    )
    feishu_app_secret: str = setting("", "the app's App Secret, for its tenant access token")
    feishu_verification_token: str = setting(
        "",
        "the app's Verification Token, which every event and card callback must carry",
    )
    feishu_encrypt_key: str = setting(
        "",
        "the app's Encrypt Key: events come encrypted and signed, and a signed request more than 5 minutes old is "
        "refused (recommended) (empty: none)",
    )
    feishu_base_url: str = setting(
        "https://open.feishu.cn",
        "the open platform the bot's cards are sent through: `https://open.larksuite.com` for a Lark app",
    )
    dingtalk_app_key: str = setting(
        "",
        "the DingTalk app's AppKey (its robot's `robotCode`); with `KB_DINGTALK_APP_SECRET` it turns the robot on (see "
        "[DingTalk](channels.md#dingtalk-the-faq-robot)) (empty: DingTalk off)",
    )
    dingtalk_app_secret: str = setting("", "the app's AppSecret, which signs every message DingTalk sends the robot")
    dingtalk_webhook_base: str = setting(
        "https://oapi.dingtalk.com",
        "the only address the robot posts late answers to: a message's `sessionWebhook` anywhere else is not used",
    )
    github_webhook_secret: str = setting(
        "",
        "the GitHub webhook's secret: every delivery's `X-Hub-Signature-256` is checked against it (see "
        "[GitHub](channels.md#github-issues-and-discussions)) (empty: GitHub bot off)",
    )
    github_token: str = setting(
        "",
        "the token the bot comments with (a fine-grained token with issues and discussions read and write); without it "
        "nothing is posted",
    )
    github_app_id: str = setting(
        "",
        "the GitHub App's id: the bot comments as the App, with a token of the installation each delivery came through "
        "(asked for with a JWT signed by the App's key, kept until a minute before it expires); needs "
        "`KB_GITHUB_PRIVATE_KEY`",
    )
    github_private_key: str = setting(
        "",
        "the GitHub App's private key: the PEM text, or the path of the `.pem` file GitHub gave",
    )
    github_api_url: str = setting(
        "https://api.github.com",
        "GitHub's API; an Enterprise server's is `https://github.example.com/api/v3`",
    )
    github_mode: str = setting(
        "suggest",
        "`suggest`: nothing is posted (the answer it would give is kept on `/insights` as a suggested answer a "
        "maintainer posts or dismisses with one click); `comment`: the answer is posted when its confidence reaches "
        "the channel's point (precision 0.9 unless `KB_CHANNEL_PRECISION` says); `mention`: only `/faq` commands are "
        "answered, as in every mode",
    )
    github_repos: str = setting(
        "",
        "modes of particular repositories, over `KB_GITHUB_MODE`: `owner/a=comment,owner/b=mention`",
    )
    github_skip_label: str = setting("no-faq-bot", "an issue with this label is left alone")
    github_suggest_label: str = setting(
        "",
        "in suggest mode, the label added to an issue the bot suggests an answer for, e.g. `faq-suggested` (empty: "
        "none); taken off again when the suggestion is dismissed",
    )
    github_faq_issue_seconds: float = setting(
        60.0,
        "seconds between two replies to `/faq` commands on one issue; a command sooner is acknowledged and left, "
        "with a log line (0: no limit)",
        zero_off=True,
    )
    github_faq_per_user_hour: int = setting(
        5,
        "replies to one commenter's `/faq` commands an hour, on all issues; more are left, with a log line (0: no "
        "limit). Each server process counts its own",
        zero_off=True,
    )
    github_record_issues: bool = setting(
        True,
        "the insights keep a public issue's repository and URL with its question (a private repository's only with "
        "`KB_INSIGHTS_CHAT_IDS`)",
    )
    insights_slack_ids: bool = setting(False, "also record Slack team and channel ids with questions")
    insights_chat_ids: bool = setting(
        False,
        "also record Feishu tenant and chat ids, and DingTalk organisation and conversation ids, with questions (never "
        "who asked)",
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
    mcp_token: str = setting(
        "",
        "bearer token for the MCP server at `/mcp`, compared in constant time; `kb mcp` over stdio needs none (see "
        "[Coding agents](channels.md#coding-agents-mcp)) (empty: `/mcp` off)",
    )
    api_keys: str = setting(
        "",
        "comma-separated keys for the OpenAI-compatible API (`/v1/`), each accepted as `Authorization: Bearer <key>`; "
        "empty: open, as the JSON API is",
    )
    api_model: str = setting("kb", "the model name `/v1/models` lists and `/v1/chat/completions` answers as")
    metrics_token: str = setting("", "bearer token for `/metrics`; empty: anyone who reaches the port may scrape it")
    base_url: str = setting(
        "",
        "this server's public URL (`https://faq.example.com`), for the links its pages, JSON and chat replies (Slack, "
        "Feishu, DingTalk) give; the `Host` header a client sends is never used. Set it behind a reverse proxy (empty: "
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
        _check_origin("KB_SLACK_RESPONSE_BASE", self.slack_response_base)
        _check_origin("KB_FEISHU_BASE_URL", self.feishu_base_url)
        _check_origin("KB_DINGTALK_WEBHOOK_BASE", self.dingtalk_webhook_base)
        if self.github_mode not in _GITHUB_MODES:
            raise SettingsError("KB_GITHUB_MODE", self.github_mode, "suggest, comment or mention")
        self.github_repo_modes  # parsed now, so a malformed value stops start-up
        if bool(self.github_app_id) != bool(self.github_private_key):
            missing = "KB_GITHUB_PRIVATE_KEY" if self.github_app_id else "KB_GITHUB_APP_ID"
            raise SettingsError(
                missing, "", "a value, since the other of KB_GITHUB_APP_ID and KB_GITHUB_PRIVATE_KEY is set"
            )
        if urlsplit(self.github_api_url).scheme not in ("http", "https"):
            raise SettingsError("KB_GITHUB_API_URL", self.github_api_url, "an https URL like https://api.github.com")

    @classmethod
    def of(cls, settings: Settings) -> "ServerSettings":
        """`settings` as they are when they are a server's; else the library's, with the server's defaults."""
        if isinstance(settings, cls):
            return settings
        return cls(**{f.name: getattr(settings, f.name) for f in fields(Settings)})

    def precision_for(self, channel: str | None) -> float:
        """The precision `channel` answers at: KB_CHANNEL_PRECISION's for it, else the channel's own default
        (a bot that posts in public declares a high one), else KB_ANSWER_PRECISION."""
        if channel in self.channel_precisions:
            return self.channel_precisions[channel]
        declared = next((c.precision for c in registry.CHANNELS if c.name == channel), None)
        return declared if declared is not None else self.answer_precision

    @property
    def harvest_repo_list(self) -> list[str]:
        """KB_HARVEST_REPOS as a list of `owner/name`; a SettingsError names one that is not."""
        repos = [r.strip() for r in self.harvest_repos.split(",") if r.strip()]
        for repo in repos:
            if not re.fullmatch(r"[\w.-]{1,100}/[\w.-]{1,100}", repo):
                raise SettingsError("KB_HARVEST_REPOS", self.harvest_repos, f"OWNER/NAME repositories, not {repo!r}")
        return repos

    @property
    def github_repo_modes(self) -> dict[str, str]:
        """KB_GITHUB_REPOS as {owner/name (lower case): mode}; SettingsError naming the part at fault."""
        modes = {}
        for part in filter(None, (p.strip() for p in self.github_repos.split(","))):
            repo, _, mode = (x.strip() for x in part.partition("="))
            if repo.count("/") != 1 or mode not in _GITHUB_MODES:
                raise SettingsError(
                    "KB_GITHUB_REPOS", part, "owner/name=mode pairs, a mode one of suggest, comment, mention"
                )
            modes[repo.lower()] = mode
        return modes

    @property
    def rate(self) -> tuple[int, float] | None:
        """KB_RATE_LIMIT as (requests, period in seconds); None when it is `off`."""
        return _parse_rate(self.rate_limit)

    @property
    def proxies(self) -> tuple[str, ...]:
        """KB_TRUSTED_PROXIES as a tuple of addresses and networks."""
        return _parse_proxies(self.trusted_proxies)

    @property
    def keys(self) -> tuple[str, ...]:
        """KB_API_KEYS as a tuple (empty: the OpenAI-compatible API is open)."""
        return tuple(k.strip() for k in self.api_keys.split(",") if k.strip())

    @property
    def feishu_on(self) -> bool:
        """Whether the Feishu bot is configured (`_check_pairs` made sure it is whole)."""
        return bool(self.feishu_app_id)

    @property
    def dingtalk_on(self) -> bool:
        return bool(self.dingtalk_app_key)

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(o.strip().rstrip("/") for o in self.allowed_origins.split(",") if o.strip())


_GITHUB_MODES = ("suggest", "comment", "mention")
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


def _check_pairs(settings: ServerSettings) -> None:
    """A channel is configured whole or not at all: a missing setting stops start-up, named."""
    for group in (c.settings for c in registry.CHANNELS if len(c.settings) > 1):
        names = ["KB_" + name.upper() for name in group]
        given = [bool(getattr(settings, name)) for name in group]
        if any(given) and not all(given):
            missing = names[given.index(False)]
            raise SettingsError(
                missing, "", f"a value, since {names[given.index(True)]} is set (or leave {', '.join(names)} all empty)"
            )


def _check_channel_names(settings: ServerSettings) -> None:
    """KB_CHANNEL_PRECISION names channels this server has."""
    known = [c.name for c in registry.CHANNELS]
    for name in settings.channel_precisions:
        if name not in known:
            raise SettingsError(
                "KB_CHANNEL_PRECISION", name, "channel=precision pairs, a channel one of " + ", ".join(known)
            )


def _check_origin(name: str, raw: str) -> None:
    """An https origin (`https://host[:port]`, no path), or http on this machine (a test's stand-in)."""
    parts = urlsplit(raw)
    loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not (parts.scheme == "https" or loopback) or not parts.netloc or parts.path.strip("/") or parts.query:
        raise SettingsError(name, raw, "an https address with no path, like https://example.com")


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
