"""The setting the team chats share: whether questions are recorded with their workspace's and conversation's ids.

Feishu's, DingTalk's and GitHub's settings each include `ChatIdSettings`; composed into the
server's settings, it is one field, `KB_INSIGHTS_CHAT_IDS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import setting

__all__ = ["ChatIdSettings"]


@dataclass(frozen=True)
class ChatIdSettings:
    """`KB_INSIGHTS_CHAT_IDS`, for every channel that records a chat's ids by it."""

    insights_chat_ids: bool = setting(
        False,
        "also record Feishu tenant and chat ids, and DingTalk organisation and conversation ids, with questions (never "
        "who asked)",
    )

    def check(self) -> None:
        """Nothing to check: a flag."""
