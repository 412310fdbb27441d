"""A long thread condensed by the LLM (kb/harvest/condense.py), against a stand-in for an OpenAI-compatible endpoint (a
real HTTP server on a loopback port: no LLM runs here): its question and answer the LLM's, cleaned (no live mention
or tag), marked as the LLM's in the signals and on /insights; a short thread, no LLM, an LLM that fails or replies
with prose: the extractive draft, saying why."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterator

import pytest

from kb.harvest import harvest, read_threads
from kb.harvest.condense import LONG_THREAD, MAX_READ, condense, is_long
from kb.harvest.drafts import MAX_QUESTION
from kb.llm import LLM
from kb.settings import Settings
from tests.support.llm import CONDENSED, fake_llm_app

from .threads_data import comment, issue

ANSWER = "Pass `--load` with the directory you gave `--save`; slime resumes from its latest step."
LOG = "RuntimeError: NCCL timeout while waiting for rank 3\n" * 200  # a long pasted log: the thread is long


@pytest.fixture(scope="module")
def endpoint(serve: Callable[[Any], Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    yield f"{serve(fake_llm_app(requests)).url}/v1", requests


@pytest.fixture
def llm(endpoint: tuple[str, list[dict[str, Any]]]) -> Iterator[Callable[..., LLM]]:
    """`llm(model)`: a client of the stand-in asking for `model`; closed after the test."""
    opened: list[LLM] = []

    def make(model: str = "condense") -> LLM:
        opened.append(LLM(Settings(llm_base_url=endpoint[0], llm_model=model, llm_timeout=10)))
        return opened[-1]

    yield make
    for client in opened:
        client.close()


def thread(body: str = LOG) -> list[dict[str, Any]]:
    return [
        issue(
            [
                comment("asker", "NONE", "Here is more of the log:\n" + LOG, day=2),
                comment("zhuzilin", "MEMBER", ANSWER, day=3),
                comment("asker", "NONE", "Thanks, that worked!", day=4),
            ],
            body=body,
        )
    ]


def test_a_long_thread_is_condensed_and_marked(
    endpoint: tuple[str, list[dict[str, Any]]], llm: Callable[..., LLM]
) -> None:
    [draft] = harvest(read_threads(thread()), llm=llm()).drafts
    assert draft.question == "How do I resume training from a checkpoint?\n\n" + CONDENSED["question"]
    assert draft.answer.startswith("Pass `--load` with the `--save` directory; `@someone` ")  # the mention inert
    assert "<script" not in draft.answer and "</" not in draft.answer  # the tags gone
    assert draft.signals["condensed"] == "llm" and draft.signals["model"] == "condense"
    assert draft.signals["answer"] == "thanked"  # how the thread was chosen is still said
    request = endpoint[1][-1]["body"]
    assert request["stream"] is False and request["response_format"] == {"type": "json_object"}
    read = request["messages"][1]["content"]
    assert len(read) <= MAX_READ and read.index("(maintainer)") < read.index("(user)")  # the maintainers' first


def test_a_short_thread_or_no_llm_stays_extractive(
    endpoint: tuple[str, list[dict[str, Any]]], llm: Callable[..., LLM]
) -> None:
    short = read_threads(thread(body="How do I resume?"))
    short = [replace(t, comments=t.comments[1:]) for t in short]
    assert not is_long(short[0]) and is_long(read_threads(thread())[0])
    asked = len(endpoint[1])
    [draft] = harvest(short, llm=llm()).drafts
    assert draft.answer == ANSWER and "condensed" not in draft.signals
    assert len(endpoint[1]) == asked  # a short thread is not sent
    [plain] = harvest(read_threads(thread())).drafts
    assert plain.answer == ANSWER and "condensed" not in plain.signals
    assert LONG_THREAD < len(LOG)


@pytest.mark.parametrize(("model", "why"), [("broken", "HTTP 500"), ("prose", "not JSON")])
def test_an_llm_that_fails_leaves_the_extractive_draft(llm: Callable[..., LLM], model: str, why: str) -> None:
    [draft] = harvest(read_threads(thread()), llm=llm(model)).drafts
    assert draft.answer == ANSWER and "condensed" not in draft.signals
    assert why in draft.signals["condense_failed"]


def test_nothing_unreachable_stalls_it() -> None:
    unreachable = LLM(Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="condense", llm_timeout=2))
    [draft] = read_threads(thread())
    extractive = harvest([draft]).drafts[0]
    kept = condense(extractive, draft, unreachable)
    unreachable.close()
    assert kept.answer == ANSWER and "condense_failed" in kept.signals
    assert len(kept.question) <= MAX_QUESTION


def test_the_llm_reads_as_maintainers_whom_the_harvest_takes_answers_from(
    endpoint: tuple[str, list[dict[str, Any]]], llm: Callable[..., LLM]
) -> None:
    from kb.harvest import Rules

    raw = thread()
    raw[0]["comments"][1]["authorAssociation"] = "CONTRIBUTOR"
    [confirmed] = harvest(
        read_threads(raw), llm=llm()
    ).drafts  # by default another user's, taken as the asker confirmed it
    assert confirmed.answer_author == "zhuzilin" and confirmed.signals["by"] == "CONTRIBUTOR"
    assert "zhuzilin (user)" in endpoint[1][-1]["body"]["messages"][1]["content"]
    wide = Rules(associations=("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"))
    [draft] = harvest(read_threads(raw), wide, llm=llm()).drafts
    assert draft.signals["condensed"] == "llm"
    read = endpoint[1][-1]["body"]["messages"][1]["content"]
    assert "zhuzilin (maintainer)" in read and read.index("(maintainer)") < read.index("(user)")
