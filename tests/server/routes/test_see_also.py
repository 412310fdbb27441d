""" "See also" (kb/see_also.py): a question the FAQ does not cover shows up to three resolved threads found for it, in
`/api/search`, `/api/chat` (whole and streamed), the search page and the chat page rendered on the server, and MCP's
`search_faq`; never when the FAQ answers, never in the answer's text, never in `/v1`'s answer; a draft dismissed on
/insights leaves it at once, one accepted stays as its thread; a thread whose link is not https, or a hostile title,
is shown as text or not at all.

The server is real: uvicorn on a loopback port in this process, with a data directory of its own (the session's
index linked in) whose insights database holds the drafts, as `kb harvest` keeps them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from kb.harvest import Draft, ThreadQuestion
from kb.insights import InsightsStore, store_path
from kb.see_also import MAX_SHOWN
from kb.settings import Settings
from server import create_app
from tests.support.forms import form_token, insights_form_token
from tests.support.paths import ROOT
from tests.support.seeded_insights import TOKEN

THREAD = "https://github.com/THUDM/slime/issues/{}"
MCP_TOKEN = "see-also-mcp-token"
API_KEY = "see-also-api-key"
NOT_COVERED = "How to run slime on NPU"


def draft(number: int, question: str, asked: tuple[ThreadQuestion, ...] = (), url: str = "") -> Draft:
    answer = "Use the `mindspeed` image and `--device npu` to run slime on NPU."
    if "wandb" in question:
        answer = "slime writes the wandb logs under `./wandb`, in the project `--wandb-project` names."
    return Draft(
        repo="THUDM/slime", number=number, url=url or THREAD.format(number), kind="issue", question=question,
        answer=answer, signals={"answer": "thanked", "by": "MEMBER"},
        closed_at=1_760_000_000.0 + number, alternates=asked, answer_author="zhuzilin",
    )  # fmt: skip


DRAFTS = [
    draft(
        11,
        "How do I run slime on Huawei Ascend NPUs?\n\nWe have 910B cards; can slime train on them?",
        (
            ThreadQuestion("slime 能在昇腾 NPU 上训练吗", THREAD.format(12), 12),
            ThreadQuestion("does slime support ascend npu", THREAD.format(13), 13),
        ),
    ),  # fmt: skip
    draft(21, "Where does slime write its wandb logs?\n\nI set `--use-wandb` but find no wandb run or logs."),
    draft(31, "Can slime train on NPU &lt;img src=x onerror=alert(1)&gt; `@zhuzilin`"),  # as the harvest cleans a title
    draft(41, "Does slime run on Ascend NPU cards?", url="javascript:alert(1)//issues/41"),
]


@pytest.fixture(scope="module")
def live(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]) -> str:
    data_dir = tmp_path_factory.mktemp("see-also")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(DRAFTS)
    store.close()
    app = create_app(
        settings.with_(data_dir=data_dir, admin_token=TOKEN, mcp_token=MCP_TOKEN, api_keys=API_KEY, reload_interval=0)
    )
    return serve(app).url


def searched(live: str, q: str) -> dict[str, Any]:
    response = httpx.get(f"{live}/api/search", params={"q": q}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_question_the_faq_does_not_cover_is_shown_the_threads_near_it(live: str) -> None:
    found = searched(live, NOT_COVERED)
    assert found["state"] == "not_covered"
    assert {thread["number"]: thread for thread in found["see_also"]}[11] == {
        "title": "How do I run slime on Huawei Ascend NPUs?",
        "url": THREAD.format(11),
        "repo": "THUDM/slime",
        "number": 11,
    }
    numbers = [thread["number"] for thread in found["see_also"]]
    assert len(numbers) <= MAX_SHOWN and len(set(numbers)) == len(numbers)
    assert not {12, 13} & set(numbers)  # one thread a draft: its alternates are the same question
    assert 41 not in numbers  # a link that is not https is never shown
    assert all(thread["url"].startswith("https://github.com/") for thread in found["see_also"])
    assert 21 not in numbers  # wandb logs are not near NPUs (and draft 21 may be dismissed: the last test)


def test_an_answered_question_has_none(live: str) -> None:
    nearest = searched(live, NOT_COVERED)["hits"][0]["question"]
    found = searched(live, nearest)  # an entry's own question: the FAQ answers it
    assert found["state"] == "answered" and found["see_also"] == []


def test_the_chat_shows_them_beside_its_no_answer_never_in_it(live: str) -> None:
    reply = httpx.post(f"{live}/api/chat", json={"message": NOT_COVERED}, timeout=60).json()
    assert reply["state"] == "not_covered" and not reply["answered"]
    assert THREAD.format(11) in [thread["url"] for thread in reply["see_also"]]
    assert "issues/11" not in reply["answer"] and "issues/11" not in reply["answer_html"]
    with httpx.stream(
        "POST", f"{live}/api/chat", json={"message": NOT_COVERED}, headers={"Accept": "text/event-stream"}, timeout=60
    ) as streamed:
        events = streamed.read().decode()
    done = json.loads(events.split("event: done\ndata: ", 1)[1].split("\n", 1)[0])
    assert done["see_also"] == reply["see_also"]
    answered = httpx.post(f"{live}/api/chat", json={"message": searched(live, NOT_COVERED)["hits"][0]["question"]})
    assert answered.json()["see_also"] == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_mark_them_as_not_the_faqs_answer(live: str, lang: str) -> None:
    marks = {
        "en": ("A resolved issue that may help", "not the FAQ&#39;s answer"),
        "zh": ("可能有帮助的已解决 issue", "不是 FAQ 的答案"),
    }[lang]
    with httpx.Client(base_url=live, timeout=60, cookies={"kb_lang": lang}) as browser:
        page = browser.get("/search", params={"q": NOT_COVERED}).text
        chat = browser.post("/chat", data={"message": NOT_COVERED, "form_token": form_token(browser, "/chat")}).text
    for html in (page, chat):
        box = html.split("data-see-also>", 1)[1].split("</aside>", 1)[0]
        assert marks[0] in box and marks[1] in box
        assert f'href="{THREAD.format(11)}"' in box and "javascript:" not in box
        assert "<img" not in html.split("data-see-also>", 1)[1]  # a title is text


def test_an_agent_is_told_they_are_not_the_answer(live: str) -> None:
    async def call() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {MCP_TOKEN}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{live}/mcp", http_client=http)) as client:
                return await client.call_tool("search_faq", {"query": NOT_COVERED})

    data = json.loads(asyncio.run(call()).content[0].text)
    assert data["state"] == "not_covered" and 11 in [thread["number"] for thread in data["see_also"]]
    assert "not the FAQ's answer" in data["message"]


@pytest.mark.slow
def test_kb_mcp_over_stdio_gives_them_too(settings: Settings, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(DRAFTS)
    store.close()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment |= {"KB_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    kb = Path(sys.executable).with_name("kb")

    async def call() -> Any:
        async with Client(StdioServerParameters(command=str(kb), args=["mcp"], env=environment)) as client:
            return await client.call_tool("search_faq", {"query": NOT_COVERED})

    data = json.loads(asyncio.run(call()).content[0].text)
    assert {"title": "How do I run slime on Huawei Ascend NPUs?", "url": THREAD.format(11), "repo": "THUDM/slime", "number": 11} in data["see_also"]  # fmt: skip


def test_v1_never_answers_with_them(live: str) -> None:
    body = {"model": "kb", "messages": [{"role": "user", "content": NOT_COVERED}]}
    response = httpx.post(
        f"{live}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60
    )
    assert response.status_code == 200, response.text
    assert "issues/11" not in response.text


def test_a_draft_decided_on_insights_leaves_at_once(live: str) -> None:
    wandb = "where are slime's wandb logs saved"
    assert searched(live, wandb)["see_also"][0]["number"] == 21
    with httpx.Client(base_url=live, timeout=60) as browser:
        token = insights_form_token(browser)
        assert browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
        data = {"form_token": insights_form_token(browser), "since": "7d", "repo": "THUDM/slime", "number": "21"}
        assert browser.post("/insights/harvested/dismiss", data=data).status_code == 303
    assert 21 not in [thread["number"] for thread in searched(live, wandb)["see_also"]]
