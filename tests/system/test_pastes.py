"""A pasted stack trace longer than KB_MAX_QUERY_CHARS, on every way in (the API, the pages, the widget's
configuration, Slack, the `kb` command): taken, reduced to its exception and the framework's frames before
anything is cut, and answered from what it says at its end; other text past the limit is still refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any, Callable

import httpx
import pytest

from kb.settings import Settings
from kb.stacktrace import MAX_PASTE_CHARS
from server import create_app
from tests.support.forms import form_token
from tests.support.slack import SECRET, command_body, slack_headers
from tests.support.traces import OOM_TRACE

FLAT = " ".join(OOM_TRACE.splitlines())  # as a one-line search box takes it


@pytest.fixture(scope="module")
def url(settings: Settings, serve: Callable[..., Any]) -> str:
    return serve(create_app(settings.with_(slack_signing_secret=SECRET))).url


OOM_ENTRY = (
    "chatlearn-a0b0593f"  # 为什么在FSDP训练时会出现 torch.OutOfMemoryError (the first 2,000 characters found another)
)


def test_the_api_searches_a_long_trace_by_its_last_line(url: str) -> None:
    for trace in (OOM_TRACE, FLAT):
        response = httpx.get(f"{url}/api/search", params={"q": trace, "k": 3})
        assert response.status_code == 200, response.text
        assert response.json()["hits"][0]["id"] == OOM_ENTRY


def test_the_api_chat_answers_a_long_trace(url: str) -> None:
    response = httpx.post(f"{url}/api/chat", json={"message": OOM_TRACE, "lang": "en"}, timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["sources"][0]["id"] == OOM_ENTRY


def test_other_text_past_the_limit_and_a_trace_past_the_paste_limit_are_refused(url: str) -> None:
    for text, message in [
        ("x" * 2001, "q: the query is 2001 characters; the limit is 2000"),
        (
            "x" * (MAX_PASTE_CHARS + 1 - len(OOM_TRACE))
            + "\n"
            + OOM_TRACE,  # 50,001 once its last line break is taken off
            "q: the query is 50001 characters; the limit is 2000 (a pasted stack trace: 50000)",
        ),
    ]:
        response = httpx.get(f"{url}/api/search", params={"q": text})
        assert (response.status_code, response.json()["error"]) == (422, message)


def test_the_pages_and_the_widget_take_a_paste_of_the_paste_limit(url: str) -> None:
    for path in ("/", "/chat"):
        boxes = re.findall(r'<(?:input id="q"|textarea id="message")[^>]*maxlength="(\d+)"', httpx.get(url + path).text)
        assert boxes == [str(MAX_PASTE_CHARS)], path
    config = httpx.get(f"{url}/api/widget-config").json()
    assert (config["max_message_chars"], config["max_paste_chars"]) == (2000, MAX_PASTE_CHARS)


def test_the_search_page_and_the_chat_form_answer_a_long_trace(url: str) -> None:
    page = httpx.get(f"{url}/search", params={"q": FLAT}, headers={"Accept-Language": "en"})
    assert page.status_code == 200 and f"/entries/{OOM_ENTRY}" in page.text
    with httpx.Client(base_url=url, headers={"Accept-Language": "en"}, timeout=30) as browser:
        fields = {"message": OOM_TRACE, "history": "[]", "form_token": form_token(browser)}
        chat = browser.post("/chat", data=fields, headers={"Origin": url})
    assert chat.status_code == 200 and f"/entries/{OOM_ENTRY}" in chat.text


def test_slack_answers_a_long_trace(url: str) -> None:
    body = command_body(OOM_TRACE)
    message = httpx.post(f"{url}/slack/command", content=body, headers=slack_headers(body), timeout=30).json()
    assert json.dumps(message).count(OOM_ENTRY) >= 1 and "characters; the limit is" not in json.dumps(message)


@pytest.mark.slow
def test_kb_search_reads_a_long_trace_from_stdin(settings: Settings) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "kbcli.cli", "search", "-", "--json"],
        input=OOM_TRACE,
        capture_output=True,
        text=True,
        timeout=300,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("KB_")}, "KB_DATA_DIR": str(settings.data_dir)},
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["hits"][0]["id"] == OOM_ENTRY
