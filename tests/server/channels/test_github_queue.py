"""The GitHub webhook's deliveries across processes, and the closes it acknowledges, kept in the insights database.

GitHub's API is a stand-in (tests/support/github.py): a real HTTP server on a loopback port, holding each closed
issue's maintainer answer. The servers are real: uvicorn on loopback ports in this process (two apps sharing one
database stand for two processes, each with its own in-process state), and `kb serve` processes for the kill.

- One `/faq` delivery given to two servers sharing the database at once is answered once: one comment.
- A flood of closes, far beyond what the bot works on at once: every one acknowledged with 202 is harvested.
- Closes acknowledged, then the server killed (SIGKILL) with their harvests in flight: every one is harvested after
  a restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.insights import store_path
from kb.settings import Settings
from server import create_app
from server.channels.github.backlog import Backlog
from tests.support.closes import answer_closes, closed_issue, harvested, queued
from tests.support.github import BOT, SECRET, GitHubStandIn, comment_event, delivery
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port
from tests.support.servers import own_data


@pytest.fixture(scope="module")
def github(serve: Callable[[Any], Any]) -> GitHubStandIn:
    return GitHubStandIn(serve)


@pytest.fixture(autouse=True)
def fresh_github(github: GitHubStandIn) -> Iterator[GitHubStandIn]:
    yield from github.fresh()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings that make both apps share one database."""
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("database_url")}
    return {}  # one data directory: one insights.sqlite


def wait_until(done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"{what}: not within {seconds:.0f} s"
        time.sleep(0.1)


def test_one_faq_delivery_given_to_two_servers_at_once_is_answered_once(
    settings: Settings,
    github: GitHubStandIn,
    serve: Callable[[Any], Any],
    database: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    github.slow = 1.0  # the answers would overlap
    own = own_data(settings, tmp_path_factory, "faq-twice").with_(
        github_webhook_secret=SECRET,
        github_token="ghp-test-token",
        github_api_url=github.url,
        github_mode="comment",
        **database,
    )
    apps = [create_app(own), create_app(own)]
    urls = [serve(app).url for app in apps]
    for url in urls:  # each app warmed up one at a time (two servers of one process start side by side)
        ping, ping_headers = delivery("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
        assert httpx.post(f"{url}/github/webhook", content=ping, headers=ping_headers).status_code in (200, 202)
        assert httpx.get(f"{url}/api/search", params={"q": "resume training"}, timeout=60).status_code == 200
    body, headers = delivery("issue_comment", comment_event("/faq How do I resume training?", number=44))
    with ThreadPoolExecutor(max_workers=2) as pool:
        acks = list(pool.map(lambda url: httpx.post(f"{url}/github/webhook", content=body, headers=headers), urls))
    assert [ack.status_code for ack in acks] == [202, 202]
    assert sorted(ack.json()["done"] for ack in acks) == ["answering", "delivered before"]
    wait_until(lambda: not any(app.state.github_backlog.taken for app in apps), 120, "the answer")
    posts = [call for call in github.calls if call[0] == "POST" and call[1].endswith("/issues/44/comments")]
    assert len(posts) == 1 and [c["user"]["login"] for c in github.comments["owner/repo#44"]] == [BOT]
    again = httpx.post(f"{urls[1]}/github/webhook", content=body, headers=headers)  # redelivered, to the other
    assert again.json()["done"] == "delivered before"


def test_a_flood_of_closes_beyond_the_backlog_is_every_one_harvested(
    settings: Settings, github: GitHubStandIn, serve: Callable[[Any], Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    numbers = range(1, 25)
    answer_closes(github, numbers)
    own = own_data(settings, tmp_path_factory, "close-flood").with_(
        github_webhook_secret=SECRET, github_token="ghp-test-token", github_api_url=github.url, reload_interval=0
    )
    app = create_app(own)
    url = serve(app).url
    app.state.github_backlog = Backlog(running=1, waiting=1)  # most closes find no room to be harvested at once
    app.state.github_closes.grace, app.state.github_closes.poll = 1.0, 0.2
    sent = [delivery("issues", closed_issue(n)) for n in numbers]
    with ThreadPoolExecutor(max_workers=8) as pool:
        acks = list(pool.map(lambda d: httpx.post(f"{url}/github/webhook", content=d[0], headers=d[1]), sent))
    assert [ack.status_code for ack in acks] == [202] * len(sent)
    database = store_path(own.data_dir)
    wait_until(lambda: harvested(database) >= set(numbers), 240, "every close harvested")
    wait_until(lambda: queued(database) == 0, 30, "the queue emptied")


def start(env: dict[str, str], data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)]
    environment = dict(os.environ, KB_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **env)
    environment.pop("KB_LLM_BASE_URL", None)
    process = subprocess.Popen(command, env=environment, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for_port(port, process), "kb serve did not start"
    return process, f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_closes_acknowledged_before_a_kill_9_are_every_one_harvested_after_a_restart(
    settings: Settings, github: GitHubStandIn, tmp_path: Path
) -> None:
    github.slow = 0.5  # each harvest waits on GitHub: many are in flight at the kill
    numbers = range(101, 133)
    answer_closes(github, numbers)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.symlink(settings.index_dir.resolve(), data_dir / "index")
    env = {
        "KB_GITHUB_WEBHOOK_SECRET": SECRET,
        "KB_GITHUB_TOKEN": "ghp-test-token",
        "KB_GITHUB_API_URL": github.url,
        "KB_RATE_LIMIT": "off",
    }
    process, url = start(env, data_dir)
    acknowledged: list[int] = []
    killed = threading.Event()

    def close(number: int) -> None:
        body, headers = delivery("issues", closed_issue(number))
        try:
            if httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=30).status_code == 202:
                acknowledged.append(number)
        except httpx.TransportError:
            assert killed.is_set()

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            for number in numbers[:24]:
                pool.submit(close, number)
            wait_until(lambda: len(acknowledged) >= 16, 60, "16 closes acknowledged")
            process.send_signal(signal.SIGKILL)
            killed.set()
    finally:
        process.kill()
        process.wait()
    database = store_path(data_dir)
    assert 16 <= len(acknowledged) and not set(acknowledged) <= harvested(database), "nothing was in flight"
    process, url = start(env, data_dir)
    try:
        wait_until(lambda: harvested(database) >= set(acknowledged), 180, "every acknowledged close harvested")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def test_past_the_queues_size_a_close_is_refused_with_503_and_its_redelivery_taken(
    settings: Settings,
    github: GitHubStandIn,
    serve: Callable[[Any], Any],
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A close the queue has no room for is not acknowledged: 503 saying why, one log line; GitHub's redelivery of the
    same delivery (its id and body) is taken once there is room, and harvested."""
    answer_closes(github, range(1, 4))
    own = own_data(settings, tmp_path_factory, "close-full").with_(
        github_webhook_secret=SECRET, github_token="ghp-test-token", github_api_url=github.url, reload_interval=0
    )
    app = create_app(own)
    url = serve(app).url
    closes = app.state.github_closes
    closes.size = 2
    app.state.github_backlog = Backlog(running=1, waiting=0)  # no room to harvest at once: the closes stay queued
    closes.grace, closes.poll = 5.0, 0.2  # and the queue's own turn comes 5 s after: they stay queued until then
    sent = [delivery("issues", closed_issue(n)) for n in range(1, 4)]
    acks = [httpx.post(f"{url}/github/webhook", content=body, headers=headers) for body, headers in sent]
    assert [ack.status_code for ack in acks] == [202, 202, 503]
    assert acks[2].json()["error"] == "the queue of closes waiting to be harvested is full; deliver it again later"
    assert [m for m in caplog.messages if "refused: the queue of closes is full" in m] == [
        "GitHub: THUDM/slime#3 refused: the queue of closes is full"
    ]
    closes.size = 10  # room again once the queue's turn harvests them
    database = store_path(own.data_dir)
    wait_until(lambda: harvested(database) >= {1, 2}, 120, "the two closes queued")
    again = httpx.post(f"{url}/github/webhook", content=sent[2][0], headers=sent[2][1])  # GitHub's redelivery
    assert again.status_code == 202 and again.json()["done"] != "delivered before"
    wait_until(lambda: harvested(database) >= {1, 2, 3}, 120, "the redelivered close")


def test_a_close_github_will_not_give_is_tried_a_bounded_number_of_times_then_dropped_saying_so(
    settings: Settings,
    github: GitHubStandIn,
    serve: Callable[[Any], Any],
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    github.down = True  # every call 502
    own = own_data(settings, tmp_path_factory, "close-down").with_(
        github_webhook_secret=SECRET, github_token="ghp-test-token", github_api_url=github.url, reload_interval=0
    )
    app = create_app(own)
    url = serve(app).url
    closes = app.state.github_closes
    closes.tries, closes.retry, closes.poll = 3, 0.1, 0.1
    body, headers = delivery("issues", closed_issue(7))
    assert httpx.post(f"{url}/github/webhook", content=body, headers=headers).status_code == 202
    database = store_path(own.data_dir)
    wait_until(lambda: closes.dropped == 1, 120, "the close dropped after its tries")
    assert queued(database) == 0 and 7 not in harvested(database)
    [dropped] = [m for m in caplog.messages if "is dropped" in m]
    assert dropped.startswith("GitHub: THUDM/slime#7 was not harvested after 3 tries and is dropped: GitHubUnavailable")
    retried = [m for m in caplog.messages if m.startswith("GitHub: THUDM/slime#7 was not harvested (")]
    assert len(retried) == 2  # tried three times: two retries, then dropped
