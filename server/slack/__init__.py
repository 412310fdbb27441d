"""Slack: request signatures, Markdown to mrkdwn, and the Block Kit replies of the `/faq` command."""

from .blocks import actions_lang, answer_message, help_message, notice_message, shared_message, written_message
from .mrkdwn import escape, link, to_mrkdwn, trim
from .signature import MAX_AGE_SECONDS, BadSlackSignature, sign, verify

__all__ = [
    "answer_message",
    "written_message",
    "shared_message",
    "help_message",
    "notice_message",
    "actions_lang",
    "escape",
    "link",
    "to_mrkdwn",
    "trim",
    "MAX_AGE_SECONDS",
    "BadSlackSignature",
    "sign",
    "verify",
]
