"""DingTalk: the robot's signed messages, its replies as Markdown, and posting to a conversation's session webhook."""

from .bot import DingTalkBot
from .markdown import answer_message, help_message, notice_message, written_message
from .payload import BadDingTalkPayload, RobotMessage, robot_message
from .signature import BadDingTalkSignature, sign, verify
from .webhook import SessionWebhook, on_base

__all__ = [
    "DingTalkBot",
    "RobotMessage",
    "BadDingTalkPayload",
    "BadDingTalkSignature",
    "SessionWebhook",
    "answer_message",
    "written_message",
    "help_message",
    "notice_message",
    "robot_message",
    "sign",
    "verify",
    "on_base",
]
