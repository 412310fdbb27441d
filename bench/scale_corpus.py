"""The synthetic corpus of bench/bench_scale.py: entries with vectors shaped like sentence embeddings (a common
direction, topic centres in a 32-dimensional subspace, noise), words from a Zipf-like vocabulary of made-up words,
and queries near entries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kb.entries import Entry
from kb.lexical import FieldIndex, LexicalIndex
from kb.text import STOPWORDS

DIM = 384
QUERIES = 200
VOCABULARY = 50_000
QUESTION_WORDS = 8
ANSWER_WORDS = 30


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def embedding_like(n: int, seed: int = 0, latent: int = 32, chunk: int = 100_000) -> np.ndarray:
    """`n` unit vectors shaped like sentence embeddings (see the module docstring): a common
    direction, plus one of sqrt(n) topic centres and noise in a `latent`-dimensional
    subspace, plus a little noise in all dimensions."""
    rng = np.random.default_rng(seed)
    mean = unit(rng.standard_normal(DIM))
    basis = np.linalg.qr(rng.standard_normal((DIM, latent)))[0].T  # orthonormal rows
    centres = rng.standard_normal((max(16, int(n**0.5)), latent))
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        z = centres[rng.integers(0, len(centres), m)] + 0.8 * rng.standard_normal((m, latent))
        out[start : start + m] = unit(3.0 * mean + 0.2 * (z @ basis) + 0.012 * rng.standard_normal((m, DIM)))
    return out


def vector_stats(vectors: np.ndarray, sample: int = 659) -> tuple[float, float, float]:
    """Mean pairwise cosine, mean nearest-neighbour cosine and effective dimensions (participation
    ratio of the spectrum) of the first `sample` vectors: 659, as many as the shipped FAQs and
    the background sentences, so the figures compare with theirs."""
    x = vectors[:sample].astype(np.float64)
    cos = x @ x.T
    pairs = cos[np.triu_indices(len(x), 1)].mean()
    np.fill_diagonal(cos, -1)
    spectrum = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
    share = spectrum / spectrum.sum()
    return float(pairs), float(cos.max(1).mean()), float(1 / (share**2).sum())


def made_up_words(count: int, seed: int = 0) -> list[str]:
    """Distinct lower-case words of 5 to 9 letters, none a stopword."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: dict[str, None] = {}
    while len(words) < count:
        for length in rng.integers(5, 10, count):
            word = "".join(rng.choice(letters, length))
            if word not in STOPWORDS:
                words[word] = None
    return list(words)[:count]


def zipf_words(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Word ids with Zipf-Mandelbrot frequencies (1 / (rank + 2.7)), as in natural text."""
    weights = 1 / (np.arange(VOCABULARY) + 2.7)
    cdf = np.cumsum(weights / weights.sum())
    return np.minimum(np.searchsorted(cdf, rng.random(shape)), VOCABULARY - 1).astype(np.int32)


@dataclass
class Corpus:
    size: int
    vectors: np.ndarray
    questions: np.ndarray  # word ids, (size, QUESTION_WORDS)
    answers: np.ndarray  # word ids, (size, ANSWER_WORDS)
    vocabulary: list[str]
    entries: list[Entry]


def make_entries(n: int, rng: np.random.Generator) -> list[Entry]:
    frameworks = [f"Frame{chr(97 + i)}" for i in range(8)]
    topic_share = 1 / np.arange(1, 41)
    topics = rng.choice(40, n, p=topic_share / topic_share.sum())
    framework_of = rng.integers(0, 8, n)
    source_of = rng.integers(0, 100, n)
    return [
        Entry(
            id=f"syn-{i:07d}",
            question=f"q{i}",
            answer="",
            source=f"source{s:02d}",
            source_title="Synthetic FAQ",
            source_version="1",
            source_url="https://example.com/faq.md",
            framework=frameworks[f],
            section="",
            url="https://example.com/faq.md",
            lang="zh" if i % 2 else "en",
            tags=(frameworks[f].lower(), f"topic{t:02d}"),
            line=i + 1,
        )
        for i, (f, s, t) in enumerate(zip(framework_of.tolist(), source_of.tolist(), topics.tolist()))
    ]


def make_corpus(n: int, seed: int = 0) -> Corpus:
    rng = np.random.default_rng(seed + 1)
    return Corpus(
        size=n,
        vectors=embedding_like(n, seed),
        questions=zipf_words(rng, (n, QUESTION_WORDS)),
        answers=zipf_words(rng, (n, ANSWER_WORDS)),
        vocabulary=made_up_words(VOCABULARY),
        entries=make_entries(n, rng),
    )


def lexical_index(corpus: Corpus) -> LexicalIndex:
    """The lexical index from (word id, entry id) pairs: no tokenizer, no loop per word."""
    n = corpus.size
    rows = np.arange(n, dtype=np.int64)
    question = FieldIndex.from_ids(corpus.vocabulary, corpus.questions.ravel(), np.repeat(rows, QUESTION_WORDS), n)
    both_words = np.concatenate([corpus.questions, corpus.answers], axis=1)
    both = FieldIndex.from_ids(corpus.vocabulary, both_words.ravel(), np.repeat(rows, QUESTION_WORDS + ANSWER_WORDS), n)
    return LexicalIndex.from_fields(question, both)


@dataclass
class Queries:
    vectors: np.ndarray
    texts: list[str]
    near: np.ndarray  # the entry each query was made from


def make_queries(corpus: Corpus, count: int = QUERIES, seed: int = 7) -> Queries:
    rng = np.random.default_rng(seed)
    near = rng.choice(corpus.size, count, replace=False)
    vectors = unit(corpus.vectors[near] + 0.025 * rng.standard_normal((count, DIM)))
    texts = []
    for i in near:
        words = rng.choice(corpus.questions[i], 2, replace=False).tolist() + [int(rng.choice(corpus.answers[i]))]
        texts.append(" ".join(corpus.vocabulary[w] for w in words))
    return Queries(vectors, texts, near)
