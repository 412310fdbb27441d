"""Two `kb serve` replicas on one PostgreSQL (KB_DATABASE_URL): what one records the other's /insights shows, a vote
counts once whichever replica takes it, concurrent clients lose no record, and the database going away and coming back
fails no search and loses nothing.

Each replica is a real server process on a loopback port with a data directory of its own holding the same index;
the database is a real PostgreSQL (tests/support/postgres.py)."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from kb.settings import Settings
from tests.support.paths import ROOT
from tests.support.ports import free_port

TOKEN = "replica-admin-token"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
ENTRY = "slime-b0ab398d"  # an entry of the shipped FAQs


@dataclass
class Replica:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def health(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/healthz", timeout=10).json()

    def logged(self, text: str) -> list[str]:
        return [line for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines() if text in line]


def start_replica(settings: Settings, data_dir: Path, database_url: str) -> Replica:
    data_dir.mkdir()
    os.symlink(settings.index_dir.resolve(), data_dir / "index")  # the same index, copied or mounted
    port, log = free_port(), data_dir / "server.log"
    env = dict(
        os.environ,
        KB_DATA_DIR=str(data_dir),
        KB_SOURCES_DIR=str(settings.sources_dir),
        PYTHONPATH=str(ROOT),
        KB_RATE_LIMIT="off",
        KB_DATABASE_URL=database_url,
        KB_ADMIN_TOKEN=TOKEN,
        OMP_NUM_THREADS="1",
    )
    env.pop("KB_LLM_BASE_URL", None)
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    replica = Replica(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the replica exited ({process.returncode}): {log.read_text()}")
        try:
            if httpx.get(f"{replica.url}/healthz", timeout=2).status_code == 200:
                return replica
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the replica did not start: {log.read_text()}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def shared(postgres: Any) -> str:
    """The database both replicas record into (its name)."""
    postgres.create_database("replicas")
    return "replicas"


@pytest.fixture(scope="module")
def replicas(
    settings: Settings, postgres: Any, shared: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Replica]]:
    root = tmp_path_factory.mktemp("replicas")
    started = [start_replica(settings, root / name, postgres.url(shared)) for name in ("a", "b")]
    yield started
    for replica in started:
        replica.process.terminate()
        try:
            replica.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            replica.process.kill()
            replica.process.wait()


def settled(replicas: list[Replica], timeout: float = 60) -> None:
    """Wait until neither replica has a record waiting to be written."""
    deadline = time.monotonic() + timeout
    while any(r.health()["insights_waiting"] for r in replicas):
        if time.monotonic() > deadline:
            raise AssertionError(f"records still waiting: {[r.health() for r in replicas]}")
        time.sleep(0.1)


def count(postgres: Any, database: str, sql: str) -> int:
    return int(postgres.execute(sql, database)[0][0])


def csv_rows(replica: Replica, table: str) -> list[dict[str, str]]:
    response = httpx.get(f"{replica.url}/insights/{table}.csv", params={"since": "24h"}, headers=BEARER, timeout=60)
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.text.lstrip("\ufeff"))))  # the export starts with a BOM for Excel


def test_a_question_asked_of_one_replica_shows_on_the_others_insights(replicas: list[Replica]) -> None:
    a, b = replicas
    asked = "how do I knit a sweater for my replica cat"
    assert httpx.get(f"{a.url}/api/search", params={"q": asked}, timeout=30).status_code == 200
    settled(replicas)
    for replica in (b, a):
        page = httpx.get(f"{replica.url}/insights", params={"since": "24h"}, headers=BEARER, timeout=60)
        assert page.status_code == 200 and asked in page.text
        assert any(asked in row["examples"] for row in csv_rows(replica, "gaps"))


def test_a_vote_with_a_session_from_the_other_replica_counts_once_on_both(
    replicas: list[Replica], postgres: Any, shared: str
) -> None:
    a, b = replicas
    with httpx.Client(base_url=a.url, timeout=30) as browser:
        assert browser.get("/").status_code == 200  # replica a signs the session cookie
        session = browser.cookies["kb_session"]
    vote = {"entry_id": ENTRY, "message": "resume training across replicas", "helpful": False, "reason": "wrong"}
    for replica in (b, a, b):  # the same vote, taken by b, then a, then b again
        taken = httpx.post(f"{replica.url}/api/feedback", json=vote, cookies={"kb_session": session}, timeout=30)
        assert taken.status_code == 202, taken.text
    forged = session[:-1] + ("1" if session.endswith("0") else "0")  # a session neither replica signed
    refused = httpx.post(f"{b.url}/api/feedback", json=vote, cookies={"kb_session": forged}, timeout=30)
    assert refused.status_code == 403
    settled(replicas)
    assert count(postgres, shared, f"SELECT count(*) FROM votes WHERE entry_id = '{ENTRY}'") == 1
    for replica in replicas:
        [row] = [r for r in csv_rows(replica, "unhelpful") if r["entry_id"] == ENTRY]
        assert (row["not_helpful"], row["helpful"]) == ("1", "0")


def load(
    replicas: list[Replica], clients: int, prefix: str, stop: threading.Event | None = None, each: int = 8
) -> tuple[list[str], list[str]]:
    """`clients` threads searching both replicas in turn, `each` searches or until `stop`: (questions answered, failures)."""
    answered: list[str] = []
    failures: list[str] = []
    start = threading.Barrier(clients)

    def client(n: int) -> None:
        with httpx.Client(timeout=60) as http:
            start.wait()
            i = 0
            while (i < each) if stop is None else not stop.is_set():
                q = f"{prefix} client {n} question {i} about resuming training"
                try:
                    response = http.get(f"{replicas[(n + i) % 2].url}/api/search", params={"q": q})
                except httpx.HTTPError as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                else:
                    if response.status_code == 200:
                        answered.append(q)
                    else:
                        failures.append(f"{response.status_code} {q}")
                i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answered, failures


def test_32_concurrent_clients_across_both_replicas_lose_no_record(
    replicas: list[Replica], postgres: Any, shared: str
) -> None:
    answered, failures = load(replicas, 32, "concurrent")
    assert failures == [] and len(answered) == 32 * 8
    settled(replicas)
    assert count(postgres, shared, "SELECT count(*) FROM questions WHERE text LIKE 'concurrent client %'") == 32 * 8
    assert (
        count(postgres, shared, "SELECT count(DISTINCT text) FROM questions WHERE text LIKE 'concurrent client %'")
        == 256
    )
    assert all(r.health()["insights_dropped"] == 0 for r in replicas)


def test_the_database_stopped_and_restarted_under_load_fails_no_search_and_loses_nothing(
    replicas: list[Replica], postgres: Any, shared: str
) -> None:
    stop = threading.Event()
    result: list[tuple[list[str], list[str]]] = []
    loader = threading.Thread(target=lambda: result.append(load(replicas, 8, "outage", stop)))
    loader.start()
    try:
        time.sleep(1.5)
        postgres.stop()  # pg_ctl stop -m fast: every connection is cut
        time.sleep(4)
        waiting = [r.health()["insights_waiting"] for r in replicas]  # /healthz answers through the outage
        page = httpx.get(f"{replicas[0].url}/insights", params={"since": "24h"}, headers=BEARER, timeout=60)
        assert page.status_code == 503 and "cannot be reached" in page.text
    finally:
        postgres.start()
        time.sleep(2)
        stop.set()
        loader.join()
    answered, failures = result[0]
    assert failures == [] and len(answered) > 16
    assert sum(waiting) > 0  # records were held while the database was away
    settled(replicas)
    assert count(postgres, shared, "SELECT count(*) FROM questions WHERE text LIKE 'outage client %'") == len(answered)
    assert all(r.health()["insights_dropped"] == 0 for r in replicas)
    outage = "questions and votes are kept and tried again"  # the writer's line (the 503 above is logged apart)
    for replica in replicas:  # one line for the outage, not one per request or per try
        assert len(replica.logged(outage)) <= 1, replica.logged(outage)
        assert replica.logged("Connection refused") == [], replica.logged("Connection refused")
    assert sum(len(r.logged(outage)) for r in replicas) >= 1
    assert any(r.logged("once the insights database took them") for r in replicas)
