"""What Slack sends when a button on a `/faq` reply is pressed: the parts of a `block_actions` payload this app reads.

Slack posts interactions as a form field `payload` holding JSON. Only `block_actions`
are ours; their shape is checked here, so a payload signed with the right secret but of
another shape is a 400 naming the field, not an error deep in a route.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from ...exceptions import ServerError, invalid_field
from ...request_checks import MAX_JSON_DEPTH, too_deep

__all__ = ["BlockActions", "Action", "BadSlackPayload", "block_actions"]


class BadSlackPayload(ServerError):
    """A payload that is not JSON or not of the shape Slack sends; the message names the field."""

    status = 400
    channel = "slack"
    sender = "Slack request to {path}"


class _Loose(BaseModel):
    model_config = {"extra": "ignore"}


class User(_Loose):
    id: str = ""
    team_id: str = ""


class Team(_Loose):
    id: str = ""


class Action(_Loose):
    action_id: str = ""
    value: str = ""
    block_id: str = ""


class BlockActions(_Loose):
    response_url: str = ""
    user: User = User()
    team: Team | None = None
    actions: list[Action] = []

    @property
    def team_id(self) -> str:
        return (self.team.id if self.team else "") or self.user.team_id


def block_actions(raw: str) -> BlockActions | None:
    """The `block_actions` payload in the form field `raw`; None for another interaction type; BadSlackPayload if malformed."""
    if too_deep(raw):
        raise BadSlackPayload(f"payload: nested deeper than {MAX_JSON_DEPTH} levels, so not an interaction Slack sent")
    try:
        data: Any = json.loads(raw)
    except ValueError:  # not JSON, or an integer of over 4,300 digits
        raise BadSlackPayload("payload: not JSON (Slack sends interactions as a form field `payload`)") from None
    if not isinstance(data, dict) or data.get("type") != "block_actions":
        return None
    try:
        return BlockActions.model_validate(data)
    except ValidationError as exc:
        raise BadSlackPayload(invalid_field(exc, "payload")) from None
