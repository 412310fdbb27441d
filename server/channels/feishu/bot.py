"""The Feishu bot of one server: what reads Feishu's requests, what sends the cards, the events seen, each chat's limit, its flow."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...bots.delivery_ids import DeliveryIds, Guard
from ...bots.flow import BotFlow, Renderer
from ...settings import ServerSettings
from . import CHANNEL
from .card import answer_card, generated_card, help_card, notice_card
from .client import FeishuClient
from .events import MAX_AGE_SECONDS, FeishuEvents

__all__ = ["FeishuBot", "REMEMBERED_SECONDS"]

# Event ids are remembered longer than a signed request stays fresh, and than Feishu goes on
# retrying an event it got no answer to within 3 seconds (it retries for hours, rarely).
REMEMBERED_SECONDS = 6 * 3600.0
assert REMEMBERED_SECONDS > MAX_AGE_SECONDS


@dataclass
class FeishuBot:
    events: FeishuEvents
    client: FeishuClient
    guard: Guard = field(default_factory=lambda: Guard(DeliveryIds(REMEMBERED_SECONDS)))
    flow: BotFlow = field(init=False)  # the chat bots' flow, in cards

    def __post_init__(self) -> None:
        self.flow = BotFlow(
            "feishu", "Feishu", self.guard, Renderer(answer_card, generated_card, help_card, notice_card)
        )

    @classmethod
    def of(cls, settings: ServerSettings) -> "FeishuBot | None":
        """The bot for these settings; None when it is off (no KB_FEISHU_APP_ID)."""
        if not CHANNEL.on(settings):
            return None
        return cls(
            FeishuEvents(settings.feishu_verification_token, settings.feishu_encrypt_key),
            FeishuClient(settings.feishu_app_id, settings.feishu_app_secret, settings.feishu_base_url),
        )
