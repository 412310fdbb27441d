"""Generated answers from an OpenAI-compatible chat-completions endpoint, grounded in retrieved entries.

Off unless `KB_LLM_BASE_URL` and `KB_LLM_MODEL` are set. The model sees only the entries
retrieval found, numbered, and is asked to cite them as [1], [2]; `link_citations` turns
those numbers into links. Any failure, including running past `KB_LLM_TIMEOUT` seconds in
total, raises `LLMFailed`, and the caller falls back to the extractive answer. `complete`
gives one whole reply to any messages (`kb translate` drafts translations with it).
"""

from __future__ import annotations

import json
import re
import socket
import time
from contextlib import nullcontext
from typing import Any, Callable, Iterator, Sequence

import httpx

from .cancel import Cancel
from .errors import LLMFailed
from .hits import Hit
from .settings import Settings

__all__ = ["LLM", "build_messages", "link_citations"]

_LANG_NAMES = {"zh": "Simplified Chinese", "en": "English"}
_MAX_HISTORY = 6  # earlier turns sent along, so a follow-up reads in context
_MAX_ANSWER_CHARS = 4000  # per entry, to keep the prompt bounded

SYSTEM_PROMPT = """\
You answer questions from engineers who train large language models with RLHF frameworks \
(ChatLearn, ROLL, slime, Megatron, DeepSpeed, sglang, vLLM).
Use only the numbered FAQ entries in the user's message; do not add facts they do not contain.
Cite every statement with the number of the entry it comes from, in square brackets: [1], [2].
If the entries do not answer the question, say so in one sentence and point to the closest entry.
Keep commands, flags, configuration keys and error messages exactly as written, in `code`.
Be brief: a few sentences or a short list. Write in {language}."""


def build_messages(
    question: str, hits: Sequence[Hit], lang: str, history: Sequence[dict[str, Any]] = ()
) -> list[dict[str, str]]:
    """The chat-completions `messages`: instructions, recent turns, then entries and question."""
    language = _LANG_NAMES.get(lang, "English")
    messages = [{"role": "system", "content": SYSTEM_PROMPT.format(language=language)}]
    for turn in list(history)[-_MAX_HISTORY:]:
        role, content = turn.get("role"), turn.get("content")
        if role in ("user", "assistant") and isinstance(content, str) and content.strip():
            messages.append({"role": role, "content": content})
    blocks = []
    for number, hit in enumerate(hits, 1):
        e = hit.entry
        blocks.append(
            f"[{number}] Question: {e.question}\n"
            f"Source: {e.source_title} ({e.source_version})\n"
            f"Answer:\n{e.answer[:_MAX_ANSWER_CHARS]}"
        )
    entries = "\n\n".join(blocks) if blocks else "(no entries found)"
    messages.append({"role": "user", "content": f"FAQ entries:\n\n{entries}\n\nQuestion: {question}"})
    return messages


_CITATION = re.compile(r"[\[【]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]】](?!\()")


def link_citations(text: str, hits: Sequence[Hit], href: Callable[[Hit], str]) -> str:
    """Turn `[1]` (or `[1, 2]`, `【1】`) into Markdown links to the cited entries."""

    def link(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
        if not numbers or any(not 1 <= n <= len(hits) for n in numbers):
            return match.group(0)
        return "".join(f"[\\[{n}\\]]({href(hits[n - 1])})" for n in numbers)

    return _CITATION.sub(link, text)


class LLM:
    """A client for one OpenAI-compatible endpoint (vLLM, sglang, Ollama, a hosted API)."""

    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None):
        if not (settings.llm_base_url and settings.llm_model):
            raise LLMFailed(settings.llm_base_url or "(unset)", "KB_LLM_BASE_URL and KB_LLM_MODEL are both needed")
        self.model = settings.llm_model
        self.timeout = settings.llm_timeout
        self.url = settings.llm_base_url.rstrip("/") + "/chat/completions"
        headers = {"Accept": "text/event-stream"}
        if settings.llm_api_key:
            headers["Authorization"] = f"Bearer {settings.llm_api_key}"
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(self.timeout), transport=transport)

    @staticmethod
    def configured(settings: Settings) -> bool:
        return bool(settings.llm_base_url and settings.llm_model)

    def stream(
        self,
        question: str,
        hits: Sequence[Hit],
        lang: str,
        history: Sequence[dict[str, Any]] = (),
        cancelled: Cancel | None = None,
    ) -> Iterator[str]:
        """Yield the answer as it is written, in pieces; raises LLMFailed on any failure. Once `cancelled` is set
        (the reader has gone), the connection to the endpoint is closed at once, even while waiting for its next
        line, and nothing more is yielded."""
        payload = {
            "model": self.model,
            "messages": build_messages(question, hits, lang, history),
            "stream": True,
            "temperature": 0.2,
        }
        deadline = time.monotonic() + self.timeout
        wrote = False
        try:
            with (
                self._client.stream("POST", self.url, json=payload) as response,
                cancelled.closing(lambda: _hang_up(response)) if cancelled is not None else nullcontext(),
            ):
                if response.status_code != 200:
                    body = response.read().decode("utf-8", "replace").strip()[:300]
                    raise LLMFailed(self.url, f"HTTP {response.status_code}: {body or response.reason_phrase}")
                for line in response.iter_lines():
                    if cancelled is not None and cancelled.is_set():
                        return
                    if time.monotonic() > deadline:
                        raise LLMFailed(self.url, f"no complete answer within {self.timeout:g} s (KB_LLM_TIMEOUT)")
                    piece = self._piece(line)
                    if piece is None:
                        break
                    if piece:
                        wrote = True
                        yield piece
        except httpx.TimeoutException:
            raise LLMFailed(self.url, f"no answer within {self.timeout:g} s (KB_LLM_TIMEOUT)") from None
        except httpx.HTTPError as exc:
            if cancelled is not None and cancelled.is_set():
                return  # the connection was closed under the read because the reader had gone
            raise LLMFailed(self.url, f"{type(exc).__name__}: {exc}") from None
        if not wrote and not (cancelled is not None and cancelled.is_set()):
            raise LLMFailed(self.url, "the answer was empty")

    def answer(self, question: str, hits: Sequence[Hit], lang: str, history: Sequence[dict[str, Any]] = ()) -> str:
        """The whole answer at once (the streamed pieces joined)."""
        return "".join(self.stream(question, hits, lang, history)).strip()

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        temperature: float = 0.0,
        response_format: dict[str, Any] | None = None,
    ) -> str:
        """One reply to `messages`, not streamed; raises LLMFailed on any failure, including
        running past `KB_LLM_TIMEOUT` seconds in total. `response_format` is passed on (the
        endpoint's structured output, for a JSON reply)."""
        payload = {"model": self.model, "messages": list(messages), "stream": False, "temperature": temperature}
        if response_format is not None:
            payload["response_format"] = response_format
        deadline = time.monotonic() + self.timeout
        late = LLMFailed(self.url, f"no answer within {self.timeout:g} s (KB_LLM_TIMEOUT)")
        try:
            with self._client.stream(
                "POST", self.url, json=payload, headers={"Accept": "application/json"}
            ) as response:
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if time.monotonic() > deadline:
                        raise late
        except httpx.TimeoutException:
            raise late from None
        except httpx.HTTPError as exc:
            raise LLMFailed(self.url, f"{type(exc).__name__}: {exc}") from None
        text = body.decode("utf-8", "replace")
        if response.status_code != 200:
            raise LLMFailed(self.url, f"HTTP {response.status_code}: {text.strip()[:300] or response.reason_phrase}")
        try:
            reply = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, an integer of over 4,300 digits, or nested past the limit
            raise LLMFailed(self.url, f"not JSON: {text[:100]!r}") from None
        choices = reply.get("choices") if isinstance(reply, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise LLMFailed(self.url, f"not a chat-completions reply: {text[:100]!r}")
        if not content.strip():
            raise LLMFailed(self.url, "the answer was empty")
        return content

    def _piece(self, line: str) -> str | None:
        """Text from one server-sent-event line; None at `[DONE]`, "" for anything else."""
        if not line.startswith("data:"):
            return ""
        data = line[5:].strip()
        if data == "[DONE]":
            return None
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, an integer of over 4,300 digits, or nested past the limit
            raise LLMFailed(self.url, f"not JSON in the stream: {data[:100]!r}") from None
        if isinstance(chunk, dict) and "error" in chunk:
            raise LLMFailed(self.url, f"error in the stream: {str(chunk['error'])[:200]}")
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not choices:
            return ""  # an event without text (a usage report, a keep-alive)
        choice = choices[0] if isinstance(choices, list) else None
        delta = (choice.get("delta") or choice.get("message") or {}) if isinstance(choice, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        if delta is None or not isinstance(content, (str, type(None))):
            raise LLMFailed(self.url, f"not a chat-completions event: {data[:100]!r}")
        return content or ""

    def close(self) -> None:
        self._client.close()


def _hang_up(response: httpx.Response) -> None:
    """End a response being read in another thread: shutting its socket down wakes a read blocked on it (closing
    the socket would not) and tells the endpoint the reader has gone."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        sock.shutdown(socket.SHUT_RDWR)
    else:  # another transport (a test's): closing is all there is
        response.close()
