"""The LLM as the judge (KB_RERANK=llm), against a stand-in OpenAI-compatible server on a
loopback port (tests/support/judges.py: real uvicorn, real HTTP; the model name picks the verdict).
A verdict for the second candidate puts it first; "none" abstains; prose, a candidate that
does not exist and a reply past KB_RERANK_TIMEOUT each leave the first stage's order and
answer, logged once per kind and counted in /healthz. The judge never holds the event loop.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.errors import JudgeFailed
from kb.judge.llm import verdict
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server import create_app
from tests.support.judges import judge_llm_app, judged_calibration
from tests.support.paths import DATA

QUESTION = "how do I resume training from a checkpoint"


OPENED: list[KnowledgeBase] = []


def open_kb(settings: Settings) -> KnowledgeBase:
    """A knowledge base whose judge (and its connections) is closed after the test."""
    kb = KnowledgeBase.open(settings)
    OPENED.append(kb)
    return kb


@pytest.fixture(autouse=True)
def close_judges() -> Iterator[None]:
    yield
    while OPENED:
        judging = OPENED.pop().judging
        if judging is not None:
            judging.close()


@pytest.fixture(scope="module")
def stand_in(serve: Callable[..., Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    yield f"{serve(judge_llm_app(requests)).url}/v1", requests


@pytest.fixture(scope="module")
def judge_with(
    settings: Settings, stand_in: tuple[str, list], tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Settings]:
    """`judge_with(model, **settings)`: settings with the stand-in judging as `model`; the judge
    weighed far above the first stage, and its score of the best entry deciding whether to answer."""
    path = judged_calibration(
        tmp_path_factory.mktemp("cal") / "calibration.json", "llm", "second", rank=1e6, decides=True
    )

    def make(model: str, **changes: Any) -> Settings:
        return settings.with_(llm_base_url=stand_in[0], llm_model=model, rerank="llm", calibration=str(path), **changes)

    return make


def test_a_verdict_for_the_second_candidate_puts_it_first(
    judge_with: Callable[..., Settings], stand_in: tuple[str, list]
) -> None:
    kb = open_kb(judge_with("second"))
    first = kb.search_blocking(QUESTION, judged=False)
    result = kb.search_blocking(QUESTION)
    assert result.hits[0].entry == first.hits[1].entry and result.hits[1].entry == first.hits[0].entry
    assert result.answered
    request = stand_in[1][-1]
    assert request["response_format"]["type"] == "json_schema"
    prompt = request["messages"][-1]["content"]
    assert re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE) == [str(n) for n in range(1, 11)]  # KB_RERANK_TOP of them
    assert prompt.endswith(f"Question: {first.searched}")


def test_none_abstains(judge_with: Callable[..., Settings]) -> None:
    kb = open_kb(judge_with("none"))
    first = kb.search_blocking(QUESTION, judged=False, precision=0.5)  # the first stage's confidence: 0.21
    result = kb.search_blocking(QUESTION, precision=0.5)
    assert first.answered and not result.answered
    assert [h.entry.id for h in result.hits] == [h.entry.id for h in first.hits]


def test_an_endpoint_without_structured_output_is_asked_without_it(judge_with: Callable[..., Settings]) -> None:
    kb = open_kb(judge_with("plain"))
    first = kb.search_blocking(QUESTION, judged=False)
    assert kb.search_blocking(QUESTION).hits[0].entry == first.hits[1].entry


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "kind"), [("garbage", "invalid"), ("out-of-range", "out_of_range"), ("slow", "timeout")]
)
def test_an_unusable_verdict_leaves_the_first_stage(
    judge_with: Callable[..., Settings], model: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    kb = open_kb(judge_with(model, rerank_timeout=1.0))
    assert kb.judging is not None
    with caplog.at_level(logging.WARNING, logger="kb.judge"):
        for question in (QUESTION, "显存不够怎么办"):
            started = time.monotonic()
            assert kb.search_blocking(question) == kb.search_blocking(question, judged=False)  # order and answer
            assert time.monotonic() - started < 2.5  # the 3 s stand-in was not waited for
    assert kb.judging.stats()["failed"] == {"invalid": 0, "out_of_range": 0, "timeout": 0, "error": 0} | {kind: 2}
    assert len([r for r in caplog.records if r.name == "kb.judge"]) == 1  # logged once for its kind


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [
        ('{"answer": 2}', 2),
        ('{"answer": "none"}', None),
        ('```json\n{"answer": "3"}\n```', 3),
        ('{"answer": null}', None),
    ],
)
def test_verdicts_read(reply: str, chosen: int | None) -> None:
    assert verdict(reply, 10) == chosen


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("the second", "invalid"),
        ('{"answer": 11}', "out_of_range"),
        ('{"answer": -1}', "out_of_range"),
        ('{"answer": [2]}', "invalid"),
        ('{"answer": true}', "invalid"),
    ],
)
def test_unusable_verdicts(reply: str, kind: str) -> None:
    with pytest.raises(JudgeFailed) as caught:
        verdict(reply, 10)
    assert caught.value.kind == kind


@pytest.mark.slow
def test_the_judge_does_not_hold_the_event_loop(judge_with: Callable[..., Settings], serve: Callable[..., Any]) -> None:
    """While the slow judge reads one question, live results and /healthz are answered at once."""
    server = serve(create_app(judge_with("slow", rerank_timeout=5.0)))
    judged: dict[str, Any] = {}

    def ask() -> None:
        judged["body"] = httpx.get(f"{server.url}/api/search", params={"q": QUESTION}, timeout=30).json()

    thread = threading.Thread(target=ask)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    live = httpx.get(
        f"{server.url}/api/search", params={"q": "how do I resume", "live": "box", "judge": "false"}, timeout=30
    )
    health = httpx.get(f"{server.url}/healthz", timeout=30)
    assert time.monotonic() - started < 1.0 and live.status_code == health.status_code == 200
    thread.join()
    assert judged["body"]["hits"]  # the judged search came back (the second candidate first)
    assert httpx.get(f"{server.url}/healthz", timeout=30).json()["judge"]["judged"] == 1


@pytest.mark.slow
def test_kb_calibrate_with_the_llm_judge(
    settings: Settings,
    stand_in: tuple[str, list],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kbcli.cli import main

    for name, value in {
        "KB_DATA_DIR": str(settings.data_dir),
        "KB_LLM_BASE_URL": stand_in[0],
        "KB_LLM_MODEL": "overlap",
        "KB_RERANK": "llm",
    }.items():
        monkeypatch.setenv(name, value)
    output = tmp_path / "calibration.json"
    assert main(["calibrate", str(DATA / "dev.jsonl"), "--folds", "3", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "with the judge" in out and "judge llm overlap: read the first 10 candidates" in out
    kb = open_kb(settings.with_(llm_base_url=stand_in[0], llm_model="overlap", rerank="llm", calibration=str(output)))
    assert kb.calibration is not None and kb.calibration.judge == "llm" and kb.search_blocking(QUESTION).hits


@pytest.mark.slow
def test_slack_is_acknowledged_in_time_while_a_slow_judge_reads(
    judge_with: Callable[..., Settings], serve: Callable[..., Any]
) -> None:
    """Slack's 3 s: the command is acknowledged within them, and the judged answer follows at response_url."""
    from tests.support.slack import SECRET, SlackStandIn, command_body, slack_headers

    slack = SlackStandIn(serve)
    configured = judge_with("slow", rerank_timeout=5.0).with_(
        slack_signing_secret=SECRET, slack_response_base=slack.url
    )
    server = serve(create_app(configured))
    body = command_body(QUESTION, slack.response_url("late"))
    started = time.monotonic()
    response = httpx.post(f"{server.url}/slack/command", content=body, headers=slack_headers(body), timeout=30)
    assert response.status_code == 200 and time.monotonic() - started < 3.0
    late = slack.wait_for("late")
    first = open_kb(judge_with("slow")).search_blocking(QUESTION, judged=False)
    text = json.dumps(late)
    named = sorted((text.find(h.entry.id), h.entry.id) for h in first.hits if h.entry.id in text)
    assert named[0][1] == first.hits[1].entry.id  # the judged answer: the second candidate first
