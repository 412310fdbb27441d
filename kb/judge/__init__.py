"""The second stage: a judge that reads the first stage's best candidates against the question.

Two judges, one interface (`Judge.scores`: a score in [0, 1] for each candidate, blocking):
a sentence-transformers cross-encoder (`KB_RERANK_MODEL`, kb/judge/cross_encoder.py) or the
configured LLM asked which candidate answers (`KB_RERANK=llm`, kb/judge/llm.py). Its score
is one more column of the evidence the calibrated models weigh (kb/scoring.py); `Judging`
runs it off the event loop within `KB_RERANK_TIMEOUT`, and a verdict that does not come,
or comes unusable, leaves the first stage's order and answer. Each kind of failure is
logged once and counted, with what was judged, skipped and cached, for `/healthz`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, Sequence

import numpy as np

from ..entries import Entry
from ..errors import JudgeFailed
from ..settings import Settings

__all__ = ["Judge", "Judging", "open_judge"]

log = logging.getLogger("kb.judge")


class Judge(Protocol):
    kind: str  # "cross-encoder" or "llm"
    model: str  # the cross-encoder's name or path, the LLM's model name

    def scores(self, question: str, candidates: Sequence[Entry]) -> np.ndarray:
        """A score in [0, 1] for each candidate (in the question's language); raises JudgeFailed."""
        ...

    def close(self) -> None: ...


def open_judge(settings: Settings) -> "Judging | None":
    """The judge the settings configure, loaded (None when there is none)."""
    if settings.judge == "cross-encoder":
        from .cross_encoder import CrossEncoderJudge

        judge: Judge = CrossEncoderJudge(settings.rerank_model)
    elif settings.judge == "llm":
        from .llm import LLMJudge

        judge = LLMJudge(settings)
    else:
        return None
    return Judging(judge, settings.rerank_timeout)


class Judging:
    """A judge run in worker threads of its own (one for a cross-encoder, whose model uses
    every core; several for an LLM, which waits on the network), each verdict awaited at
    most `timeout` seconds."""

    def __init__(self, judge: Judge, timeout: float):
        self.judge = judge
        self.timeout = timeout
        workers = 1 if judge.kind == "cross-encoder" else 8
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kb-judge")
        self._lock = threading.Lock()
        self.counts = {"judged": 0, "skipped": 0, "cached": 0}
        self.failed = dict.fromkeys(JudgeFailed.KINDS, 0)

    def count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    async def scores(self, question: str, candidates: Sequence[Entry]) -> np.ndarray | None:
        """The judge's scores of the candidates, or None when it failed (logged once per kind, counted)."""
        future = asyncio.get_running_loop().run_in_executor(self._executor, self.judge.scores, question, candidates)
        try:
            scores = await asyncio.wait_for(future, self.timeout)
        except asyncio.TimeoutError:
            self._failed(JudgeFailed("timeout", f"no verdict within {self.timeout:g} s (KB_RERANK_TIMEOUT)"))
            return None
        except JudgeFailed as exc:
            self._failed(exc)
            return None
        except Exception as exc:  # whatever the model or the endpoint did, the first stage's order stands
            self._failed(JudgeFailed("error", f"{type(exc).__name__}: {exc}"))
            return None
        self.count("judged")
        return scores

    def _failed(self, exc: JudgeFailed) -> None:
        with self._lock:
            first = self.failed[exc.kind] == 0
            self.failed[exc.kind] += 1
        if first:
            log.warning(
                "%s judge %s: %s; the first stage's order stands (logged once for this kind of failure)",
                self.judge.kind,
                self.judge.model,
                exc.message,
            )

    def stats(self) -> dict[str, Any]:
        """What /healthz reports: the judge, and how many questions it judged, skipped, found cached, failed on."""
        with self._lock:
            return {"kind": self.judge.kind, "model": self.judge.model, **self.counts, "failed": dict(self.failed)}

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.judge.close()
