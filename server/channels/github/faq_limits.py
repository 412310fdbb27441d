"""The limits on `/faq` replies: one per issue each `KB_GITHUB_FAQ_ISSUE_SECONDS`, and `KB_GITHUB_FAQ_PER_USER_HOUR`
per commenter an hour, so that a thread of `/faq` comments cannot make the bot trip GitHub's secondary rate limits
(or spam an issue). A command over either is acknowledged and left, with a log line; teaching commands (`/faq
link`, `/faq not-covered`) post nothing and are not counted. Each server process counts its own."""

from __future__ import annotations

from ...ratelimit import TokenBuckets

__all__ = ["FaqLimits"]


class FaqLimits:
    """How many `/faq` replies an issue and a commenter may still have; 0 in a setting turns that limit off."""

    def __init__(self, issue_seconds: float, per_user_hour: int) -> None:
        self.issue_seconds = issue_seconds
        self.per_user_hour = per_user_hour
        self._issues = TokenBuckets(1, issue_seconds) if issue_seconds > 0 else None
        self._users = TokenBuckets(per_user_hour, 3600.0) if per_user_hour > 0 else None

    def refusal(self, repo: str, number: int, commenter: str) -> str:
        """Why a `/faq` reply to `commenter` on `repo`#`number` is not given now ("" when it may be; it is counted)."""
        if self._users is not None and self._users.take(commenter.lower()):
            return f"{commenter[:40]} asked {self.per_user_hour} times within the hour (KB_GITHUB_FAQ_PER_USER_HOUR)"
        if self._issues is not None and self._issues.take(f"{repo.lower()}#{number}"):
            return f"the issue had a /faq reply within {self.issue_seconds:g} s (KB_GITHUB_FAQ_ISSUE_SECONDS)"
        return ""
