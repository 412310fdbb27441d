"""Time from a signed `/faq` slash-command request to its 200 response, against Slack's 3-second limit.

Starts the real server (uvicorn, one worker, in a subprocess, Slack on with a throwaway
signing secret) on a free loopback port, and sends the development-set questions as
form-encoded slash commands, each signed the way Slack signs them, over one keep-alive
connection. Every response must be a 200 Block Kit reply.

    .venv/bin/python bench/bench_slack.py [--requests 300]

The index is taken from `KB_DATA_DIR` when it exists there, else built into a temporary
directory first. Prints p50, p90, p99 and the slowest request, in milliseconds.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import statistics
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_http import free_port, questions, ready_settings, start_server  # noqa: E402

SECRET = "bench-signing-secret"
SLACK_LIMIT_MS = 3000


def signed(text: str) -> tuple[bytes, dict[str, str]]:
    """A slash-command body and the headers Slack would send with it."""
    body = urlencode(
        {
            "command": "/faq",
            "text": text,
            "user_id": "U0001",
            "team_id": "T0001",
            "channel_id": "C0001",
            "response_url": "",
            "trigger_id": "1.2.3",
        }
    ).encode()
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return body, {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="timed requests")
    args = parser.parse_args()

    items = questions()
    with tempfile.TemporaryDirectory() as tmp:
        settings = ready_settings(Path(tmp))
        port = free_port()
        server = start_server(settings, port, KB_SLACK_SIGNING_SECRET=SECRET)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
                for text in items[:10]:  # warm up: first searches build caches
                    body, headers = signed(text)
                    client.post("/slack/command", content=body, headers=headers).raise_for_status()
                slack: list[float] = []
                search: list[float] = []
                for text in islice(cycle(items), args.requests):
                    body, headers = signed(text)  # signing is the client's work, outside the timing
                    started = time.perf_counter()
                    response = client.post("/slack/command", content=body, headers=headers)
                    slack.append((time.perf_counter() - started) * 1000)
                    if response.status_code != 200 or "blocks" not in response.json():
                        raise SystemExit(f"{text!r}: HTTP {response.status_code}: {response.text[:200]}")
                    # The same question through /api/search, right after: what retrieval alone costs now.
                    started = time.perf_counter()
                    client.get("/api/search", params={"q": text, "k": 4}).raise_for_status()
                    search.append((time.perf_counter() - started) * 1000)
        finally:
            server.terminate()
            server.wait(timeout=10)

    print(f"\n{len(slack)} signed /faq requests over HTTP ({len(items)} distinct questions), one keep-alive connection")
    print(f"{'':28} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, samples in (("POST /slack/command", slack), ("GET /api/search (same q)", search)):
        print(
            f"{name:28} {statistics.median(samples):8.1f} {pct(samples, 90):8.1f} {pct(samples, 99):8.1f} {max(samples):8.1f}"
        )
    extra = statistics.median(a - b for a, b in zip(slack, search, strict=True))
    print(f"\nSlack's own share (signature, Block Kit) at p50: {extra:+.1f} ms per request;")
    print(f"the slowest reply used {max(slack) / SLACK_LIMIT_MS * 100:.1f}% of Slack's 3-second limit")


if __name__ == "__main__":
    main()
