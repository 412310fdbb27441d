"""Hostile pasted text against a real server and a real ingest: a 45 KB trace shaped to make a pattern backtrack
holds up no other request, and a 60 KB cell of spaces ingests in seconds (they had taken 35 s and 79 s)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from ingest import build_index
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server import create_app
from tests.support.hostile_text import hostile_texts
from tests.support.llm import fake_llm_app

pytestmark = pytest.mark.slow

SHAPES = ["dots", "spaces", "one frame repeated", "one frame repeated, on one line"]  # each fits in a URL once encoded


def test_healthz_answers_while_45_kb_hostile_traces_are_searched(settings: Settings, serve: Callable[..., Any]) -> None:
    url = serve(create_app(settings.with_(query_cache_size=0))).url
    searched: list[int] = []
    waits: list[tuple[float, float, float]] = []  # (sent, answered, took) of each /healthz

    def search(shape: str) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for n in range(3):
                pasted = f"{n}. " + hostile_texts(45_000)[shape]
                searched.append(client.get("/api/search", params={"q": pasted}).status_code)

    searchers = [threading.Thread(target=search, args=(shape,)) for shape in SHAPES]
    started = time.perf_counter()
    for thread in searchers:
        thread.start()
    with httpx.Client(base_url=url, timeout=120) as client:
        while any(thread.is_alive() for thread in searchers):
            sent = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            waits.append((sent, time.perf_counter(), time.perf_counter() - sent))
    for thread in searchers:
        thread.join()
    finished = time.perf_counter()
    assert searched == [200] * 12
    during = [took for sent, answered, took in waits if started < sent and answered < finished]
    assert during, "no /healthz was answered while the searches ran"
    assert max(during) < 1.0, f"/healthz waited {max(during):.2f} s behind the searches"


@pytest.fixture
def workspace(tmp_path: Path, settings: Settings) -> Settings:
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    (tmp_path / "faqs").mkdir()
    return Settings(data_dir=tmp_path / "data", sources_dir=tmp_path / "faqs")


def test_an_ingest_with_a_60_kb_cell_of_spaces_takes_seconds(workspace: Settings) -> None:
    question = "How do I get GPU quota?" + " " * 60_000 + "thanks"
    answer = "Ask in #infra." + " " * 60_000 + "."
    (workspace.sources_dir / "team.csv").write_text(
        f'question,answer\n"{question}","{answer}"\nWhere are the checkpoints?,Under /mnt/ckpt.\n', encoding="utf-8"
    )
    started = time.perf_counter()
    report = build_index(workspace)
    took = time.perf_counter() - started
    assert report.entries == 2
    assert took < 30, f"the ingest took {took:.1f} s"
    hit = KnowledgeBase.open(workspace).search_blocking("gpu quota").hits[0]
    assert hit.entry.question.startswith("How do I get GPU quota?")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_healthz_answers_while_a_chat_answer_with_hostile_fences_is_rendered(
    stream: bool, settings: Settings, serve: Callable[..., Any]
) -> None:
    """An LLM's answer holding a `mcschema` fence (whose lexer loops forever), a 20,000-character C# block and 10,000
    characters of Python: the reply comes, its blocks as plain or line-by-line highlighted text, and /healthz is
    answered within a second throughout. The LLM is a stand-in (tests/support/llm.py): none can run here."""
    llm_url = serve(fake_llm_app([])).url + "/v1"
    url = serve(create_app(settings.with_(llm_base_url=llm_url, llm_model="fences", llm_timeout=60))).url
    replies: list[str] = []

    def chat() -> None:
        headers = {"accept": "text/event-stream"} if stream else {}
        with httpx.Client(base_url=url, timeout=120) as client:
            reply = client.post("/api/chat", json={"message": "how do I resume training?"}, headers=headers)
            replies.append(reply.text)

    asking = threading.Thread(target=chat)
    asking.start()
    waits = []
    with httpx.Client(base_url=url, timeout=120) as client:
        while asking.is_alive():
            sent = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            waits.append(time.perf_counter() - sent)
    asking.join()
    assert len(replies) == 1 and "&lt;!--" in replies[0] and "/*a/*a" in replies[0]
    assert waits and max(waits) < 1.0, f"/healthz waited {max(waits):.2f} s behind the rendering"
