"""GitHub's settings: the webhook's secret, how the bot comments, its modes and limits (`KB_GITHUB_*`).

`GitHubSettings` is one part of the server's settings (server/settings.py composes every channel's
from the registry); a field `name` is set by `KB_NAME`, and `check` stops start-up on a value that
cannot be used, naming the variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from kb.errors import SettingsError
from kb.settings import setting

from ..chat_ids import ChatIdSettings

__all__ = ["GitHubSettings", "MODES"]

MODES = ("suggest", "comment", "mention")  # what the bot does with an issue it could answer


@dataclass(frozen=True)
class GitHubSettings(ChatIdSettings):
    """The GitHub bot's settings."""

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

    def check(self) -> None:
        """Stop start-up on a mode, a repository's mode, a half-configured App or an API URL that cannot be used."""
        if self.github_mode not in MODES:
            raise SettingsError("KB_GITHUB_MODE", self.github_mode, "suggest, comment or mention")
        self.github_repo_modes  # parsed now, so a malformed value stops start-up
        if bool(self.github_app_id) != bool(self.github_private_key):
            missing = "KB_GITHUB_PRIVATE_KEY" if self.github_app_id else "KB_GITHUB_APP_ID"
            raise SettingsError(
                missing, "", "a value, since the other of KB_GITHUB_APP_ID and KB_GITHUB_PRIVATE_KEY is set"
            )
        if urlsplit(self.github_api_url).scheme not in ("http", "https"):
            raise SettingsError("KB_GITHUB_API_URL", self.github_api_url, "an https URL like https://api.github.com")

    @property
    def github_repo_modes(self) -> dict[str, str]:
        """KB_GITHUB_REPOS as {owner/name (lower case): mode}; SettingsError naming the part at fault."""
        modes = {}
        for part in filter(None, (p.strip() for p in self.github_repos.split(","))):
            repo, _, mode = (x.strip() for x in part.partition("="))
            if repo.count("/") != 1 or mode not in MODES:
                raise SettingsError(
                    "KB_GITHUB_REPOS", part, "owner/name=mode pairs, a mode one of suggest, comment, mention"
                )
            modes[repo.lower()] = mode
        return modes
