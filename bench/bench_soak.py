"""Soak: every surface at concurrency 32 for ten minutes, a new build swapped in halfway, and failing ingests.

`kb serve` (one worker) in a subprocess on a loopback port (`KB_RATE_LIMIT=off`, `KB_ADMIN_TOKEN` set,
`KB_RELOAD_INTERVAL=1`, `/mcp` and `/v1` on, the Feishu bot and the DingTalk robot on) on a data
directory of its own, with stand-ins in this process, each a real HTTP server on a loopback
port: an LLM (OpenAI's streaming API, tests/support/llm.py) and Feishu's open platform (a
tenant access token; cards taken and counted). Closed-loop clients (one thread and one
keep-alive `httpx.Client` each) send, by share:

- `search` `GET /api/search`; `chat` `POST /api/chat` (whole); `chat left` the same streamed
  (`Accept: text/event-stream`), the reader leaving after the first event; `v1` `POST
  /v1/chat/completions`, half of them streamed and left after the first chunk; `mcp` a
  `tools/call` of `search_faq` on `/mcp`; `feishu` a message event, encrypted and signed as
  Feishu does, its card expected at the stand-in; `dingtalk` a signed robot message; `vote`
  `POST /api/feedback` with a session from a chat reply, each from its own address behind a
  trusted proxy (`X-Forwarded-For`), as users behind a load balancer; `entry` `GET
  /api/entries/{id}` or the `/entries/{id}` page. Questions are the development and holdout
  sets'. One entry (the changed one, below) is asked for more often than the rest, so
  responses show which version of it they carry.

- Halfway, `kb ingest --sources <copy>` runs in a subprocess against the server's data
  directory, the copy having a new first paragraph in one entry's answer. The server should
  pick the new build up by its poll, every response before and after naming its build in
  `X-KB-Index`, and no request failing.
- Every search, chat and entry response is checked against the build its header names: each
  entry it carries has that build's answer, and the new paragraph appears only in responses
  labelled with the new build.
- At three quarters `kb ingest` runs on two broken copies (a Markdown file that is not UTF-8, a
  manifest naming a missing file): each must exit non-zero with a one-line error, and the
  server keep serving the new build (`POST /admin/reload` then reports nothing to reload).
- Reported: failed requests (a 5xx, a connection error, or a surface's answer not what it
  should be: no card for a Feishu event; expected none), p50 and p95 per surface, and the
  server's VmRSS after the warm-up (a pass over every surface) and at the end (target: under
  50 MiB growth).

With `--surface github`, a soak of the GitHub surface instead: `kb serve` with the GitHub bot on
(comment mode, a token), its API a stand-in in this process (tests/support/github.py, a real HTTP
server on a loopback port) that answers every call after `--api-stall` seconds with a secondary
rate limit (403, `Retry-After: 60`), so every answer waits on GitHub. Closed-loop clients send
signed deliveries, by share: `issue` (an issue opened, its body 65,536 characters: a question and a
pasted log), `comment` (a `/faq` comment of 65,536 characters), `push` (a push no source follows),
beside `healthz` (`GET /healthz`) and `search` (`GET /api/search`), after a baseline of the same
length with `healthz` and `search` alone (what the machine gives without GitHub). Reported: p50 /
p99 / max per kind in each half, the deliveries over 1 s to acknowledge (target: none), and
`/healthz` and `/api/search` p99 with deliveries (target: under 1 s) beside the baseline's.

    .venv/bin/python bench/bench_soak.py [--minutes 10] [--concurrency 32] [--quick] [--surface all|github]
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
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.support's stand-in LLM

from bench_chat_bots import (  # noqa: E402
    APP_ID,
    APP_SECRET,
    DING_KEY,
    DING_SECRET,
    KEY,
    OpenPlatform,
    arrived,
    cards,
    dingtalk_message,
    feishu_event,
)
from bench_chat_bots import TOKEN as FEISHU_TOKEN  # noqa: E402
from common import (
    ROOT,
    Row,
    changed_sources,
    clients,
    drive,
    kb_command,
    kb_env,
    main,
    own_settings,
    pct,
    questions,
    serving,
)  # noqa: E402
from processes import mib, status_kib  # noqa: E402

from kb.settings import Settings  # noqa: E402

SECTION = "soak"
TOKEN = "bench-soak-admin-token"
MCP_TOKEN = "bench-soak-mcp-token"
MIX = (
    ("search", 0.34),
    ("chat", 0.08),
    ("chat left", 0.08),
    ("v1", 0.10),
    ("mcp", 0.10),
    ("feishu", 0.08),
    ("dingtalk", 0.08),
    ("vote", 0.06),
    ("entry", 0.08),
)
CHANGED_SHARE = 0.2  # of searches and entry requests, about the changed entry
CHECKED = ("search", "chat", "entry")  # the responses checked against their build
RSS_GROWTH_MIB = 50  # the target for the server's growth after the warm-up


@dataclass
class Response:
    at: float  # seconds since the soak started
    kind: str
    status: int | str  # the HTTP status, or the name of the error when there was no response
    ms: float
    build: str = ""
    mixed: bool = False  # carries something its build does not have
    wrong: str = ""  # what a 200 lacked that its surface should give ("" when it was right)

    @property
    def failed(self) -> bool:
        return not (isinstance(self.status, int) and self.status < 500) or bool(self.wrong)


@dataclass
class Step:
    """A `kb ingest` run during the soak."""

    name: str
    started: float
    seconds: float
    code: int | str  # the exit status, or the HTTP status (the error's name when there was no answer)
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
    feishu_sent: list[str] = field(default_factory=list)  # message ids of the events acknowledged
    sessions: list[str] = field(default_factory=list)  # voting sessions chat replies gave
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

    def request(self, client: httpx.Client, i: int, kind: str | None = None) -> None:
        rng = random.Random(i)
        kind = kind or rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        changed = rng.random() < CHANGED_SHARE
        q = self.question if changed else rng.choice(self.questions)
        entry = self.changed if changed else rng.choice(self.ids)
        page = kind == "entry" and rng.random() < 0.5
        started = time.perf_counter()
        wrong = ""
        try:
            if kind == "search":
                response = client.get("/api/search", params={"q": q})
            elif kind == "chat":
                response = client.post("/api/chat", json={"message": q})
                if response.status_code == 200 and response.json().get("session"):
                    self.sessions.append(response.json()["session"])
            elif kind == "chat left":
                response, wrong = _left(client, "/api/chat", {"message": q}, b"event: ")
            elif kind == "v1":
                body = {"model": "kb", "messages": [{"role": "user", "content": q}]}
                if rng.random() < 0.5:
                    response, wrong = _left(client, "/v1/chat/completions", {**body, "stream": True}, b"data: ")
                else:
                    response = client.post("/v1/chat/completions", json=body)
                    if response.status_code == 200 and not response.json()["choices"][0]["message"]["content"]:
                        wrong = "an empty completion"
            elif kind == "mcp":
                call = {"name": "search_faq", "arguments": {"query": q}}
                rpc = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}
                response = client.post("/mcp", json=rpc, headers=MCP_HEADERS)
                if response.status_code == 200 and "result" not in response.json():
                    wrong = f"no result: {response.text[:200]}"
            elif kind == "feishu":
                message_id, body_bytes, headers = feishu_event(q, f"oc_soak_{i}")
                response = client.post("/feishu/events", content=body_bytes, headers=headers)
                if response.status_code == 200:
                    self.feishu_sent.append(message_id)
            elif kind == "dingtalk":
                body_bytes, headers = dingtalk_message(q, f"cid_soak_{i}")
                response = client.post("/dingtalk/robot", content=body_bytes, headers=headers)
                if response.status_code == 200 and not response.json().get("markdown", {}).get("text"):
                    wrong = "no answer"
            elif kind == "vote":
                session = self.sessions[-1] if self.sessions else ""
                vote = {"entry_id": entry, "message": q, "helpful": rng.random() < 0.7, "session": session}
                address = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
                response = client.post("/api/feedback", json=vote, headers={"X-Forwarded-For": address})
            else:
                # Pages in Chinese: the changed answer's marker is in its Chinese version.
                response = client.get(f"/entries/{entry}?hl=zh" if page else f"/api/entries/{entry}")
        except httpx.HTTPError as exc:
            ms = (time.perf_counter() - started) * 1000
            self.responses.append(Response(started - self.started, kind, type(exc).__name__, ms))
            return
        ms = (time.perf_counter() - started) * 1000
        build = response.headers.get("x-kb-index", "")
        mixed = (
            kind in CHECKED
            and response.status_code == 200
            and self._mixed(response, build, kind, entry if page else None)
        )
        self.responses.append(Response(started - self.started, kind, response.status_code, ms, build, mixed, wrong))

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


MCP_HEADERS = {"Authorization": f"Bearer {MCP_TOKEN}", "Accept": "application/json, text/event-stream"}


def _left(client: httpx.Client, path: str, body: dict[str, Any], first: bytes) -> tuple[httpx.Response, str]:
    """POST `body` for a stream and leave once its first event (starting `first`) has come; what was wrong, if anything."""
    with client.stream("POST", path, json=body, headers={"Accept": "text/event-stream"}) as response:
        if response.status_code != 200:
            response.read()
            return response, ""
        for chunk in response.iter_bytes():
            return response, "" if chunk.startswith(first) else f"a stream starting {chunk[:60]!r}"
    return response, "an empty stream"


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


def run(
    quick: bool = False,
    minutes: float | None = None,
    concurrency: int = 32,
    surface: str = "all",
    api_stall: float = 5.0,
) -> list[Row]:
    seconds = 60 * minutes if minutes else (15.0 if quick else 600.0)
    if surface == "github":
        return run_github(seconds, concurrency, api_stall)
    if surface != "all":
        raise SystemExit(f"--surface {surface!r}: all or github")
    with tempfile.TemporaryDirectory() as tmp_name, stand_ins() as (llm_url, platform_url):
        tmp = Path(tmp_name)
        settings = own_settings(tmp)
        marker = f"Soak marker {uuid.uuid4().hex[:12]}: this paragraph is only in the new build."
        changed = changed_sources(tmp / "changed", marker)
        broken = broken_copies(tmp)
        old = linked_build(settings)
        entries = build_entries(settings, old)
        question = next(e["question"] for e in entries if e["id"] == changed)
        soak = Soak(settings, changed, question, marker, questions(holdout=True), [e["id"] for e in entries])
        surfaces = {
            "KB_ADMIN_TOKEN": TOKEN,
            "KB_RELOAD_INTERVAL": "1",
            "KB_MCP_TOKEN": MCP_TOKEN,
            "KB_TRUSTED_PROXIES": "127.0.0.1",
            "KB_LLM_BASE_URL": llm_url,
            "KB_LLM_MODEL": "soak",
            "KB_FEISHU_APP_ID": APP_ID,
            "KB_FEISHU_APP_SECRET": APP_SECRET,
            "KB_FEISHU_VERIFICATION_TOKEN": FEISHU_TOKEN,
            "KB_FEISHU_ENCRYPT_KEY": KEY,
            "KB_FEISHU_BASE_URL": platform_url,
            "KB_DINGTALK_APP_KEY": DING_KEY,
            "KB_DINGTALK_APP_SECRET": DING_SECRET,
        }
        with serving(settings, 1, **surfaces) as (url, server):  # `kb serve`, as deployed
            pool = clients(url, concurrency, timeout=60)
            kinds = [k for k, _ in MIX]
            # Warm-up: every surface, a few times each, before the first figure of memory.
            drive(concurrency, lambda t, i: soak.request(pool[t], -1 - i, kinds[i % len(kinds)]), count=8 * len(kinds))
            soak.responses.clear()
            rss_start = status_kib(server.pid)
            rss_samples = [rss_start]

            failed: list[BaseException] = []
            finished = threading.Event()

            def events() -> None:
                try:
                    time.sleep(seconds / 2)
                    new = soak.ingest("changed", tmp / "changed").build_after
                    swapped = time.perf_counter() + 30
                    while (
                        httpx.get(f"{url}/healthz", timeout=120).headers.get("x-kb-index") != new
                        and time.perf_counter() < swapped
                    ):
                        time.sleep(0.1)
                    time.sleep(max(0.0, soak.started + 3 * seconds / 4 - time.perf_counter()))
                    for name, copy in broken.items():
                        soak.ingest(name, copy)
                    asked = time.perf_counter()
                    try:
                        admin = httpx.post(
                            f"{url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
                        )
                        said: tuple[int | str, str, str] = (
                            admin.status_code,
                            admin.text,
                            admin.headers.get("x-kb-index", ""),
                        )
                    except httpx.HTTPError as exc:  # a server too busy to answer: reported, not raised
                        said = (type(exc).__name__, "", "")
                    code, out, build = said
                    soak.steps.append(
                        Step(
                            "POST /admin/reload",
                            asked - soak.started,
                            time.perf_counter() - asked,
                            code,
                            out,
                            "",
                            build,
                        )
                    )
                except BaseException as exc:  # reported once the load has finished
                    failed.append(exc)

            def memory() -> None:
                while not finished.wait(min(30.0, seconds / 10)):
                    rss_samples.append(status_kib(server.pid))

            timeline = threading.Thread(target=events, daemon=True)
            sampler = threading.Thread(target=memory, daemon=True)
            soak.started = time.perf_counter()
            timeline.start()
            sampler.start()
            load = drive(concurrency, lambda t, i: soak.request(pool[t], i), seconds=seconds)
            finished.set()
            timeline.join()
            if failed:
                raise failed[0]
            missing = cards_missing(soak.feishu_sent)
            rss_end = status_kib(server.pid)
            for client in pool:
                client.close()
    return _rows(soak, load.seconds, rss_samples + [rss_end], missing, concurrency)


@contextmanager
def stand_ins() -> Iterator[tuple[str, str]]:
    """The LLM's stand-in and Feishu's open platform's, on loopback ports: (LLM base URL, platform URL)."""
    from tests.support.llm import fake_llm_app
    from tests.support.servers import LoopbackServer

    platform = ThreadingHTTPServer(("127.0.0.1", 0), OpenPlatform)
    threading.Thread(target=platform.serve_forever, daemon=True).start()
    try:
        with LoopbackServer(fake_llm_app(_Forgetting())) as llm:
            yield llm.url + "/v1", f"http://127.0.0.1:{platform.server_address[1]}"
    finally:
        platform.shutdown()


class _Forgetting(list):  # type: ignore[type-arg]
    """The stand-in LLM's record of requests, kept empty: a soak sends tens of thousands."""

    def append(self, item: Any) -> None:
        pass


def cards_missing(sent: list[str], wait: float = 60.0) -> int:
    """How many acknowledged Feishu events got no card at the stand-in (waiting up to `wait` s for the last)."""
    deadline = time.monotonic() + wait
    with arrived:
        while any(m not in cards for m in sent) and arrived.wait(max(0.0, deadline - time.monotonic())):
            pass
        return sum(1 for m in sent if m not in cards)


def _rows(soak: Soak, seconds: float, rss: list[int], missing: int, concurrency: int) -> list[Row]:
    """The report; `rss` the server's VmRSS in KiB after the warm-up, every 30 s of the load, and at the end."""
    rss_start, rss_end, rss_peak = rss[0], rss[-1], max(rss)
    responses = soak.responses
    statuses = Counter(str(r.status) for r in responses)
    failed = [r for r in responses if r.failed]
    wrong = Counter(f"{r.kind}: {r.wrong}" for r in failed if r.wrong)
    by_kind = "; ".join(
        f"{kind} {pct(ms, 50):.0f} / {pct(ms, 95):.0f}"
        for kind, _ in MIX
        if (ms := [r.ms for r in responses if r.kind == kind])
    )
    changed, *broken = [s for s in soak.steps if s.name != "POST /admin/reload"]
    admin = next(s for s in soak.steps if s.name == "POST /admin/reload")
    new = changed.build_after
    first_new = min((r.at for r in responses if r.build == new), default=None)
    ingest_end = changed.started + changed.seconds
    swap = [r for r in responses if changed.started <= r.at <= (first_new or ingest_end) + 2.0]
    swap_failed = sum(1 for r in swap if r.failed)
    mixed = sum(r.mixed for r in responses)
    carrying = sum(1 for r in responses if r.build == new and r.status == 200)
    after_broken = [r for r in responses if r.at > broken[0].started]
    kept = all(r.build == new for r in after_broken if r.build) and all(s.build_after == new for s in broken)
    refused = all(s.code != 0 and len(s.err.splitlines()) == 1 and not s.out for s in broken)
    admin_body = json.loads(admin.out) if admin.code == 200 else {}
    swapped = first_new is not None and changed.code == 0
    growth = (rss_end - rss_start) / 1024
    return [
        Row(
            f"requests over {seconds / 60:.1f} min at concurrency {concurrency}",
            f"{len(responses)} ({len(responses) / seconds:.0f}/s; "
            + ", ".join(f"{kind} {sum(r.kind == kind for r in responses)}" for kind, _ in MIX)
            + "): "
            + ", ".join(f"{status} × {n}" for status, n in sorted(statuses.items())),
            "–",
        ),
        Row(
            "failed requests (5xx, no response, or not the surface's answer)",
            f"{len(failed)}" + (": " + ", ".join(f"{w} × {n}" for w, n in wrong.most_common(3)) if wrong else ""),
            "0",
            not failed,
        ),
        Row(
            "Feishu events acknowledged without a card at the stand-in",
            f"{missing} of {len(soak.feishu_sent)}",
            "0",
            missing == 0,
        ),
        Row("latency p50 / p95 per surface (ms)", by_kind, "–"),
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
            f"serving {'the new build' if kept else 'ANOTHER build'}; /admin/reload: {admin.code} "
            f"in {admin.seconds:.1f} s, reloaded={admin_body.get('reloaded')}",
            "new build kept",
            kept and admin_body.get("reloaded") is False,
        ),
        Row(
            "server VmRSS after the warm-up → at the end (peak)",
            f"{mib(rss_start)} → {mib(rss_end)} ({growth:+.0f} MiB; peak {mib(rss_peak)})",
            f"under {RSS_GROWTH_MIB} MiB growth",
            growth < RSS_GROWTH_MIB,
        ),
        Row(
            "server VmRSS through the load, MiB (after the warm-up, every 30 s, at the end)",
            " ".join(f"{kib / 1024:.0f}" for kib in rss)
            + f"; last half of the load {(rss_end - rss[len(rss) // 2]) / 1024:+.0f} MiB",
            "flat once the caches are full",
        ),
    ]


# --- the GitHub surface -------------------------------------------------------------------------

GITHUB_MIX = (("issue", 0.25), ("comment", 0.15), ("push", 0.10), ("healthz", 0.20), ("search", 0.30))
BASELINE_MIX = (("healthz", 0.40), ("search", 0.60))  # the same clients with no delivery: what the site gives alone
GITHUB_BODY = 65_536  # characters: the largest issue body or comment GitHub accepts
DELIVERIES = ("issue", "comment", "push")
Timing = tuple[str, str, int | str, float]  # phase, kind, status (or the error's name), milliseconds


def long_body(question: str, n: int, command: bool = False) -> str:
    """A question and a pasted log, `GITHUB_BODY` characters in all (a `/faq` command when `command`)."""
    head = f"/faq {question}\n\n" if command else f"### Describe the bug\n\n{question}\n\n### Logs\n\n```\n"
    line = f"[rank{n % 8}]: step {n} loss=nan grad_norm=inf at megatron/training.py:{n % 997} in train_step\n"
    return (head + line * (GITHUB_BODY // len(line) + 1))[:GITHUB_BODY]


def github_request(client: httpx.Client, i: int, questions: list[str], kind: str) -> int | str:
    """One request of the GitHub soak: its status, or the error's name."""
    from tests.support.github import comment_event, delivery, issue_event, push_event

    q = random.Random(i).choice(questions)
    number = 1 + i % 500
    try:
        if kind in DELIVERIES:
            if kind == "issue":
                payload = issue_event(q[:200], long_body(q, i), number=number)
            elif kind == "comment":
                payload = comment_event(long_body(q, i, command=True), number=number, login=f"reader{i % 50}")
            else:
                payload = push_event("https://github.com/someone/else.git", repo="someone/else")
                payload["after"] = f"{i:040x}"
            body, headers = delivery({"issue": "issues", "comment": "issue_comment"}.get(kind, kind), payload)
            response = client.post("/github/webhook", content=body, headers=headers)
        elif kind == "healthz":
            response = client.get("/healthz")
        else:
            response = client.get("/api/search", params={"q": q})
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return response.status_code


def run_github(seconds: float, concurrency: int, stall: float) -> list[Row]:
    """The GitHub soak (`--surface github`): half the time `/healthz` and `/api/search` alone (the baseline), half
    with signed deliveries among them while the API stand-in stalls and rate-limits."""
    from tests.support.github import SECRET, GitHubStandIn
    from tests.support.servers import LoopbackServer

    servers: list[LoopbackServer] = []

    def serve(app: Any) -> LoopbackServer:
        servers.append(LoopbackServer(app).__enter__())
        return servers[-1]

    with tempfile.TemporaryDirectory() as tmp_name:
        settings = own_settings(Path(tmp_name))
        stand_in = GitHubStandIn(serve)
        stand_in.slow, stand_in.retry_after = stall, 60
        stand_in.calls = _Forgetting()
        stand_in.tokens = _Forgetting()
        asked = questions(holdout=True)
        env = {
            "KB_GITHUB_WEBHOOK_SECRET": SECRET,
            "KB_GITHUB_TOKEN": "ghp-soak-token",
            "KB_GITHUB_API_URL": stand_in.url,
            "KB_GITHUB_MODE": "comment",
            "KB_CHANNEL_PRECISION": "github=0.25",
        }
        timings: list[Timing] = []
        lock = threading.Lock()
        with serving(settings, 1, **env) as (url, server):
            pool = clients(url, concurrency, timeout=120)
            kinds = [k for k, _ in GITHUB_MIX]
            drive(concurrency, lambda t, i: github_request(pool[t], -1 - i, asked, kinds[i % len(kinds)]), count=20)
            for phase, mix in (("baseline", BASELINE_MIX), ("github", GITHUB_MIX)):

                def timed_request(t: int, i: int) -> None:
                    kind = random.Random(i).choices([k for k, _ in mix], [w for _, w in mix])[0]
                    started = time.perf_counter()
                    status = github_request(pool[t], i, asked, kind)
                    with lock:
                        timings.append((phase, kind, status, (time.perf_counter() - started) * 1000))

                drive(concurrency, timed_request, seconds=seconds / 2)
            rss = status_kib(server.pid)
            for client in pool:
                client.close()
        for server_thread in servers:
            server_thread.__exit__(None, None, None)
    return _github_rows(timings, seconds, concurrency, stall, rss)


def _github_rows(timings: list[Timing], seconds: float, concurrency: int, stall: float, rss: int) -> list[Row]:
    statuses = Counter(f"{kind} {status}" for phase, kind, status, _ in timings if phase == "github")
    failed = [t for t in timings if not (isinstance(t[2], int) and t[2] < 500)]
    acks = [ms for _, kind, _, ms in timings if kind in DELIVERIES]
    late = sum(ms > 1000 for ms in acks)

    def ms_of(phase: str, kind: str) -> list[float]:
        return [ms for p, k, _, ms in timings if p == phase and k == kind]

    def figures(phase: str, kinds: tuple[tuple[str, float], ...]) -> str:
        shown = [(k, ms_of(phase, k)) for k, _ in kinds]
        return "; ".join(f"{k} {pct(ms, 50):.0f} / {pct(ms, 99):.0f} / {max(ms):.0f}" for k, ms in shown if ms)

    p99 = {kind: pct(ms_of("github", kind) or [0.0], 99) for kind in ("healthz", "search")}
    before = {kind: pct(ms_of("baseline", kind) or [0.0], 99) for kind in ("healthz", "search")}
    ack_p99 = pct(acks or [0.0], 99)
    return [
        Row(
            f"requests over {seconds / 60:.1f} min at concurrency {concurrency} (half baseline, half with "
            f"deliveries), the API stalling {stall:g} s then 403 Retry-After: 60",
            f"{len(timings)}; with deliveries: " + ", ".join(f"{name} × {n}" for name, n in sorted(statuses.items())),
            "–",
        ),
        Row("failed requests (5xx or no response)", str(len(failed)), "0", not failed),
        Row("baseline (no delivery): p50 / p99 / max (ms)", figures("baseline", BASELINE_MIX), "–"),
        Row("with deliveries: p50 / p99 / max (ms)", figures("github", GITHUB_MIX), "–"),
        Row(
            "webhook acknowledgement p99 (ms); deliveries over 1 s",
            f"{ack_p99:.0f}; {late} of {len(acks)}",
            "under 1,000; none",
            ack_p99 < 1000 and late == 0,
        ),
        Row(
            "`/healthz` and `/api/search` p99 with deliveries (ms; baseline in brackets)",
            f"{p99['healthz']:.0f} ({before['healthz']:.0f}) and {p99['search']:.0f} ({before['search']:.0f})",
            "under 1,000",
            max(p99.values()) < 1000,
        ),
        Row("server VmRSS at the end", mib(rss), "–"),
    ]


if __name__ == "__main__":
    main(
        run,
        __doc__,
        minutes=(float, None, "how long the load runs, in minutes (default 10; 15 s with --quick)"),
        concurrency=(int, 32, "concurrent clients"),
        surface=(
            str,
            "all",
            "all: every surface, a build swapped in; github: the GitHub webhook against a stalling API",
        ),
        api_stall=(float, 5.0, "with --surface github: seconds the API stand-in takes before its rate limit"),
    )
