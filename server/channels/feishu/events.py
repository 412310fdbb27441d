"""What Feishu (Lark) posts to the bot's request URL, read and verified with lark-oapi's event dispatcher.

Feishu posts the URL's `url_verification` challenge, every event (a message: `im.message.receive_v1`)
and every card callback (a button pressed: `card.action.trigger`) to one URL, as JSON; with an
Encrypt Key, encrypted (AES-256-CBC, `{"encrypt": "..."}`) and signed (`X-Lark-Signature`, the
SHA-256 of the `X-Lark-Request-Timestamp` and `-Nonce` headers, the key and the body). The
SDK's dispatcher (`lark_oapi.EventDispatcherHandler`) decrypts, answers the challenge, checks
the Verification Token every request carries and the signature, and hands over the typed event.

What it does not do is done here. It accepts a signature of any age, so a signed request whose
timestamp is more than `MAX_AGE_SECONDS` from now is refused before it is read (a replay; one
replayed sooner has an event id already seen: server/bots/delivery_ids.py). It answers a refusal with
HTTP 500 (which Feishu would retry) and logs a traceback each time (which a flood of forged
requests would turn into a flood of tracebacks): its refusal is raised here as `BadFeishuRequest`
instead, the route answers 401 and logs one line within a budget, and the SDK's own line is
filtered out of its logger.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Mapping

from ...exceptions import ServerError
from ...request_checks import MAX_JSON_DEPTH, too_deep
from ..timestamps import off_by, said, whole_number

__all__ = [
    "FeishuEvents",
    "BadFeishuRequest",
    "Challenge",
    "Message",
    "Press",
    "Other",
    "Received",
    "MAX_AGE_SECONDS",
    "TIMESTAMP",
    "NONCE",
    "SIGNATURE",
]

MAX_AGE_SECONDS = 300
TIMESTAMP, NONCE, SIGNATURE = "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature"
MAX_TIMESTAMP_DIGITS = 12  # Unix seconds have 10 digits until the year 2286

# The SDK's messages for a refusal, and which setting to check.
_HINTS = {
    "invalid verification_token": "is KB_FEISHU_VERIFICATION_TOKEN the app's Verification Token?",
    "signature verification failed": "is KB_FEISHU_ENCRYPT_KEY the app's Encrypt Key?",
    "encrypt_key not found": "the body is encrypted: set KB_FEISHU_ENCRYPT_KEY to the app's Encrypt Key",
}


class BadFeishuRequest(ServerError):
    """A request that is not a valid, fresh one from Feishu; the message says which part failed, `cause` what kind
    of refusal it is (`unverified`, `unreadable` or `stale`: each has its own budget of log lines)."""

    status = 401
    channel = "feishu"
    sender = "Feishu request"
    refusal = "not a valid Feishu request"

    def __init__(self, message: str, cause: str = "unverified"):
        super().__init__(message)
        self.kind = cause

    @property
    def cause(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Challenge:
    """The request URL's verification: answered with its `challenge`."""

    challenge: str


@dataclass(frozen=True)
class Message:
    """A message to the bot (`im.message.receive_v1`): its text, mentions taken out."""

    event_id: str
    message_id: str
    chat_id: str
    chat_type: str  # "p2p" (a direct message) or "group"
    tenant: str  # the organisation's tenant key
    sender: str  # the sender's open_id
    kind: str  # the message type: "text", "post" (rich text), "image", ...
    text: str  # "" for a message with no text
    mentioned: bool  # someone (in a group: the bot) is @-mentioned


@dataclass(frozen=True)
class Press:
    """A button pressed on one of the bot's cards (`card.action.trigger`), with the value the card gave it."""

    event_id: str
    tenant: str
    user: str  # the open_id of who pressed it
    chat_id: str
    value: Mapping[str, Any]


@dataclass(frozen=True)
class Other:
    """An event this bot does not answer (the app subscribed to more than it needs)."""

    event_type: str


Received = Challenge | Message | Press | Other

# The event the dispatcher hands to `_keep` during one `read` (it calls back synchronously).
_received: ContextVar[list[Any]] = ContextVar("feishu_received")


def _import_sdk() -> None:
    """Import lark_oapi once, in a thread of its own, and close the event loop its import makes there.

    Importing it runs `lark_oapi/ws/client.py`, which takes the importing thread's event loop, or, where
    the thread has none (any thread but one running a loop, the main thread too once `asyncio.run` has
    returned there), makes one, sets it as the thread's and never closes it: it is for the SDK's
    websocket client, which this bot does not use. Left open, it is reported when Python exits
    (`ResourceWarning: unclosed event loop`, and its two sockets). Made in a thread of its own, it is
    closed here, and no other thread's loop is touched."""
    if "lark_oapi" in sys.modules:
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:
            import lark_oapi.ws.client as sdk_ws

            sdk_ws.loop.close()
            asyncio.set_event_loop(None)
        except BaseException as exc:  # raised again in the thread that asked
            failed.append(exc)

    importing = threading.Thread(target=run, name="lark-oapi-import")
    importing.start()
    importing.join()
    if failed:
        raise failed[0]


class _SDKRefusals(logging.Filter):
    """Drops the SDK's traceback for a request it refused: `FeishuEvents.read` raises instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("handle event failed")


class FeishuEvents:
    """Reads Feishu's requests for one app (its Verification Token and Encrypt Key)."""

    def __init__(self, verification_token: str, encrypt_key: str = ""):
        _import_sdk()  # a 3-second import: only when the Feishu bot is on
        import lark_oapi as lark
        from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTriggerResponse

        def keep(event: Any) -> None:
            _received.get().append(event)

        def keep_press(event: Any) -> Any:
            keep(event)
            return P2CardActionTriggerResponse()  # the route answers the press itself

        self.encrypt_key = encrypt_key
        self._dispatcher = (
            lark.EventDispatcherHandler.builder(encrypt_key, verification_token)
            .register_p2_im_message_receive_v1(keep)
            .register_p2_card_action_trigger(keep_press)
            .build()
        )
        sdk_log = logging.getLogger("Lark")
        if not any(isinstance(f, _SDKRefusals) for f in sdk_log.filters):
            sdk_log.addFilter(_SDKRefusals())

    def read(self, headers: Mapping[str, str], body: bytes, now: float | None = None) -> Received:
        """The request, verified; `BadFeishuRequest` naming what failed when it is not a valid, fresh one."""
        from lark_oapi.core.model import RawRequest

        sent = headers.get(TIMESTAMP)
        if self.encrypt_key and sent is not None:
            _check_fresh(sent, time.time() if now is None else now)
        raw = RawRequest()
        raw.uri = "/feishu/events"
        raw.body = body
        raw.headers = {
            name: value for name in (TIMESTAMP, NONCE, SIGNATURE) if (value := headers.get(name)) is not None
        }
        _check_shallow(body, "the body")
        kept: list[Any] = []
        token = _received.set(kept)
        try:
            response = self._dispatcher.do(raw)
        except (ValueError, RecursionError) as error:  # a payload the SDK could not read (inside the encryption too)
            raise BadFeishuRequest(f"the request could not be read ({type(error).__name__})", "unreadable") from None
        finally:
            _received.reset(token)
        if response.status_code != 200:
            said = _said(response.content)
            if said.startswith("processor not found"):  # verified, but of a type no processor is registered for
                return Other(said.rpartition("type: ")[2])
            raise BadFeishuRequest(self._refusal(said, headers, body))
        if not kept:  # the dispatcher answered the challenge itself (by formatting it into JSON unescaped)
            try:
                return Challenge(str(json.loads(response.content)["challenge"]))
            except (ValueError, KeyError, TypeError):
                raise BadFeishuRequest("the url_verification challenge is not a plain string", "unreadable") from None
        return _typed(kept[0])

    def _refusal(self, said: str, headers: Mapping[str, str], body: bytes) -> str:
        """What the dispatcher refused the request for, and the setting to check."""
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            return "the body is not a JSON object (Feishu sends events as JSON)"
        if self.encrypt_key and not all(headers.get(name) for name in (TIMESTAMP, NONCE, SIGNATURE)):
            missing = next(name for name in (TIMESTAMP, NONCE, SIGNATURE) if not headers.get(name))
            return f"the {missing} header is missing (Feishu signs every event when the app has an Encrypt Key)"
        hint = _HINTS.get(said) or ("is KB_FEISHU_ENCRYPT_KEY the app's Encrypt Key?" if b'"encrypt"' in body else "")
        return f"{said} ({hint})" if hint else said or "the request could not be read"


def _check_shallow(text: bytes | str, what: str) -> None:
    """Refuse JSON nested deeper than `MAX_JSON_DEPTH` before it is parsed."""
    if too_deep(text):
        raise BadFeishuRequest(f"{what} nests deeper than {MAX_JSON_DEPTH} levels", "unreadable")


def _said(content: bytes | None) -> str:
    """The message of the dispatcher's answer to a request it refused (`{"msg": "..."}`)."""
    try:
        return str(json.loads(content or b"{}").get("msg", ""))
    except (ValueError, AttributeError):
        return (content or b"").decode("utf-8", "replace")


def _check_fresh(sent: str, now: float) -> None:
    """Refuse a timestamp that is not a whole number of seconds within `MAX_AGE_SECONDS` of `now`."""
    seconds = whole_number(sent, MAX_TIMESTAMP_DIGITS)
    if seconds is None:
        raise BadFeishuRequest(f"{TIMESTAMP} {sent[:40]!r} is not a Unix time in seconds", "stale")
    age = off_by(seconds, now, MAX_AGE_SECONDS)
    if age is not None:
        raise BadFeishuRequest(
            f"{TIMESTAMP} is {said(age)}; more than {MAX_AGE_SECONDS} s away is refused "
            "(a replay, or this server's clock is wrong)",
            "stale",
        )


def _typed(event: Any) -> Received:
    """The SDK's event as this app's own small value."""
    header = event.header
    if type(event).__name__ == "P2CardActionTrigger":
        data = event.event
        operator, context = data.operator, data.context
        return Press(
            header.event_id or "",
            (operator and operator.tenant_key) or header.tenant_key or "",
            (operator and operator.open_id) or "",
            (context and context.open_chat_id) or "",
            (data.action and data.action.value) or {},
        )
    message, sender = event.event.message, event.event.sender
    mentions = message.mentions or []
    return Message(
        header.event_id or "",
        message.message_id or "",
        message.chat_id or "",
        message.chat_type or "",
        header.tenant_key or "",
        (sender and sender.sender_id and sender.sender_id.open_id) or "",
        message.message_type or "",
        _text(message.message_type or "", message.content or "", [m.key for m in mentions if m.key]),
        bool(mentions),
    )


def _text(kind: str, content: str, mention_keys: list[str]) -> str:
    """The text of a text or rich-text message, the mentions' placeholders (`@_user_1`) taken out."""
    _check_shallow(content, "the message's content")
    try:
        data = json.loads(content)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    if kind == "text":
        text = str(data.get("text", ""))
    elif kind == "post":  # paragraphs of elements: text, links, code; mentions are elements of their own
        paragraphs = data.get("content") or []
        text = "\n".join(
            "".join(str(e.get("text", "")) for e in paragraph if isinstance(e, dict) and e.get("tag") != "at")
            for paragraph in paragraphs
            if isinstance(paragraph, list)
        )
    else:
        return ""
    for key in mention_keys:
        text = text.replace(key, " ")
    return re.sub(r"[ \t]+", " ", text).strip()
