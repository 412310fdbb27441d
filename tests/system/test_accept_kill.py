"""Accepts that lose nothing: a real `kb serve` killed (SIGKILL) while four drafts from the tracker are being
accepted at once, then started again on the same data directory. Every draft the database calls accepted has its
answer served (searchable by id) after the restart, and no draft is decided without its answer saved; the drafts
the kill cut off before they were decided are still offered. And what a stop between a save and the decision leaves
(the answer saved, its draft waiting, the build without it) is settled at the next start-up."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from kb.harvest import Draft, ThreadQuestion
from kb.harvest.accepted import answer_of
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from kb.written import WrittenFile
from server import create_app
from tests.support.forms import insights_form_token as form_token
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port
from tests.support.seeded_insights import TOKEN

THREAD = "https://github.com/THUDM/slime/issues/{}"
QUESTIONS = {
    101: ("How do I pin the Megatron commit slime builds against?", "Set `MEGATRON_COMMIT` before `pip install`."),
    102: ("Why does slime's rollout hang after the first step?", "Raise `--rollout-timeout`; the default is short."),
    103: ("Can slime resume a run on a different number of GPUs?", "Yes: convert the checkpoint with `slime reshard`."),
    104: ("Where are slime's rollout samples written to disk?", "Under `--save`, in `rollouts/` per step."),
}


def drafts() -> list[Draft]:
    return [
        Draft(
            repo="THUDM/slime",
            number=n,
            url=THREAD.format(n),
            kind="issue",
            question=q,
            answer=a,
            signals={"answer": "thanked", "by": "MEMBER"},
            closed_at=1_760_000_000.0 + n,
            answer_author="zhuzilin",
        )  # fmt: skip
        for n, (q, a) in QUESTIONS.items()
    ]


def start(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`kb serve` on `data_dir`, its log to `log` (appended)."""
    port = free_port()
    env = dict(
        os.environ,
        KB_DATA_DIR=str(data_dir),
        KB_ADMIN_TOKEN=TOKEN,
        PYTHONPATH=str(ROOT),
        KB_RATE_LIMIT="off",
        OMP_NUM_THREADS="1",
    )
    env.pop("KB_LLM_BASE_URL", None)
    command = [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    assert wait_for_port(port, process), f"kb serve did not start: {log.read_text(errors='replace')[-2000:]}"
    return process, f"http://127.0.0.1:{port}"


def states(data_dir: Path) -> dict[int, tuple[str, str]]:
    """Each draft's state and the written answer it became, as the database holds them."""
    with sqlite3.connect(store_path(data_dir)) as db:
        rows = db.execute("SELECT number, status, written_id FROM harvested_drafts").fetchall()
    return {int(n): (status, written_id or "") for n, status, written_id in rows}


def signed_in(url: str) -> httpx.Client:
    browser = httpx.Client(base_url=url, timeout=60, headers={"Accept-Language": "en"})
    token = form_token(browser)
    assert browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
    return browser


@pytest.mark.slow
def test_four_accepts_killed_mid_way_are_all_served_after_a_restart(settings: Settings, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.symlink(settings.index_dir.resolve(), data_dir / "index")
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(drafts())
    store.close()
    log = tmp_path / "serve.log"
    process, url = start(data_dir, log)
    answered: list[int] = []
    try:
        browsers = [signed_in(url) for _ in QUESTIONS]
        tokens = [form_token(b) for b in browsers]

        def accept(browser: httpx.Client, token: str, number: int) -> None:
            data = {"form_token": token, "since": "7d", "repo": "THUDM/slime", "number": str(number)}
            try:
                if browser.post("/insights/harvested/accept", data=data).status_code == 303:
                    answered.append(number)
            except httpx.TransportError:
                pass  # killed under it

        clicks = [threading.Thread(target=accept, args=click) for click in zip(browsers, tokens, QUESTIONS)]
        for thread in clicks:
            thread.start()
        deadline = time.monotonic() + 60
        while not any(status == "accepted" for status, _ in states(data_dir).values()):
            assert time.monotonic() < deadline, "no draft was accepted within 60 s"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)  # as soon as a draft is decided: its build is still under way
        for thread in clicks:
            thread.join()
        for browser in browsers:
            browser.close()
    finally:
        process.kill()
        process.wait()
    assert len(answered) < len(QUESTIONS), "every accept had finished before the kill: nothing was tested"
    decided = states(data_dir)
    accepted = {n: written_id for n, (status, written_id) in decided.items() if status == "accepted"}
    assert accepted and set(answered) <= set(accepted)
    assert {status for status, _ in decided.values()} <= {"new", "accepted"}
    saved = {a.id for a in WrittenFile(data_dir / "written.jsonl").read()}
    assert set(accepted.values()) <= saved  # nothing decided without its answer saved

    process, url = start(data_dir, log)
    try:
        deadline = time.monotonic() + 120
        missing = list(accepted.values())
        while missing and time.monotonic() < deadline:
            missing = [i for i in missing if httpx.get(f"{url}/api/entries/{i}", timeout=30).status_code != 200]
            time.sleep(0.2)
        assert missing == [], f"accepted but not served after the restart: {missing}"
        served = {i: httpx.get(f"{url}/api/entries/{i}", timeout=30).json() for i in accepted.values()}
        for number, answer_id in accepted.items():
            assert served[answer_id]["url"] == THREAD.format(number)
        browser = signed_in(url)
        page = browser.get("/insights").text.split('id="harvested"')[1].split("</section>")[0]
        browser.close()
        for number, (status, _) in states(data_dir).items():  # a draft not decided before the kill is still offered
            assert (f"THUDM/slime#{number}" in page) == (status == "new"), number
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    if any(n not in answered for n in accepted):  # the kill came between a save and its build
        assert "the served build does not hold the written answers" in log.read_text(errors="replace")


def test_start_up_settles_an_answer_saved_before_its_draft_was_decided(
    settings: Settings, tmp_path: Path, serve: Callable[[Any], Any], caplog: pytest.LogCaptureFixture
) -> None:
    """What a stop between the save and the decision leaves: the answer in the file, its draft still waiting, the
    build without it. Started again (a real uvicorn on a loopback port), the server marks the draft accepted as that
    answer, names the answer in a warning, builds and serves it, and links the draft's other thread to it."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.symlink(settings.index_dir.resolve(), data_dir / "index")
    [first, *_] = drafts()
    other = ThreadQuestion("slime 怎么固定 Megatron 的版本", THREAD.format(199), 199)
    waiting = replace(first, alternates=(other,))
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep([waiting])
    store.close()
    answer = answer_of(waiting, {})
    WrittenFile(data_dir / "written.jsonl").save(answer)
    mine = settings.with_(data_dir=data_dir, admin_token=TOKEN)
    url = serve(create_app(mine)).url
    deadline = time.monotonic() + 120
    while httpx.get(f"{url}/api/entries/{answer.id}", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, "the saved answer was not built at start-up"
        time.sleep(0.2)
    assert states(data_dir)[first.number] == ("accepted", answer.id)
    warned = [m for m in caplog.messages if "does not hold the written answers" in m]
    assert len(warned) == 1 and f"missing or changed: {answer.id}" in warned[0]
    deadline = time.monotonic() + 60
    while not (linked := _linked(data_dir)):
        assert time.monotonic() < deadline, "the draft's other thread was not linked"
        time.sleep(0.2)
    assert linked == [(other.question, answer.id, THREAD.format(199))]


def _linked(data_dir: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(store_path(data_dir)) as db:
        return db.execute("SELECT question, entry_id, url FROM links WHERE origin = 'tracker'").fetchall()
