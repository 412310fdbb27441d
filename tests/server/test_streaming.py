"""Streamed answers whose reader leaves: the LLM's stream is closed at once, on both streaming routes.

No LLM can run here: a stand-in (tests/support/llm.py) serves OpenAI's chat completions on a loopback
port, and its `pausing` model writes one piece and then nothing for 30 s, as a model thinking does.
The app is a real uvicorn; the reader is a real HTTP client that leaves once the answer has begun.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import httpx
import pytest

from kb.settings import Settings
from server import create_app
from tests.support.llm import GOOD_PIECES, fake_llm_app

pytestmark = pytest.mark.slow

TRIES = 20
ROUTES = {
    "/api/chat": ({"message": "how do I resume training with slime?", "lang": "en"}, {"Accept": "text/event-stream"}),
    "/v1/chat/completions": (
        {
            "model": "kb",
            "stream": True,
            "messages": [{"role": "user", "content": "how do I resume training with slime?"}],
        },
        {},
    ),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_the_llm_stream_closes_when_the_reader_leaves(
    route: str, settings: Settings, serve: Callable[..., Any]
) -> None:
    requests: list[dict[str, Any]] = []
    llm_url = serve(fake_llm_app(requests)).url + "/v1"
    url = serve(create_app(settings.with_(llm_base_url=llm_url, llm_model="pausing", llm_timeout=60))).url
    body, headers = ROUTES[route]
    first_piece = GOOD_PIECES[0].split()[0]  # "Set": the answer has begun
    waited = []
    for _ in range(TRIES):
        with httpx.stream("POST", url + route, json=body, headers=headers, timeout=30) as reply:
            assert reply.status_code == 200
            assert any(first_piece in line for line in reply.iter_lines())  # stops at the first piece
        left = time.monotonic()
        closed = requests[-1]["closed"]
        assert closed.wait(2), f"{route}: the LLM's stream was still open 2 s after the reader left"
        waited.append(time.monotonic() - left)
    assert len(requests) == TRIES and max(waited) < 2
