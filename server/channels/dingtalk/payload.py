"""What DingTalk posts to the robot's HTTP URL when someone writes to it: the parts of the message this app reads.

The body is JSON (DingTalk's "receive messages" guide; the same fields as `dingtalk_stream.ChatbotMessage`
in Stream mode). Its shape is checked here, so a message signed with the right secret but of
another shape is a 400 naming the field, not an error deep in a route.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...exceptions import ServerError, invalid_field
from ...request_checks import MAX_JSON_DEPTH, too_deep

__all__ = ["RobotMessage", "BadDingTalkPayload", "robot_message"]


class BadDingTalkPayload(ServerError):
    """A body that is not JSON or not of the shape DingTalk sends; the message names the field."""

    status = 400
    channel = "dingtalk"
    sender = "DingTalk request to {path}"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Text(_Loose):
    content: str = ""


class RobotMessage(_Loose):
    msg_id: str = Field(alias="msgId", min_length=1)
    msgtype: str = ""
    text: Text = Text()
    conversation_id: str = Field("", alias="conversationId")
    corp_id: str = Field("", alias="chatbotCorpId")
    robot_code: str = Field("", alias="robotCode")
    session_webhook: str = Field("", alias="sessionWebhook")
    session_webhook_expires: int = Field(0, alias="sessionWebhookExpiredTime")  # Unix milliseconds


def robot_message(raw: bytes) -> RobotMessage:
    """The message in the body `raw`; BadDingTalkPayload naming the field when it is not one DingTalk sends."""
    if too_deep(raw):
        raise BadDingTalkPayload(f"body: nested deeper than {MAX_JSON_DEPTH} levels, so not a message DingTalk sent")
    try:
        data: Any = json.loads(raw)
    except ValueError:
        raise BadDingTalkPayload("body: not JSON (DingTalk sends a robot's messages as JSON)") from None
    if not isinstance(data, dict):
        raise BadDingTalkPayload("body: not a JSON object")
    try:
        return RobotMessage.model_validate(data)
    except ValidationError as exc:
        raise BadDingTalkPayload(invalid_field(exc, "body")) from None
