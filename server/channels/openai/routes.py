"""`/v1/models` and `/v1/chat/completions`: the chat as an OpenAI-compatible API, for chat front ends.

Open WebUI, LobeChat, Chatbox and the `openai` client see one model (`KB_API_MODEL`, `kb`).
The last user message is the question and the earlier user and assistant messages are the
conversation (read as the chat reads follow-ups); system messages and sampling parameters
(`temperature`, `max_tokens`, ...) are accepted and do not change the answer, which is the
chat's: the LLM's where one is configured, else the FAQ's own. Streamed, it comes as
server-sent events in OpenAI's chunk format, ending in `data: [DONE]`. Each completion also
carries `answered` and the `hits` (the API's hits), which plain clients ignore. With
`KB_API_KEYS` set a request needs one of them as `Authorization: Bearer`; errors come in
OpenAI's shape (server/error_handler.py).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any, AsyncGenerator, AsyncIterator, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

from kb import asking
from kb.cancel import Cancel
from kb.chat import ChatReply
from kb.hits import Hit
from kb.text import detect_lang

from ...bearer import bearer_matches
from ...deps import ChatDep, EventsDep, SettingsDep, base_url
from ...permalinks import permalinks
from ...rendering.strings import Translator
from ...schemas import hit_out
from ...streaming import event_stream, read_in_thread

__all__ = ["router", "CHANNEL"]

log = logging.getLogger("kb.server")
CHANNEL = "openai"  # what the insights record these questions under


class OpenAIRefusal(HTTPException):
    """A request refused, with the `param` at fault and OpenAI's `code` for the fault."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None, **kw: Any):
        super().__init__(status, message, **kw)
        self.param, self.code = param, code


async def require_key(request: Request, settings: SettingsDep) -> None:
    """With KB_API_KEYS set, one of them as `Authorization: Bearer` (401 without)."""
    keys = settings.keys
    if keys and not bearer_matches(keys, request.headers.get("authorization", "")):
        raise OpenAIRefusal(
            401,
            "Incorrect API key provided: send one of KB_API_KEYS as `Authorization: Bearer <key>`",
            code="invalid_api_key",
            headers={"WWW-Authenticate": "Bearer"},
        )


# Not in this server's OpenAPI schema: OpenAI's API reference documents these routes, their bodies and errors.
router = APIRouter(prefix="/v1", tags=["openai"], dependencies=[Depends(require_key)], include_in_schema=False)


class Part(BaseModel):
    """One part of a message's content; only text parts are read."""

    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[Part] | None = None

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content if p.type == "text" and p.text)
        return self.content or ""


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: StrictBool = False


class CompletionIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI's other parameters (n, top_p, user, ...) are accepted
    model: str = Field(description="the model `GET /v1/models` lists (KB_API_MODEL)")
    messages: list[Message] = Field(min_length=1, description="the conversation, oldest first; the last is the user's")
    # Strict, as OpenAI's API is: `true` is not a number, "yes" is not a boolean.
    stream: StrictBool = False
    temperature: StrictFloat | None = Field(
        default=None, ge=0, le=2, description="accepted; the answer does not depend on it"
    )
    max_tokens: StrictInt | None = Field(default=None, ge=1, description="accepted; the answer does not depend on it")
    stream_options: StreamOptions | None = None


def _model(settings: SettingsDep, request: Request) -> dict[str, Any]:
    built = request.app.state.reloader.served.kb.meta
    created = int(time.time() - built.age_seconds)
    return {"id": settings.api_model, "object": "model", "created": created, "owned_by": "kb"}


@router.get("/models")
async def models(request: Request, settings: SettingsDep) -> dict[str, Any]:
    """The models: one, this knowledge base."""
    return {"object": "list", "data": [_model(settings, request)]}


@router.get("/models/{model}")
async def model(model: str, request: Request, settings: SettingsDep) -> dict[str, Any]:
    """One model by its id."""
    _check_model(model, settings.api_model)
    return _model(settings, request)


def _check_model(model: str, served: str) -> None:
    if model != served:
        raise OpenAIRefusal(
            404, f"The model {model[:100]!r} does not exist; this server has {served!r}", "model", "model_not_found"
        )


def _conversation(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """The question (the last message, a user's) and the user's and assistant's turns before it (the chat reads
    the newest of them, as on every channel: kb.chat.recent_turns)."""
    last = messages[-1]
    if last.role != "user" or not last.text.strip():
        raise OpenAIRefusal(400, "the last message must be the user's question, with text", "messages")
    history = [
        {"role": m.role, "content": m.text} for m in messages[:-1] if m.role in ("user", "assistant") and m.text.strip()
    ]
    return last.text, history


def _numbered(reply: ChatReply, root: str) -> str:
    """The sources an LLM's answer cites as [1], [2]: a numbered list of links to their pages."""
    if reply.mode != "llm" or not reply.sources:
        return ""
    href = permalinks(root)
    lines = [f"{i}. [{h.entry.question}]({href(h)})" for i, h in enumerate(reply.sources, 1)]
    return "\n\n" + f"**{Translator(reply.lang)('agent_sources')}**\n\n" + "\n".join(lines)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimated_tokens(text: str) -> int:
    """Tokens of `text` as OpenAI's tokenizers count them, near enough: one a Chinese, Japanese or Korean
    character, and one per 4 other characters (OpenAI's rule of thumb for English), rounded up."""
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def usage(messages: list[Message], answer: str) -> dict[str, int]:
    """OpenAI's `usage`, estimated (`estimated_tokens`): the messages sent and the answer given. The answer is
    the FAQ's when no LLM writes it, and an LLM reads the entries rather than these messages, so the counts
    are of the text exchanged with the client, not of an LLM's work."""
    prompt = sum(estimated_tokens(m.text) for m in messages)
    completion = estimated_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _extra(
    answered: bool,
    hits: tuple[Hit, ...],
    root: str,
    hl: str,
    confidence: float | None = None,
    state: str | None = None,
) -> dict[str, Any]:
    """The fields beyond OpenAI's: whether the FAQ answered, its confidence and state (when known: `answered`,
    `likely`, `not_covered`, as in `/api/search`), the entries."""
    extra = {"answered": answered, "hits": [hit_out(h, root, hl).model_dump() for h in hits]}
    if confidence is not None:
        extra["confidence"] = confidence
    return extra if state is None else {**extra, "state": state}


@router.post("/chat/completions")
async def completions(
    request: Request, body: CompletionIn, chat: ChatDep, events: EventsDep, settings: SettingsDep
) -> Any:
    """Answer the conversation's last question from the FAQ, as OpenAI's chat completions do."""
    _check_model(body.model, settings.api_model)
    question, history = _conversation(body.messages)
    root = base_url(request)
    href = permalinks(root)
    hl = detect_lang(question)
    ids = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), body.model
    if body.stream:
        cancel = Cancel()
        sources, answered, pieces = await asking.chat_stream(
            chat, events, question, history, channel=CHANNEL, href=href, hl=hl, cancelled=cancel
        )
        counted = body.messages if body.stream_options is not None and body.stream_options.include_usage else None
        return event_stream(_chunks(ids, sources, answered, read_in_thread(pieces, cancel), root, hl, counted))
    reply = await asking.chat(chat, events, question, history, channel=CHANNEL, href=href, hl=hl)
    if reply.error:
        log.warning("LLM answer replaced by the extractive one: %s", reply.error)
    completion_id, created, model = ids
    content = reply.answer + _numbered(reply, root)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage(body.messages, content),
        "mode": reply.mode,
        **_extra(reply.answered, reply.sources, root, reply.lang, reply.confidence, reply.state),
    }


def _chunk(ids: tuple[str, int, str], delta: dict[str, str], finish: str | None = None, **extra: Any) -> str:
    completion_id, created, model = ids
    chunk = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"


async def _chunks(
    ids: tuple[str, int, str],
    sources: tuple[Hit, ...],
    answered: bool,
    events: AsyncGenerator[tuple[str, Any], None],
    root: str,
    hl: str,
    counted: list[Message] | None = None,
) -> AsyncIterator[str]:
    """The answer as OpenAI's chunks: the role (with the hits), the pieces as written, the end, then with
    `counted` (the messages, when `stream_options.include_usage` asks) a chunk of `usage` alone, and `[DONE]`."""
    written: list[str] = []  # the content sent, for `usage`
    try:
        first = True
        async for name, value in events:
            if first:
                first = False
                yield _chunk(ids, {"role": "assistant", "content": ""}, **_extra(answered, sources, root, hl))
            if name == "delta":
                written.append(value)
                yield _chunk(ids, {"content": value})
                continue
            reply: ChatReply = value
            if reply.mode == "fallback":
                log.warning("LLM answer replaced by the extractive one: %s", reply.error)
                # What was written so far stopped short: the FAQ's own answer follows it.
                tail = ("\n\n" if written else "") + reply.answer
            else:
                tail = _numbered(reply, root)
            if tail:
                written.append(tail)
                yield _chunk(ids, {"content": tail})
            yield _chunk(ids, {}, "stop", mode=reply.mode)
        if counted is not None:
            completion_id, created, model = ids
            last = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}
            yield f"data: {json.dumps({**last, 'choices': [], 'usage': usage(counted, ''.join(written))})}\n\n"
    except Exception:  # the response has started; report in-band rather than cut the stream
        log.exception("chat completion stream failed")
        yield f"data: {json.dumps({'error': {'message': 'internal error', 'type': 'server_error', 'param': None, 'code': None}})}\n\n"
    finally:  # the reader gone mid-stream: the events' reader closed (and with it the LLM's stream), not left to GC
        await events.aclose()
    yield "data: [DONE]\n\n"
