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
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

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
)
from bench_chat_bots import TOKEN as FEISHU_TOKEN  # noqa: E402
from common import (
    Row,
    changed_sources,
    clients,
    drive,
    main,
    own_settings,
    pct,
    questions,
    serving,
)  # noqa: E402
from processes import mib, status_kib  # noqa: E402
from soak_github import run_github  # noqa: E402
from soak_load import MCP_TOKEN, MIX, Forgetting, Soak, Step, build_entries, linked_build  # noqa: E402

SECTION = "soak"
TOKEN = "bench-soak-admin-token"
RSS_GROWTH_MIB = 50  # the target for the server's growth after the warm-up


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
        with serving(settings, 1, **surfaces(llm_url, platform_url)) as (url, server):  # `kb serve`, as deployed
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
                    timeline(soak, url, seconds, tmp / "changed", broken)
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


def surfaces(llm_url: str, platform_url: str) -> dict[str, str]:
    """The server's settings that turn every surface on, the LLM and Feishu's platform at their stand-ins."""
    return {
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


def timeline(soak: Soak, url: str, seconds: float, changed: Path, broken: dict[str, Path]) -> None:
    """Halfway, the changed copy ingested and its build waited for; at three quarters, the broken copies ingested,
    then `POST /admin/reload` asked."""
    time.sleep(seconds / 2)
    new = soak.ingest("changed", changed).build_after
    swapped = time.perf_counter() + 30
    while httpx.get(f"{url}/healthz", timeout=120).headers.get("x-kb-index") != new and time.perf_counter() < swapped:
        time.sleep(0.1)
    time.sleep(max(0.0, soak.started + 3 * seconds / 4 - time.perf_counter()))
    for name, copy in broken.items():
        soak.ingest(name, copy)
        reloaded(soak, url)


def reloaded(soak: Soak, url: str) -> None:
    """`POST /admin/reload` asked, its answer kept as a step of the soak."""
    asked = time.perf_counter()
    try:
        admin = httpx.post(f"{url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
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


@contextmanager
def stand_ins() -> Iterator[tuple[str, str]]:
    """The LLM's stand-in and Feishu's open platform's, on loopback ports: (LLM base URL, platform URL)."""
    from tests.support.llm import fake_llm_app
    from tests.support.servers import LoopbackServer

    platform = ThreadingHTTPServer(("127.0.0.1", 0), OpenPlatform)
    threading.Thread(target=platform.serve_forever, daemon=True).start()
    try:
        with LoopbackServer(fake_llm_app(Forgetting())) as llm:
            yield llm.url + "/v1", f"http://127.0.0.1:{platform.server_address[1]}"
    finally:
        platform.shutdown()


def cards_missing(sent: list[str], wait: float = 60.0) -> int:
    """How many acknowledged Feishu events got no card at the stand-in (waiting up to `wait` s for the last)."""
    deadline = time.monotonic() + wait
    with arrived:
        while any(m not in cards for m in sent) and arrived.wait(max(0.0, deadline - time.monotonic())):
            pass
        return sum(1 for m in sent if m not in cards)


def _rows(soak: Soak, seconds: float, rss: list[int], missing: int, concurrency: int) -> list[Row]:
    """The report; `rss` the server's VmRSS in KiB after the warm-up, every 30 s of the load, and at the end."""
    return _traffic_rows(soak, seconds, missing, concurrency) + _reload_rows(soak) + _memory_rows(rss)


def _traffic_rows(soak: Soak, seconds: float, missing: int, concurrency: int) -> list[Row]:
    """The requests sent, those failed, the Feishu cards missing and the latency per surface."""
    responses = soak.responses
    statuses = Counter(str(r.status) for r in responses)
    failed = [r for r in responses if r.failed]
    wrong = Counter(f"{r.kind}: {r.wrong}" for r in failed if r.wrong)
    by_kind = "; ".join(
        f"{kind} {pct(ms, 50):.0f} / {pct(ms, 95):.0f}"
        for kind, _ in MIX
        if (ms := [r.ms for r in responses if r.kind == kind])
    )
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
    ]


def _reload_rows(soak: Soak) -> list[Row]:
    """The hot reload during the load, the responses' builds, and the failing ingests after it."""
    responses = soak.responses
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
    return [
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
    ]


def _memory_rows(rss: list[int]) -> list[Row]:
    """The server's VmRSS after the warm-up, through the load and at the end."""
    rss_start, rss_end, rss_peak = rss[0], rss[-1], max(rss)
    growth = (rss_end - rss_start) / 1024
    return [
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
