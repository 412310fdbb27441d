"""Hot reload: `kb ingest` while a real server answers a steady stream of requests.

The server swaps the new build in (on `POST /admin/reload`, or by itself when it sees the
index link change) with no failed request, and every response comes wholly from one build:
the one its `X-KB-Index` header names. A failed ingest or a broken build leaves the old
build serving.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import httpx
import pytest

from kb.entries import entry_id
from kb.settings import SHIPPED_SOURCES, Settings
from server import create_app

pytestmark = pytest.mark.slow  # real `kb serve` processes and rebuilt indexes

TOKEN = "reload-test-token-5f1c"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
OLD_ANSWER = "直接将 `--load` 设置为 `--save` 的目录即可。"
MARK = "--resume-marker-7q"  # only the new build's answer has it
NEW_ANSWER = OLD_ANSWER + f" 新版本也可以用 `{MARK}` 指定步数。"
RESUME = entry_id("slime", "如何续训？")


@pytest.fixture
def workspace(settings: Settings, tmp_path: Path) -> Settings:
    """A copy of the session's data directory (index and embedding cache) and of the shipped sources."""
    data = tmp_path / "data"
    shutil.copytree(settings.data_dir, data, symlinks=True)
    shutil.copytree(SHIPPED_SOURCES, tmp_path / "sources")
    return settings.with_(data_dir=data, sources_dir=tmp_path / "sources", admin_token=TOKEN)


def edit_resume_answer(sources: Path) -> None:
    slime = sources / "slime.md"
    text = slime.read_text(encoding="utf-8")
    assert OLD_ANSWER in text
    slime.write_text(text.replace(OLD_ANSWER, NEW_ANSWER), encoding="utf-8")


def kb_ingest(settings: Settings, sources: Path) -> subprocess.CompletedProcess[str]:
    """`kb ingest` in its own process, as an operator runs it next to the server."""
    env = dict(os.environ, KB_DATA_DIR=str(settings.data_dir), KB_SOURCES_DIR=str(sources))
    return subprocess.run(
        [sys.executable, "-m", "kbcli.cli", "ingest"], env=env, capture_output=True, text=True, timeout=300
    )


def build_of(settings: Settings) -> str:
    return Path(os.path.realpath(settings.index_dir)).name


@dataclass
class Load:
    """Four clients asking for the resume entry, by search and by id, until stopped."""

    url: str
    responses: list[tuple[int, str, str]] = field(default_factory=list)  # (status, build, answer)
    failures: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _client(self, ask: Callable[[httpx.Client], httpx.Response], answer: Callable[[dict], str]) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self._stop.is_set():
                try:
                    r = ask(client)
                    self.responses.append((r.status_code, r.headers.get("x-kb-index", ""), answer(r.json())))
                except (httpx.HTTPError, ValueError) as exc:
                    self.failures.append(repr(exc))

    def __enter__(self) -> "Load":
        search = (lambda c: c.get("/api/search", params={"q": "如何续训", "k": 1}), lambda j: j["hits"][0]["answer"])
        by_id = (lambda c: c.get(f"/api/entries/{RESUME}"), lambda j: j["answer"])
        self._threads = [threading.Thread(target=self._client, args=kind) for kind in (search, by_id, search, by_id)]
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 60
        start = len(self.responses)
        while len(self.responses) < start + count and time.monotonic() < deadline:
            time.sleep(0.05)


def assert_each_response_from_one_build(load: Load, old: str, new: str) -> None:
    assert load.failures == []
    assert {status for status, _, _ in load.responses} == {200}
    assert {build for _, build, _ in load.responses} == {old, new}
    for _, build, answer in load.responses:
        assert (MARK in answer) == (build == new), (build, answer)


@pytest.mark.slow
def test_reload_swaps_the_new_build_in_under_load_without_a_failed_request(workspace, serve):
    server = serve(create_app(workspace.with_(reload_interval=0)))  # only the admin route reloads
    old = build_of(workspace)
    edit_resume_answer(workspace.sources_dir)
    with Load(server.url) as load:
        load.wait_for(20)
        done = kb_ingest(workspace, workspace.sources_dir)
        assert done.returncode == 0, done.stderr
        assert "1 embedded" in done.stdout  # only the changed answer
        new = build_of(workspace)
        assert new != old
        load.wait_for(10)  # the link has changed, the server has not been told
        assert all(build == old for _, build, _ in load.responses)
        reply = httpx.post(f"{server.url}/admin/reload", headers=ADMIN, timeout=60)
        load.wait_for(20)
    assert reply.status_code == 200
    assert reply.json() == {"ok": True, "reloaded": True, "build": new, "previous": old, "entries": 75}
    assert_each_response_from_one_build(load, old, new)
    assert load.responses[-1][1] == new

    again = httpx.post(f"{server.url}/admin/reload", headers=ADMIN, timeout=60).json()
    assert again["reloaded"] is False and again["build"] == new


@pytest.mark.slow
def test_the_server_notices_a_new_build_by_itself(workspace, serve):
    server = serve(create_app(workspace.with_(reload_interval=0.2)))
    old = build_of(workspace)
    edit_resume_answer(workspace.sources_dir)
    with Load(server.url) as load:
        load.wait_for(10)
        assert kb_ingest(workspace, workspace.sources_dir).returncode == 0
        new = build_of(workspace)
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.url}/healthz").headers["x-kb-index"] != new and time.monotonic() < deadline:
            time.sleep(0.1)
        load.wait_for(10)
    assert_each_response_from_one_build(load, old, new)


@pytest.mark.slow
def test_a_failed_ingest_leaves_the_old_build_serving(workspace, serve):
    server = serve(create_app(workspace.with_(reload_interval=0.2)))
    old = build_of(workspace)
    (workspace.sources_dir / "slime.md").write_bytes("1. **如何续训？**\n\n   ".encode() + b"\xff\xfe broken\n")
    done = kb_ingest(workspace, workspace.sources_dir)
    assert done.returncode == 2
    assert "slime.md" in done.stderr and "Traceback" not in done.stderr
    assert build_of(workspace) == old
    time.sleep(0.5)  # two reload checks
    r = httpx.get(f"{server.url}/api/entries/{RESUME}")
    assert r.status_code == 200 and r.headers["x-kb-index"] == old and r.json()["answer"] == OLD_ANSWER
    assert httpx.post(f"{server.url}/admin/reload", headers=ADMIN).json()["reloaded"] is False


@pytest.mark.slow
def test_a_broken_build_is_refused_and_the_old_one_keeps_serving(workspace, serve, tmp_path, caplog):
    server = serve(create_app(workspace.with_(reload_interval=0.2)))
    old = build_of(workspace)
    # A build made elsewhere and corrupted on its way here (a bad disk, a half copy).
    elsewhere = workspace.with_(data_dir=tmp_path / "elsewhere")
    shutil.copytree(workspace.data_dir, elsewhere.data_dir, symlinks=True)
    edit_resume_answer(workspace.sources_dir)
    assert kb_ingest(elsewhere, workspace.sources_dir).returncode == 0
    broken = workspace.data_dir / "builds" / build_of(elsewhere)
    shutil.copytree(os.path.realpath(elsewhere.index_dir), broken)
    with open(broken / "entries.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "x"}) + "\n")
    link = workspace.data_dir / ".index-next"
    os.symlink(Path("builds") / broken.name, link)
    os.replace(link, workspace.index_dir)

    time.sleep(0.6)  # the watch has tried it, and said so once
    refused = [rec for rec in caplog.records if "still serving build" in rec.getMessage()]
    assert len(refused) == 1 and "entries.jsonl" in refused[0].getMessage()
    reply = httpx.post(f"{server.url}/admin/reload", headers=ADMIN)
    assert reply.status_code == 409
    error = reply.json()["error"]
    assert broken.name in error and "entries.jsonl" in error and f"still serving build {old}" in error
    r = httpx.get(f"{server.url}/api/entries/{RESUME}")
    assert r.status_code == 200 and r.headers["x-kb-index"] == old and r.json()["answer"] == OLD_ANSWER


def test_reload_needs_the_admin_token(workspace, client):
    from fastapi.testclient import TestClient

    assert client.post("/admin/reload").status_code == 404  # no KB_ADMIN_TOKEN: admin routes are off
    with TestClient(create_app(workspace)) as admin:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            r = admin.post("/admin/reload", headers=headers)
            assert r.status_code == 401 and r.json()["ok"] is False
        assert admin.post("/admin/reload", headers=ADMIN).json()["reloaded"] is False


def garbage(path: Path) -> None:
    path.write_bytes(b"\x93NUMPY not really " + os.urandom(512))


def edit_manifest(build: Path, **fields: object) -> None:
    meta = json.loads((build / "meta.json").read_text(encoding="utf-8"))
    (build / "meta.json").write_text(json.dumps({**meta, **fields}), encoding="utf-8")


def rehash(build: Path) -> None:
    """Make meta.json's checksums match the files as they are now, as a build written that way would."""
    import hashlib

    meta = json.loads((build / "meta.json").read_text(encoding="utf-8"))
    sums = {name: hashlib.sha256((build / name).read_bytes()).hexdigest() for name in meta["checksums"]}
    edit_manifest(build, checksums=sums)


# Builds whose files match their checksums but cannot be loaded, and what the refusal names.
UNLOADABLE: dict[str, tuple[Callable[[Path], None], str]] = {
    "vectors.faiss from elsewhere": (
        lambda b: (garbage(b / "vectors.faiss"), rehash(b)),
        "vectors.faiss cannot be read",
    ),
    "background.npy of garbage": (
        lambda b: (garbage(b / "background.npy"), rehash(b)),
        "background.npy cannot be read",
    ),
    "rows.npy of another shape": (
        lambda b: (__import__("numpy").save(b / "rows.npy", __import__("numpy").zeros((2, 2))), rehash(b)),
        "rows.npy cannot be read",
    ),
    "lexical.npz of garbage": (lambda b: (garbage(b / "lexical.npz"), rehash(b)), "lexical.npz cannot be read"),
    "checksums: []": (lambda b: edit_manifest(b, checksums=[]), "checksums is [], expected dict"),
    "built_at a number": (lambda b: edit_manifest(b, built_at=20261121), "built_at is 20261121, expected str"),
    "built_at not a time": (
        lambda b: edit_manifest(b, built_at="yesterday"),
        "built_at is 'yesterday', expected an ISO-8601",
    ),
}


def link_copy_of(workspace: Settings, build: str, name: str, damage: Callable[[Path], None] = lambda b: None) -> Path:
    """A copy of `build` as builds/<name>, damaged, and the index link pointed at it."""
    copy = workspace.data_dir / "builds" / name
    shutil.copytree(workspace.data_dir / "builds" / build, copy)
    damage(copy)
    link = workspace.data_dir / f".index-{name}"
    os.symlink(Path("builds") / name, link)
    os.replace(link, workspace.index_dir)
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(UNLOADABLE))
def test_a_build_that_cannot_be_loaded_is_refused_and_the_watch_goes_on(workspace, serve, caplog, fault):
    damage, reason = UNLOADABLE[fault]
    server = serve(create_app(workspace.with_(reload_interval=0.1)))
    old = build_of(workspace)
    broken = link_copy_of(workspace, old, "29990101T000000000001", damage)

    time.sleep(0.6)  # several checks: the watch has tried it, and said so once
    refused = [rec for rec in caplog.records if broken.name in rec.getMessage()]
    assert len(refused) == 1, [rec.getMessage() for rec in refused]
    assert reason in refused[0].getMessage() and f"still serving build {old}" in refused[0].getMessage()
    assert not [rec for rec in caplog.records if rec.exc_info]  # no traceback
    reply = httpx.post(f"{server.url}/admin/reload", headers=ADMIN)
    assert reply.status_code == 409
    assert reason in reply.json()["error"] and broken.name in reply.json()["error"]
    health = httpx.get(f"{server.url}/healthz")
    assert health.status_code == 200 and health.headers["x-kb-index"] == old
    assert httpx.get(f"{server.url}/api/search", params={"q": "如何续训"}).status_code == 200

    good = link_copy_of(workspace, old, "29990101T000000000002")
    deadline = time.monotonic() + 10
    while httpx.get(f"{server.url}/healthz").headers["x-kb-index"] != good.name and time.monotonic() < deadline:
        time.sleep(0.05)
    health = httpx.get(f"{server.url}/healthz")
    assert health.status_code == 200 and health.json()["build"] == good.name


def rewrite(settings: Settings) -> str:
    """A new build of the same index, as `kb ingest` of unchanged sources writes; returns its name."""
    from kb.index import read_index, write_index

    index = read_index(settings.index_dir)
    write_index(
        settings.index_dir,
        index.entries,
        index.vector_matrix(),
        index.background,
        index.meta.model,
        index.meta.sources_hash,
        owners=index.rows.owners,
    )
    return build_of(settings)


def test_ingests_keep_the_newest_builds_and_the_one_served(workspace, serve):
    server = serve(create_app(workspace.with_(reload_interval=0)))
    served = build_of(workspace)
    newest = [rewrite(workspace) for _ in range(4)]
    builds = sorted(p.name for p in (workspace.data_dir / "builds").iterdir() if not p.name.startswith("."))
    assert builds == sorted([served, *newest[-3:]])
    r = httpx.get(f"{server.url}/api/entries/{RESUME}")
    assert r.status_code == 200 and r.headers["x-kb-index"] == served

    assert httpx.post(f"{server.url}/admin/reload", headers=ADMIN).json()["build"] == newest[-1]
    latest = rewrite(workspace)
    builds = sorted(p.name for p in (workspace.data_dir / "builds").iterdir() if not p.name.startswith("."))
    assert builds == [*newest[-2:], latest]


def test_each_swap_is_logged_with_its_build_entries_and_seconds(workspace, caplog):
    """A copy of the served build under a new name, the index link moved to it, as an ingest moves it."""
    from fastapi.testclient import TestClient

    old = build_of(workspace)
    builds = workspace.data_dir / "builds"
    new = old[:-1] + ("0" if old[-1] != "0" else "1")
    shutil.copytree(builds / old, builds / new)
    caplog.set_level("INFO", logger="kb.server")
    with TestClient(create_app(workspace.with_(reload_interval=0))) as client:
        os.symlink(f"builds/{new}", workspace.data_dir / "index.new")
        os.replace(workspace.data_dir / "index.new", workspace.index_dir)
        assert client.post("/admin/reload", headers=ADMIN).json()["reloaded"] is True
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "kb.server"]
    assert any(
        re.fullmatch(rf"serving index build {old}: 75 entries, loaded in \d+\.\d\d s", line) for line in lines
    ), lines
    assert any(
        re.fullmatch(rf"swapped in index build {new}: 75 entries, loaded in \d+\.\d\d s \(was {old}\)", line)
        for line in lines
    ), lines


@pytest.mark.slow
def test_kb_serve_writes_the_servers_own_lines_beside_uvicorns():
    code = (
        "import logging, logging.config; from kbcli.serve import log_config; logging.config.dictConfig(log_config()); "
        "logging.getLogger('kb.server').info('swapped in index build b: 59 entries, loaded in 0.42 s (was a)')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stderr.strip().endswith("swapped in index build b: 59 entries, loaded in 0.42 s (was a)")
    assert "INFO" in run.stderr
