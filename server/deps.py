"""Route dependencies as `Annotated` aliases: settings, the knowledge base, the chat, the language."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from kb.knowledge import KnowledgeBase
from kb.settings import Settings

from .chat import Chat
from .templating import request_lang

__all__ = ["SettingsDep", "KBDep", "ChatDep", "LangDep", "base_url"]

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


def base_url(request: Request) -> str:
    """This server's root URL, ending in "/", for permalinks."""
    return str(request.base_url)


SettingsDep = Annotated[Settings, Depends(get_settings)]
KBDep = Annotated[KnowledgeBase, Depends(get_kb)]
ChatDep = Annotated[Chat, Depends(get_chat)]
LangDep = Annotated[str, Depends(get_lang)]
