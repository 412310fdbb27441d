"""The DingTalk robot of one server: its app, where it may post, the messages seen, each conversation's limit, its flow."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...bots.delivery_ids import DeliveryIds, Guard
from ...bots.flow import BotFlow, Renderer
from ...settings import ServerSettings
from . import CHANNEL
from .markdown import answer_message, generated_message, help_message, notice_message
from .signature import MAX_AGE_MS
from .webhook import SessionWebhook

__all__ = ["DingTalkBot"]


@dataclass
class DingTalkBot:
    app_key: str
    app_secret: str
    webhook: SessionWebhook
    # A message id is remembered as long as a signature of its time may be taken: an hour either side.
    guard: Guard = field(default_factory=lambda: Guard(DeliveryIds(2 * MAX_AGE_MS / 1000)))
    flow: BotFlow = field(init=False)  # the chat bots' flow, in its Markdown

    def __post_init__(self) -> None:
        self.flow = BotFlow(
            "dingtalk",
            "DingTalk",
            self.guard,
            Renderer(answer_message, generated_message, help_message, notice_message),
        )

    @classmethod
    def of(cls, settings: ServerSettings) -> "DingTalkBot | None":
        """The robot for these settings; None when it is off (no KB_DINGTALK_APP_KEY)."""
        if not CHANNEL.on(settings):
            return None
        return cls(
            settings.dingtalk_app_key, settings.dingtalk_app_secret, SessionWebhook(settings.dingtalk_webhook_base)
        )
