"""The LLM as the judge: one request with the question and the numbered candidates, asking
which one answers it, or none, as JSON (the endpoint's structured output where it has one)."""

from __future__ import annotations

import json
import re
from typing import Sequence

import numpy as np

from ..entries import Entry
from ..errors import JudgeFailed, LLMFailed
from ..llm import LLM
from ..settings import Settings
from .cross_encoder import passage

__all__ = ["LLMJudge", "judge_messages", "RESPONSE_FORMAT"]

PROMPT = """\
You judge which FAQ entry answers an engineer's question about training large language models.
Read the numbered entries and the question. Reply with JSON only: {"answer": N} where N is the \
number of the entry that answers the question, or {"answer": "none"} when no entry answers it."""

RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"answer": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["none"]}]}},
            "required": ["answer"],
            "additionalProperties": False,
        },
    },
}


def judge_messages(question: str, candidates: Sequence[Entry]) -> list[dict[str, str]]:
    blocks = "\n\n".join(f"[{n}] {passage(e)}" for n, e in enumerate(candidates, 1))
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": f"FAQ entries:\n\n{blocks}\n\nQuestion: {question}"},
    ]


def verdict(reply: str, count: int) -> int | None:
    """The candidate a reply names (1-based), None for "none"; raises JudgeFailed for anything else."""
    text = reply.strip()  # a fence around the JSON taken off, in linear time
    if text.startswith("```"):
        text = text[3:].removeprefix("json").strip()
    if text.endswith("```"):
        text = text[:-3].strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, an integer of over 4,300 digits, or nested past the limit
        raise JudgeFailed("invalid", f"a reply that is not JSON: {reply[:100]!r}") from None
    answer = data.get("answer", data) if isinstance(data, dict) else data
    if answer is None or (isinstance(answer, str) and answer.strip().lower() == "none") or answer == 0:
        return None
    if isinstance(answer, str) and answer.strip().isdigit():
        answer = int(answer)
    if not isinstance(answer, int) or isinstance(answer, bool):
        raise JudgeFailed("invalid", f"a reply that names no candidate: {reply[:100]!r}")
    if not 1 <= answer <= count:
        raise JudgeFailed("out_of_range", f"candidate {answer} named, of {count}")
    return answer


class LLMJudge:
    kind = "llm"

    def __init__(self, settings: Settings):
        self._llm = LLM(settings.with_(llm_timeout=settings.rerank_timeout))
        self.model = settings.llm_model
        self.structured = True  # until the endpoint refuses `response_format`

    def scores(self, question: str, candidates: Sequence[Entry]) -> np.ndarray:
        """1 for the candidate named, 0 for the others (all 0 for "none")."""
        scores = np.zeros(len(candidates))
        if not candidates:
            return scores
        messages = judge_messages(question, candidates)
        try:
            try:
                reply = self._llm.complete(messages, response_format=RESPONSE_FORMAT if self.structured else None)
            except LLMFailed as exc:
                if not (self.structured and re.search(r"HTTP (400|422)", exc.message)):
                    raise
                self.structured = False  # an endpoint without structured output: the prompt asks for JSON anyway
                reply = self._llm.complete(messages)
        except LLMFailed as exc:
            raise JudgeFailed("timeout" if "no answer within" in exc.message else "error", exc.message) from None
        chosen = verdict(reply, len(candidates))
        if chosen is not None:
            scores[chosen - 1] = 1.0
        return scores

    def close(self) -> None:
        self._llm.close()
