"""The query adapter: a linear map on the question's embedding, fitted to what the knowledge base knows.

The embedding model is a general one: it does not know that "KeyError: 'llama'" means an old
transformers, or that "cannot open input file" and "Unable to pre-compile" are the same
trouble. The knowledge base holds labelled questions that do (each entry's own questions in
both languages, the alternates and links maintainers made, the questions it does not cover):
`fit` learns from them a map that moves a question's vector nearer the passages of the entry
that answers it,

    q  ->  (q + W q) / |q + W q|

with W fitted by a softmax over the entries (an entry's logit the best cosine of its vectors)
and one more class, "no entry", for the questions the FAQ does not cover; a penalty on W keeps
the map near the identity, so a question unlike any it learned from is searched nearly as
before. The passages, the background and the index are untouched: only the query side moves,
after the model, exactly (a change far smaller than a 4-bit step of the model's own weights)
and in microseconds (one 384 x 384 product).

An adapter is written into an index build (`adapter.npz`, named in its meta.json) by `kb tune`,
and carried into the next build by `kb ingest` while it fits (the same model, the same sources).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

import faiss
import numpy as np

from .dense import EntryRows

__all__ = ["QueryAdapter", "Examples", "FitSettings", "fit_matrix", "NO_ENTRY", "FILE"]

FILE = "adapter.npz"
NO_ENTRY = -1  # the label of a question the FAQ does not cover


@dataclass(frozen=True)
class Examples:
    """Labelled query vectors, what an adapter is fitted on: each the model's embedding of a
    question, and the entry that answers it ("" for none)."""

    vectors: np.ndarray  # n x d
    entries: tuple[str, ...]  # entry ids, "" for a question the FAQ does not cover
    kinds: tuple[str, ...]  # where each came from: "entry", "alternate", "not-covered", "link", a file's name
    keys: tuple[str, ...]  # each one's question key (kb.text.question_key), to hold questions out

    def __post_init__(self) -> None:
        vectors = np.asarray(self.vectors, dtype=np.float32)
        if not len(self.entries) == len(self.kinds) == len(self.keys) == len(vectors):
            raise ValueError(
                f"{len(vectors)} vectors, {len(self.entries)} entries, {len(self.kinds)} kinds, {len(self.keys)} keys"
            )
        object.__setattr__(self, "vectors", vectors.reshape(len(self.entries), -1) if len(vectors) else vectors)

    @classmethod
    def empty(cls, dim: int) -> "Examples":
        return cls(np.zeros((0, dim), np.float32), (), (), ())

    def __len__(self) -> int:
        return len(self.entries)

    def __add__(self, other: "Examples") -> "Examples":
        if not len(other):
            return self
        if not len(self):
            return other
        return Examples(
            np.concatenate([self.vectors, other.vectors]),
            self.entries + other.entries,
            self.kinds + other.kinds,
            self.keys + other.keys,
        )

    def take(self, keep: np.ndarray) -> "Examples":
        idx = np.flatnonzero(keep)
        return Examples(
            self.vectors[idx],
            tuple(self.entries[i] for i in idx),
            tuple(self.kinds[i] for i in idx),
            tuple(self.keys[i] for i in idx),
        )

    def without(self, keys: set[str]) -> "Examples":
        """These examples but those whose question key is in `keys` (a fold held out)."""
        return self.take(np.array([k not in keys for k in self.keys], dtype=bool))

    def labels(self, positions: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """The vectors and labels (entry positions, NO_ENTRY) of the examples whose entry is among
        `positions` (entry id -> position) or none: an entry no longer in the index teaches nothing."""
        keep = np.array([not e or e in positions for e in self.entries], dtype=bool)
        labels = np.array([positions[e] if e else NO_ENTRY for e, k in zip(self.entries, keep) if k], dtype=np.int64)
        return self.vectors[keep], labels

    def counts(self) -> dict[str, int]:
        """How many examples of each kind."""
        found: dict[str, int] = {}
        for kind in self.kinds:
            found[kind] = found.get(kind, 0) + 1
        return found


@dataclass(frozen=True)
class QueryAdapter:
    """A fitted map of query vectors, the model it was fitted for, what it was fitted on and how."""

    matrix: np.ndarray  # A = I + W, d x d, float32: a query q is searched as A q / |A q|
    model: str  # the embedding model whose query vectors it maps
    about: dict[str, Any] = field(default_factory=dict)  # when, how many of each kind, the settings (kb.tuning)
    examples: Examples | None = field(default=None, repr=False)  # kept so that a fold can be fitted without some

    def __post_init__(self) -> None:
        matrix = np.ascontiguousarray(self.matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"a query adapter is a square matrix, not one of shape {matrix.shape}")
        object.__setattr__(self, "matrix", matrix)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def digest(self) -> str:
        """The first 16 hex digits of the matrix's SHA-256: names this adapter in reports and /healthz."""
        return hashlib.sha256(self.matrix.tobytes()).hexdigest()[:16]

    @property
    def settings(self) -> "FitSettings":
        """The settings it was fitted with (the defaults where it does not say)."""
        given = self.about.get("settings", {})
        known = {f.name for f in fields(FitSettings)}
        return FitSettings(**{k: v for k, v in given.items() if k in known})

    def __call__(self, q: np.ndarray) -> np.ndarray:
        """One query vector, mapped and normalised.

        The product runs on the calling thread in FAISS's SIMD loop: NumPy would hand a product
        this size to OpenBLAS's threads (see `kb.dense.matvec`), and its own loop (`einsum`)
        takes about three times as long."""
        query = np.ascontiguousarray(q, dtype=np.float32)
        v = np.empty(self.dim, dtype=np.float32)
        untyped: Any = faiss  # the type stubs do not know faiss's vector kernels
        untyped.fvec_inner_products_ny(
            faiss.swig_ptr(v), faiss.swig_ptr(query), faiss.swig_ptr(self.matrix), self.dim, self.dim
        )
        norm = float(np.sqrt(v @ v))
        mapped: np.ndarray = v / norm if norm > 0 else v
        return mapped

    def many(self, vectors: np.ndarray) -> np.ndarray:
        """Rows of query vectors, each mapped and normalised."""
        v = np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim) @ self.matrix.T
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        mapped: np.ndarray = np.ascontiguousarray(v / np.where(norms > 0, norms, 1.0), dtype=np.float32)
        return mapped

    def summary(self) -> dict[str, Any]:
        """What /healthz, the insights page and `kb tune` say of it."""
        return {
            "fitted_at": str(self.about.get("fitted_at", "")),
            "questions": int(self.about.get("questions", 0)),
            "links": int(self.about.get("links", 0)),
            "digest": self.digest,
        }

    def save(self, path: Path) -> None:
        about = json.dumps({"model": self.model, **self.about}, ensure_ascii=False)
        examples = self.examples or Examples.empty(self.dim)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            matrix=self.matrix,
            about=np.array(about),
            vectors=examples.vectors,
            entries=np.array(examples.entries, dtype=str),
            kinds=np.array(examples.kinds, dtype=str),
            keys=np.array(examples.keys, dtype=str),
        )
        path.write_bytes(buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> "QueryAdapter":
        """An adapter file; ValueError (or OSError) says what is wrong with it."""
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("not a query adapter (a .npy array, not an .npz archive)")
        with data:
            missing = [name for name in ("matrix", "about", "vectors", "entries", "kinds", "keys") if name not in data]
            if missing:
                raise ValueError(f"not a query adapter (no {', '.join(missing)})")
            about = json.loads(str(data["about"]))
            matrix = data["matrix"]
            examples = Examples(
                data["vectors"],
                tuple(str(x) for x in data["entries"]),
                tuple(str(x) for x in data["kinds"]),
                tuple(str(x) for x in data["keys"]),
            )
        if not isinstance(about, dict) or not isinstance(about.get("model"), str):
            raise ValueError("its description names no model")
        if matrix.dtype.kind != "f":
            raise ValueError(f"its matrix holds {matrix.dtype}, not floats")
        model = about.pop("model")
        return cls(matrix, model, about, examples)


@dataclass(frozen=True)
class FitSettings:
    """How `fit_matrix` fits. The defaults are what `kb calibrate`'s held-out folds chose (docs/insights.md)."""

    rank: int = 0  # 0: a full d x d map; r > 0: W = U V^T of rank r
    decay: float = 0.003  # the penalty on |W|^2 (beside the mean loss), which keeps the map near the identity
    temperature: float = 100.0  # cosines are multiplied by this before the softmax (as e5 was trained)
    steps: int = 600
    learning_rate: float = 0.002
    no_entry_weight: float = 1.0  # how much a not-covered question counts, beside an answered one
    seed: int = 0


def fit_matrix(
    vectors: np.ndarray,
    labels: np.ndarray,
    passages: np.ndarray,
    rows: EntryRows,
    settings: FitSettings = FitSettings(),
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """A = I + W fitted to query `vectors` labelled with entry positions (or NO_ENTRY) against
    the entries' `passages` (rows grouped by entry as `rows` says).

    Full-batch Adam on the mean cross-entropy of a softmax over the entries (an entry's logit:
    the temperature times the best cosine of its passages with the mapped query) and a
    "no entry" class (the temperature times a learned cosine), plus `decay` |W|^2.
    `progress(step, steps)` is called after each step.
    """
    q = np.asarray(vectors, dtype=np.float32)
    p = np.asarray(passages, dtype=np.float32)
    n_entries = len(rows.start) - 1
    given = np.asarray(labels, dtype=np.int64)
    labels = np.where(given < 0, n_entries, given)  # "no entry" is the last class
    weight = np.where(given < 0, settings.no_entry_weight, 1.0)
    weight = (weight / weight.sum() if len(weight) else weight).astype(np.float32)
    onehot = np.zeros((len(q), n_entries + 1), dtype=np.float32)
    onehot[np.arange(len(q)), labels] = 1.0
    params = _initial_params(q, p, settings)
    moments = {name: (np.zeros_like(value), np.zeros_like(value)) for name, value in params.items()}
    for step in range(1, settings.steps + 1):
        grads = _gradients(params, q, p, rows, onehot, weight, settings)
        _adam_step(params, grads, moments, step, settings.learning_rate)
        if progress is not None:
            progress(step, settings.steps)
    matrix: np.ndarray = (np.eye(q.shape[1]) + _w_of(params)).astype(np.float32)
    return matrix


def _w_of(params: dict[str, np.ndarray]) -> np.ndarray:
    """W, whole or as the low-rank product U V^T."""
    return params["w"] if "w" in params else params["u"] @ params["v"].T


def _initial_params(q: np.ndarray, p: np.ndarray, settings: FitSettings) -> dict[str, np.ndarray]:
    """W at zero (or U, V near it, for a low rank), and the "no entry" class's cosine `c`."""
    d = q.shape[1]
    rng = np.random.default_rng(settings.seed)
    params: dict[str, np.ndarray]
    if settings.rank:
        params = {
            "u": rng.normal(0, 1e-3, (d, settings.rank)).astype(np.float32),
            "v": rng.normal(0, 1e-3, (d, settings.rank)).astype(np.float32),
        }
    else:
        params = {"w": np.zeros((d, d), dtype=np.float32)}
    # The "no entry" class's cosine starts where the answered questions' best cosines are low.
    params["c"] = np.array([np.quantile((q @ p.T).max(axis=1), 0.25) if len(q) else 0.0], dtype=np.float32)
    return params


def _gradients(
    params: dict[str, np.ndarray],
    q: np.ndarray,
    p: np.ndarray,
    rows: EntryRows,
    onehot: np.ndarray,
    weight: np.ndarray,
    settings: FitSettings,
) -> dict[str, np.ndarray]:
    """The loss's gradient with respect to each parameter: the softmax over the entries' best cosines with the
    mapped queries and the "no entry" class, taken forward and back."""
    n_entries, owners, tau = len(rows.start) - 1, rows.owners, settings.temperature
    w = _w_of(params)
    u = q + q @ w.T
    norm = np.linalg.norm(u, axis=1, keepdims=True)
    mapped = u / norm
    cosines = mapped @ p.T  # n x rows
    best = np.maximum.reduceat(cosines, rows.start[:-1], axis=1)  # n x entries
    logits = tau * np.concatenate([best, np.full((len(q), 1), params["c"][0])], axis=1)
    logits -= logits.max(axis=1, keepdims=True)
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    g_logits = (prob - onehot) * weight[:, None]  # d loss / d logit, per example
    g_best = tau * g_logits[:, :n_entries]
    chosen = cosines == best[:, owners]  # each entry's best passage
    g_cos = g_best[:, owners] * chosen
    g_mapped = g_cos @ p
    g_u = (g_mapped - mapped * (mapped * g_mapped).sum(axis=1, keepdims=True)) / norm
    g_w = g_u.T @ q
    grads: dict[str, np.ndarray] = {"c": np.array([tau * g_logits[:, n_entries].sum()], dtype=np.float32)}
    if "w" in params:
        grads["w"] = g_w + 2 * settings.decay * params["w"]
    else:
        grads["u"] = g_w @ params["v"] + 2 * settings.decay * params["u"]
        grads["v"] = g_w.T @ params["u"] + 2 * settings.decay * params["v"]
    return grads


def _adam_step(
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    moments: dict[str, tuple[np.ndarray, np.ndarray]],
    step: int,
    learning_rate: float,
) -> None:
    """One Adam update of `params` in place (moments decayed at 0.9 and 0.999, bias-corrected)."""
    for name, g in grads.items():
        m, v = moments[name]
        m *= 0.9
        m += 0.1 * g
        v *= 0.999
        v += 0.001 * g * g
        step_size = learning_rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        params[name] = (params[name] - step_size).astype(np.float32)
