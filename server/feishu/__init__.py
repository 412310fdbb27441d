"""Feishu (Lark): the bot's requests read and verified, its replies as interactive cards, and sending them."""

from .bot import FeishuBot
from .card import answer_card, button_vote, card_markdown, help_card, notice_card, vote_value, written_card
from .client import FeishuClient
from .events import BadFeishuRequest, Challenge, FeishuEvents, Message, Other, Press

__all__ = [
    "FeishuBot",
    "FeishuClient",
    "FeishuEvents",
    "BadFeishuRequest",
    "Challenge",
    "Message",
    "Press",
    "Other",
    "answer_card",
    "written_card",
    "help_card",
    "notice_card",
    "card_markdown",
    "vote_value",
    "button_vote",
]
