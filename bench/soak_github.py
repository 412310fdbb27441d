"""The soak of the GitHub surface (bench/bench_soak.py --surface github): signed deliveries, with bodies of
GitHub's largest size, beside `/healthz` and `/api/search`, while the API stand-in stalls and rate-limits."""

from __future__ import annotations

import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.support's stand-ins

from common import Row, clients, drive, own_settings, pct, questions, serving  # noqa: E402
from processes import mib, status_kib  # noqa: E402
from soak_load import Forgetting  # noqa: E402

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
        stand_in.calls = Forgetting()
        stand_in.tokens = Forgetting()
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
