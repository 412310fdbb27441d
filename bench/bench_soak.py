"""Soak: mixed traffic at concurrency 32 for a minute, with a hot reload and a failing ingest on the way.

A real uvicorn in a subprocess on a loopback port (`KB_RATE_LIMIT=off`, `KB_ADMIN_TOKEN` set,
`KB_RELOAD_INTERVAL=1`) on a data directory of its own. Closed-loop clients (one thread and
one keep-alive `httpx.Client` each) send about 70% `GET /api/search`, 15% `POST /api/chat`
and 15% entries (`GET /api/entries/{id}` and the `/entries/{id}` page, half each), with the
development and holdout questions. One entry (the changed one, below) is asked for more
often than the rest, so responses show which version of it they carry.

- At a third of the time `kb ingest --sources <copy>` runs in a subprocess against the
  server's data directory, the copy having a new first paragraph in one entry's answer. The
  server should pick the new build up by its poll, every response before and after naming
  its build in `X-KB-Index`, and no request failing.
- Every response is checked against the build its header names: each entry it carries (the
  hits of a search or a chat, an entry and its related ones) has that build's answer, and
  the new paragraph appears only in responses labelled with the new build.
- At two thirds `kb ingest` runs on two broken copies (a Markdown file that is not UTF-8, a
  manifest naming a missing file): each must exit non-zero with a one-line error, and the
  server keep serving the new build (`POST /admin/reload` then reports nothing to reload).
- Responses by status (5xx expected: none), p50 and p99, and the server's VmRSS after the
  warm-up and at the end.

    .venv/bin/python bench/bench_soak.py [--seconds 60] [--concurrency 32] [--quick]
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    ROOT,
    Row,
    changed_sources,
    clients,
    drive,
    kb_command,
    kb_env,
    main,
    mib,
    own_settings,
    pct,
    questions,
    serving,
    status_kib,
)

from kb.settings import Settings  # noqa: E402

SECTION = "soak"
TOKEN = "bench-soak-admin-token"
MIX = (("search", 0.70), ("chat", 0.15), ("entry", 0.15))
CHANGED_SHARE = 0.2  # of searches and entry requests, about the changed entry


@dataclass
class Response:
    at: float  # seconds since the soak started
    kind: str
    status: int | str  # the HTTP status, or the name of the error when there was no response
    ms: float
    build: str = ""
    mixed: bool = False  # carries something its build does not have


@dataclass
class Step:
    """A `kb ingest` run during the soak."""

    name: str
    started: float
    seconds: float
    code: int
    out: str
    err: str
    build_after: str  # the build the index link names afterwards


@dataclass
class Soak:
    settings: Settings
    changed: str  # the changed entry's id
    question: str  # and its question
    marker: str  # the paragraph only the new build's answer has
    questions: list[str]
    ids: list[str]
    started: float = 0.0
    responses: list[Response] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    _builds: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answers(self, build: str) -> dict[str, tuple[str, ...]]:
        """Each entry's answers in a build (`builds/<stamp>`, as `X-KB-Index` names it): one
        per language it has, since a response gives each entry in its reader's language."""
        with self._lock:
            if build not in self._builds:
                self._builds[build] = {
                    e["id"]: (e["answer"], *(t["answer"] for t in e.get("translations", [])))
                    for e in build_entries(self.settings, build)
                }
            return self._builds[build]

    def request(self, client: httpx.Client, i: int) -> None:
        rng = random.Random(i)
        kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        changed = rng.random() < CHANGED_SHARE
        q = self.question if changed else rng.choice(self.questions)
        entry = self.changed if changed else rng.choice(self.ids)
        page = kind == "entry" and rng.random() < 0.5
        started = time.perf_counter()
        try:
            if kind == "search":
                response = client.get("/api/search", params={"q": q})
            elif kind == "chat":
                response = client.post("/api/chat", json={"message": q})
            else:
                # Pages in Chinese: the changed answer's marker is in its Chinese version.
                response = client.get(f"/entries/{entry}?hl=zh" if page else f"/api/entries/{entry}")
        except httpx.HTTPError as exc:
            ms = (time.perf_counter() - started) * 1000
            self.responses.append(Response(started - self.started, kind, type(exc).__name__, ms))
            return
        ms = (time.perf_counter() - started) * 1000
        build = response.headers.get("x-kb-index", "")
        mixed = response.status_code == 200 and self._mixed(response, build, kind, entry if page else None)
        self.responses.append(Response(started - self.started, kind, response.status_code, ms, build, mixed))

    def _mixed(self, response: httpx.Response, build: str, kind: str, page: str | None) -> bool:
        """Whether a response carries anything the build its header names does not have."""
        if not build:
            return True
        answers = self.answers(build)
        expected = any(self.marker in answer for answer in answers.get(self.changed, ()))
        if self.marker in response.text and not expected:
            return True
        if page is not None:  # an HTML page: the changed entry's page must show its build's answer
            return page == self.changed and expected and self.marker not in response.text
        body: dict[str, Any] = response.json()
        carried = {"search": body.get("hits", []), "chat": body.get("sources", [])}.get(kind)
        if carried is None:
            carried = [body, *body.get("related", [])]
        return any(e["answer"] not in answers.get(e["id"], ()) for e in carried)

    def ingest(self, name: str, sources: Path) -> Step:
        started = time.perf_counter()
        done = subprocess.run(
            kb_command("ingest", "--sources", str(sources)),
            env=kb_env(self.settings),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        seconds = time.perf_counter() - started

        def short(text: str) -> str:
            return text.strip().replace(str(sources), "<copy>").replace(str(self.settings.data_dir), "$KB_DATA_DIR")

        step = Step(
            name,
            started - self.started,
            seconds,
            done.returncode,
            short(done.stdout),
            short(done.stderr),
            linked_build(self.settings),
        )
        self.steps.append(step)
        return step


def linked_build(settings: Settings) -> str:
    """The build `$KB_DATA_DIR/index` points at, named as `X-KB-Index` names it."""
    return Path(os.path.realpath(settings.index_dir)).name


def build_entries(settings: Settings, build: str) -> list[dict[str, Any]]:
    with (settings.data_dir / "builds" / build / "entries.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def broken_copies(tmp: Path) -> dict[str, Path]:
    """Two copies of the shipped sources `kb ingest` must refuse: one file not UTF-8, one manifest naming a missing file."""
    from ingest.manifest import load_manifest

    copies = {}
    for name in ("not UTF-8", "missing file"):
        copy = tmp / name.replace(" ", "-")
        changed_sources(copy, "unused")
        first = load_manifest(copy)[0]
        if name == "not UTF-8":
            with (copy / first.file).open("ab") as f:
                f.write(b"\n\xff\xfe not UTF-8\n")
        else:
            (copy / first.file).unlink()
        copies[name] = copy
    return copies


def run(quick: bool = False, seconds: float | None = None, concurrency: int = 32) -> list[Row]:
    seconds = seconds or (15.0 if quick else 60.0)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        settings = own_settings(tmp)
        marker = f"Soak marker {uuid.uuid4().hex[:12]}: this paragraph is only in the new build."
        changed = changed_sources(tmp / "changed", marker)
        broken = broken_copies(tmp)
        old = linked_build(settings)
        entries = build_entries(settings, old)
        question = next(e["question"] for e in entries if e["id"] == changed)
        soak = Soak(settings, changed, question, marker, questions(holdout=True), [e["id"] for e in entries])
        with serving(settings, KB_ADMIN_TOKEN=TOKEN, KB_RELOAD_INTERVAL="1") as (url, server):
            pool = clients(url, concurrency, timeout=30)
            drive(
                concurrency,
                lambda t, i: pool[t].get("/api/search", params={"q": soak.questions[i % 50]}),
                count=4 * concurrency,
            )  # warm up
            rss_start = status_kib(server.pid)

            failed: list[BaseException] = []

            def events() -> None:
                try:
                    time.sleep(seconds / 3)
                    new = soak.ingest("changed", tmp / "changed").build_after
                    swapped = time.perf_counter() + 30
                    while (
                        httpx.get(f"{url}/healthz", timeout=30).headers.get("x-kb-index") != new
                        and time.perf_counter() < swapped
                    ):
                        time.sleep(0.1)
                    time.sleep(max(0.0, soak.started + 2 * seconds / 3 - time.perf_counter()))
                    for name, copy in broken.items():
                        soak.ingest(name, copy)
                    admin = httpx.post(f"{url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
                    soak.steps.append(
                        Step(
                            "POST /admin/reload",
                            time.perf_counter() - soak.started,
                            0.0,
                            admin.status_code,
                            admin.text,
                            "",
                            admin.headers.get("x-kb-index", ""),
                        )
                    )
                except BaseException as exc:  # reported once the load has finished
                    failed.append(exc)

            timeline = threading.Thread(target=events, daemon=True)
            soak.started = time.perf_counter()
            timeline.start()
            load = drive(concurrency, lambda t, i: soak.request(pool[t], i), seconds=seconds)
            timeline.join()
            if failed:
                raise failed[0]
            rss_end = status_kib(server.pid)
            for client in pool:
                client.close()
    return _rows(soak, load.seconds, rss_start, rss_end, concurrency)


def _rows(soak: Soak, seconds: float, rss_start: int, rss_end: int, concurrency: int) -> list[Row]:
    responses = soak.responses
    statuses = Counter(str(r.status) for r in responses)
    errors = sum(1 for r in responses if not (isinstance(r.status, int) and r.status < 500))
    ms = [r.ms for r in responses]
    by_kind = ", ".join(
        f"{kind} {pct([r.ms for r in responses if r.kind == kind] or [0], 50):.0f}/"
        f"{pct([r.ms for r in responses if r.kind == kind] or [0], 99):.0f}"
        for kind, _ in MIX
    )
    changed, *broken = [s for s in soak.steps if s.name != "POST /admin/reload"]
    admin = next(s for s in soak.steps if s.name == "POST /admin/reload")
    new = changed.build_after
    first_new = min((r.at for r in responses if r.build == new), default=None)
    ingest_end = changed.started + changed.seconds
    swap = [r for r in responses if changed.started <= r.at <= (first_new or ingest_end) + 2.0]
    swap_failed = sum(1 for r in swap if not (isinstance(r.status, int) and r.status < 400))
    mixed = sum(r.mixed for r in responses)
    carrying = sum(1 for r in responses if r.build == new and r.status == 200)
    after_broken = [r for r in responses if r.at > broken[0].started]
    kept = all(r.build == new for r in after_broken if r.build) and all(s.build_after == new for s in broken)
    refused = all(s.code != 0 and len(s.err.splitlines()) == 1 and not s.out for s in broken)
    admin_body = json.loads(admin.out) if admin.code == 200 else {}
    swapped = first_new is not None and changed.code == 0
    return [
        Row(
            f"requests over {seconds:.0f} s at concurrency {concurrency}",
            f"{len(responses)} ({len(responses) / seconds:.0f}/s; "
            + ", ".join(f"{kind} {sum(r.kind == kind for r in responses)}" for kind, _ in MIX)
            + "): "
            + ", ".join(f"{status} × {n}" for status, n in sorted(statuses.items())),
            "no 5xx, no connection errors",
            errors == 0,
        ),
        Row(
            "latency p50 / p99 (search, chat, entry p50/p99)",
            f"{pct(ms, 50):.0f} / {pct(ms, 99):.0f} ms ({by_kind} ms)",
            "–",
        ),
        Row(
            "hot reload: `kb ingest` of one changed answer during the load",
            f"exit {changed.code} in {changed.seconds:.1f} s: {changed.out or changed.err.splitlines()[-1:]}",
            "exit 0",
            changed.code == 0,
        ),
        Row(
            "hot reload: `X-KB-Index` changes to the new build",
            (
                f"first response from the new build {first_new - ingest_end:+.1f} s after the ingest finished"
                if first_new is not None
                else "never"
            ),
            "within the 1 s poll and a load",
            swapped,
        ),
        Row("failed requests during the swap", f"{swap_failed} of {len(swap)}", "0", swapped and swap_failed == 0),
        Row(
            "responses wholly from the build their header names",
            f"{len(responses) - mixed} of {len(responses)}; {mixed} mixed ({carrying} from the new build)",
            "0 mixed",
            mixed == 0,
        ),
        Row(
            "failing `kb ingest` (file not UTF-8; manifest names a missing file)",
            "; ".join(f"exit {s.code}: `{s.err}`" for s in broken),
            "non-zero exit, one-line error",
            refused,
        ),
        Row(
            "server after the failing ingests",
            f"serving {'the new build' if kept else 'ANOTHER build'}; /admin/reload: {admin.code}, "
            f"reloaded={admin_body.get('reloaded')}",
            "new build kept",
            kept and admin_body.get("reloaded") is False,
        ),
        Row("server VmRSS after warm-up → at the end", f"{mib(rss_start)} → {mib(rss_end)}", "–"),
    ]


if __name__ == "__main__":
    main(
        run,
        __doc__,
        seconds=(float, None, "how long the load runs (default 60; 15 with --quick)"),
        concurrency=(int, 32, "concurrent clients"),
    )
