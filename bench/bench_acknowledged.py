"""Nothing acknowledged is lost: the GitHub and harvest surfaces at concurrency 8, the server killed (SIGKILL) halfway.

The app in a subprocess (uvicorn, one worker, `KB_ADMIN_TOKEN` set) on a data directory of its own serving the
index, its insights database seeded with drafts from the tracker; GitHub's API is a stand-in in this process
(tests/support/github.py, a real HTTP server on a loopback port) holding a maintainer's answer on every issue and
answering each call after 0.2 s, so harvests and answers are in flight when the kill comes. Eight closed-loop
clients send, by share: `close` (an `issues` `closed` delivery, each issue its own), `faq` (a `/faq` comment
delivery, and now and then one delivered before, again), `accept` (a signed-in maintainer's Accept of the next
draft on /insights). Halfway the server is killed and started again on the same directory; the clients carry on.

Then, once the queue is empty (or 180 s have passed), what was acknowledged is looked up:

- `close`: every delivery answered 202 is harvested (a draft, or a thread of one). Target: none lost.
- `accept`: every Accept answered 303, and every draft the database calls accepted, has its answer served
  (`GET /api/entries/{id}` 200) after the restart. Target: none lost.
- `faq`: no delivery answered twice (a delivery given again: "delivered before"; at most one bot comment on each
  issue). The answers in flight at the kill are counted and shown: a `/faq` answer is not queued.

    .venv/bin/python bench/bench_acknowledged.py [--quick] [--seconds 60]    # --quick: 30 s
"""

from __future__ import annotations

import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.support's stand-in for GitHub

from common import ROOT, Row, free_port, kb_env, main, ready_settings, serving_dir, wait_healthy  # noqa: E402

from kb.harvest import Draft  # noqa: E402
from kb.insights import InsightsStore, store_path  # noqa: E402
from tests.support.closes import REPO, answer_closes, closed_issue, harvested, queued  # noqa: E402
from tests.support.github import BOT, SECRET, GitHubStandIn, comment_event, delivery  # noqa: E402
from tests.support.servers import LoopbackServer  # noqa: E402

TOKEN = "bench-admin-token-acknowledged"
CONCURRENCY = 8
SHARES = {"close": 5, "faq": 3, "accept": 2}
DRAFTS = 400


def _drafts() -> list[Draft]:
    return [
        Draft(
            repo=REPO,
            number=10_000 + n,
            url=f"https://github.com/{REPO}/issues/{10_000 + n}",
            kind="issue",
            question=f"How do I tune option {n} of slime's rollout for our cluster?",
            answer=f"Set `--rollout-option-{n}` in the launch script; see docs/usage.md.",
            signals={"answer": "thanked", "by": "MEMBER"},
            closed_at=1_760_000_000.0 + n,
            answer_author="zhuzilin",
        )  # fmt: skip
        for n in range(DRAFTS)
    ]


class Clients:
    """What the clients were acknowledged, by kind, and the counters they share."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.numbers = iter(range(1, 1_000_000))
        self.drafts = iter(range(DRAFTS))
        self.closes: list[int] = []  # issue numbers whose close was acknowledged (202)
        self.faqs: list[int] = []  # issue numbers whose /faq delivery was taken ("answering")
        self.again: Counter[str] = Counter()  # a delivery given again: what the server said
        self.accepts: list[int] = []  # draft numbers whose Accept was answered 303
        self.failed: Counter[str] = Counter()  # requests that failed other than at the kill
        self.sent: Counter[str] = Counter()
        self.delivered: list[tuple[bytes, dict[str, str]]] = []
        self.killed = threading.Event()
        self.stop = threading.Event()
        self.left: Counter[str] = Counter()  # /faq deliveries acknowledged and left, by what the server said
        self.browsers: dict[int, httpx.Client] = {}  # a signed-in maintainer's browser, by client thread

    def next_number(self) -> int:
        with self.lock:
            return next(self.numbers)


def _form_token(client: httpx.Client) -> str:
    found = re.search(r'name="form_token" value="([\w-]+)"', client.get("/insights").text)
    if not found:
        raise RuntimeError("no form token on /insights")
    return found.group(1)


def _maintainer(url: str) -> httpx.Client:
    """A maintainer's browser: the admin token as a bearer token (sign-ins are limited per address)."""
    return httpx.Client(
        base_url=url, timeout=60, headers={"Accept-Language": "en", "Authorization": f"Bearer {TOKEN}", "Origin": url}
    )


def _one(clients: Clients, url: str, kind: str, rng: random.Random) -> None:
    """One request of `kind`, what it was acknowledged kept."""
    if kind == "close":
        number = clients.next_number()
        body, headers = delivery("issues", closed_issue(number))
        if httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60).status_code == 202:
            with clients.lock:
                clients.closes.append(number)
        return
    if kind == "faq":
        if clients.delivered and rng.random() < 0.25:  # one delivered before, again
            body, headers = rng.choice(clients.delivered)
            said = httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60).json()
            with clients.lock:
                clients.again[str(said.get("done"))] += 1
            return
        number = 500_000 + clients.next_number()
        asked = comment_event("/faq How do I resume training?", number=number, login=f"reader-{number}")
        body, headers = delivery("issue_comment", asked)  # each from a reader of its own: within the /faq limits
        said = httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=60).json()
        with clients.lock:
            clients.delivered.append((body, headers))
            if said.get("done") == "answering":
                clients.faqs.append(number)
            else:
                clients.left[str(said.get("done"))] += 1
        return
    with clients.lock:
        draft = next(clients.drafts, None)
    if draft is None:
        return
    browser = clients.browsers.get(threading.get_ident())
    if browser is None:  # one a client, a new one after the restart
        browser = clients.browsers[threading.get_ident()] = _maintainer(url)
    data = {"form_token": _form_token(browser), "since": "7d", "repo": REPO, "number": str(10_000 + draft)}
    if browser.post("/insights/harvested/accept", data=data).status_code == 303:
        with clients.lock:
            clients.accepts.append(10_000 + draft)


def _drive(clients: Clients, url: str, seed: int) -> None:
    """Eight closed-loop clients until `clients.stop` is set; a request cut off by the kill is not counted as failed."""
    kinds = [kind for kind, share in SHARES.items() for _ in range(share)]

    def client(n: int) -> None:
        rng = random.Random(seed * 100 + n)
        while not clients.stop.is_set():
            kind = rng.choice(kinds)
            with clients.lock:
                clients.sent[kind] += 1
            try:
                _one(clients, url, kind, rng)
            except (httpx.HTTPError, RuntimeError, ValueError) as exc:
                clients.browsers.pop(threading.get_ident(), None)  # a new one next time
                if clients.killed.is_set():  # the server is down: cut off, not failed
                    time.sleep(0.2)
                    continue
                with clients.lock:
                    clients.failed[f"{kind}: {type(exc).__name__}"] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CONCURRENCY)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _start(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_healthy(f"http://127.0.0.1:{port}", process, timeout=120)
    return process


def _accepted(database: Path) -> dict[int, str]:
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT number, written_id FROM harvested_drafts WHERE status = 'accepted'").fetchall()
    return {int(n): str(w) for n, w in rows}


def run(quick: bool = False, seconds: float = 60.0) -> list[Row]:
    seconds = 30.0 if quick else seconds
    with tempfile.TemporaryDirectory() as tmp:
        settings = ready_settings(Path(tmp))
        data_dir = _with_drafts(serving_dir(Path(tmp), "acknowledged", settings))
        servers: list[LoopbackServer] = []

        def serve(app: Any) -> LoopbackServer:
            server = LoopbackServer(app).__enter__()
            servers.append(server)
            return server

        github = GitHubStandIn(serve)
        github.slow = 0.2
        answer_closes(github, range(1, 20_000))
        port = free_port()
        env = kb_env(
            settings.with_(data_dir=data_dir),
            KB_ADMIN_TOKEN=TOKEN,
            KB_GITHUB_WEBHOOK_SECRET=SECRET,
            KB_GITHUB_TOKEN="ghp-bench-token",
            KB_GITHUB_API_URL=github.url,
            KB_GITHUB_MODE="comment",
            OMP_NUM_THREADS="1",
        )
        url = f"http://127.0.0.1:{port}"
        clients = Clients()
        database = store_path(data_dir)
        process = _start(env, port)
        restarted: dict[str, Any] = {}

        def kill_halfway() -> None:
            try:
                time.sleep(seconds / 2)
                restarted["in flight"] = len(set(clients.closes) - harvested(database))
                clients.killed.set()
                process.send_signal(signal.SIGKILL)  # mid-burst: the clients carry on once it is back
                process.wait()
                started = time.perf_counter()
                restarted["process"] = _start(env, port)
                restarted["took"] = time.perf_counter() - started
                time.sleep(1.0)  # the requests cut off by the kill have all been answered their error
                clients.killed.clear()
                time.sleep(seconds / 2)  # as long again with the restarted server
            finally:
                clients.stop.set()

        killer = threading.Thread(target=kill_halfway)
        try:
            killer.start()
            _drive(clients, url, seed=1)
            killer.join()
            settled = _settled(clients, url, database)
        finally:
            killer.join()
            _stop(restarted.get("process", process))
            for server in servers:
                server.__exit__(None, None, None)
        return _figures(seconds, clients, restarted, github, *settled)


def _with_drafts(data_dir: Path) -> Path:
    """`data_dir`, its insights database holding the drafts the clients accept."""
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(_drafts())
    store.close()
    return data_dir


def _settled(clients: Clients, url: str, database: Path) -> tuple[dict[int, str], dict[int, bool], list[int], int]:
    """Once every close acknowledged is harvested (or 180 s): the drafts accepted, whether each is served, the closes
    acknowledged and not harvested, and the closes still queued."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and (queued(database) or not set(clients.closes) <= harvested(database)):
        time.sleep(0.5)
    accepted = _accepted(database)
    served = {n: httpx.get(f"{url}/api/entries/{w}", timeout=30).status_code == 200 for n, w in accepted.items()}
    return accepted, served, sorted(set(clients.closes) - harvested(database)), queued(database)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _figures(
    seconds: float,
    clients: Clients,
    restarted: dict[str, Any],
    github: GitHubStandIn,
    accepted: dict[int, str],
    served: dict[int, bool],
    lost_closes: list[int],
    left: int,
) -> list[Row]:
    comments = Counter(issue for issue, said in github.comments.items() for c in said if c["user"]["login"] == BOT)
    answered = sum(1 for n in clients.faqs if comments.get(f"owner/repo#{n}"))
    twice = sum(1 for count in comments.values() if count > 1)
    unserved = sorted(n for n, ok in served.items() if not ok)
    lost_accepts = sorted(n for n in clients.accepts if not served.get(n))
    sent = ", ".join(f"{k} {v}" for k, v in sorted(clients.sent.items()))
    failed = sum(clients.failed.values())
    return [
        Row(
            f"requests sent in {seconds:.0f} s of load (8 clients, a kill -9 halfway)",
            f"{sent}; restarted in {restarted['took']:.1f} s",
        ),
        Row(
            "closes acknowledged (202) not harvested",
            f"{len(lost_closes)} of {len(clients.closes)} ({restarted['in flight']} in flight at the kill)",
            "0",
            not lost_closes,
        ),
        Row(
            "accepts answered 303, or drafts accepted, whose answer is not served",
            f"{len(set(lost_accepts) | set(unserved))} of {len(set(clients.accepts) | set(accepted))}",
            "0",
            not lost_accepts and not unserved,
        ),
        Row("/faq deliveries answered twice (one given again, or a second comment)", str(twice), "0", twice == 0),
        Row(
            "/faq deliveries given again: answered 'delivered before'",
            f"{clients.again.get('delivered before', 0)} of {sum(clients.again.values())}",
            "all",
            clients.again.get("delivered before", 0) == sum(clients.again.values()),
        ),
        Row(
            "/faq deliveries taken and answered (an answer in flight at the kill is not queued)",
            f"{answered} of {len(clients.faqs)}"
            + (f"; left: {', '.join(f'{k} {v}' for k, v in sorted(clients.left.items()))}" if clients.left else ""),
        ),
        Row(
            "requests failed other than at the kill",
            f"{failed}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(clients.failed.items()))})" if failed else ""),
            "0",
            failed == 0,
        ),
        Row("closes still queued at the end", str(left), "0", left == 0),
    ]


if __name__ == "__main__":
    main(run, __doc__, seconds=(float, 60.0, "seconds of load, the kill halfway"))
