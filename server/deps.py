"""Route dependencies as `Annotated` aliases: settings, the knowledge base, the chat, the language, a Slack form."""

from __future__ import annotations

import logging
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import Depends, HTTPException, Request

from kb.knowledge import KnowledgeBase
from kb.settings import Settings

from .chat import Chat
from .slack.signature import SignatureError, verify
from .templating import request_lang

__all__ = ["SettingsDep", "KBDep", "ChatDep", "LangDep", "SlackFormDep", "base_url"]

log = logging.getLogger("kb.server")
MAX_SLACK_BODY = 1_000_000  # bytes; Slack's interaction payloads are far smaller

# The dependencies are `async def` on purpose: FastAPI runs a plain `def` dependency in the
# thread pool, a thread hop per request for what is an attribute lookup.


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_kb(request: Request) -> KnowledgeBase:
    return request.app.state.kb


async def get_chat(request: Request) -> Chat:
    return request.app.state.chat


async def get_lang(request: Request) -> str:
    return request_lang(request)


async def get_slack_form(request: Request) -> dict[str, str]:
    """The form fields of a request Slack signed: 404 while Slack is off, 401 when unsigned, badly signed or stale."""
    secret = request.app.state.settings.slack_signing_secret
    if not secret:
        raise HTTPException(404, "the Slack routes are off: set KB_SLACK_SIGNING_SECRET to the Slack app's signing secret")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_SLACK_BODY:
            raise HTTPException(413, f"the body is over {MAX_SLACK_BODY} bytes; Slack sends far less")
    headers = request.headers
    try:
        # Over the raw bytes, before anything is parsed.
        verify(secret, headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature"), body)
    except SignatureError as exc:
        client = request.client.host if request.client else "?"
        log.warning("Slack request to %s from %s refused: %s", request.url.path, client, exc)
        raise HTTPException(401, f"not a valid Slack request: {exc}") from None
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in fields.items()}


def base_url(request: Request) -> str:
    """This server's root URL, ending in "/", for permalinks."""
    return str(request.base_url)


SettingsDep = Annotated[Settings, Depends(get_settings)]
KBDep = Annotated[KnowledgeBase, Depends(get_kb)]
ChatDep = Annotated[Chat, Depends(get_chat)]
LangDep = Annotated[str, Depends(get_lang)]
SlackFormDep = Annotated[dict[str, str], Depends(get_slack_form)]
