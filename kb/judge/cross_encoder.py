"""A sentence-transformers cross-encoder as the judge: each candidate read with the question, in one batch."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..entries import Entry
from ..errors import SettingsError

__all__ = ["CrossEncoderJudge", "passage"]

MAX_ANSWER_CHARS = 2000  # the model reads its first few hundred tokens anyway


def passage(entry: Entry) -> str:
    """What the judge reads of an entry: its question, then its answer."""
    return f"{entry.question}\n{entry.answer[:MAX_ANSWER_CHARS]}"


class CrossEncoderJudge:
    kind = "cross-encoder"

    def __init__(self, model: str):
        """Load `model` (a hub name or a local path; needs the `st` extra); SettingsError names
        KB_RERANK_MODEL when it cannot be loaded."""
        self.model = model
        try:
            import torch
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise SettingsError(
                "KB_RERANK_MODEL", model, "empty, or the `st` extra installed: pip install 'kb[st]'"
            ) from None
        try:
            self._model = CrossEncoder(model)
        except Exception as exc:  # not found, not a model, offline without it cached
            raise SettingsError(
                "KB_RERANK_MODEL", model, f"a CrossEncoder that loads ({type(exc).__name__}: {exc})"
            ) from None
        if self._model.num_labels != 1:
            raise SettingsError(
                "KB_RERANK_MODEL", model, f"a reranker with one output (this one has {self._model.num_labels})"
            )
        self._sigmoid = torch.nn.Sigmoid()  # scores in [0, 1], whatever activation the model was saved with

    def scores(self, question: str, candidates: Sequence[Entry]) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        pairs = [(question, passage(e)) for e in candidates]
        scores = self._model.predict(pairs, batch_size=len(pairs), activation_fn=self._sigmoid, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float64).reshape(len(candidates))

    def close(self) -> None:
        pass
