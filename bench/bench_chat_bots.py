"""Time the Feishu bot and the DingTalk robot: Feishu's acknowledgement and card, DingTalk's answer, beside /api/search.

Starts the real server (uvicorn, one worker, in a subprocess) with both bots on, and a
stand-in for Feishu's open platform in this process (`http.server` on a loopback port: it
hands out a tenant access token and takes the cards). Each development-set question is sent
as a Feishu event (encrypted and signed as Feishu does), timed to its 200 and to its card's
arrival at the stand-in; then as a DingTalk message (signed), timed to its answer; then to
/api/search. Each is worded a little differently ("… (1)", "… (2)", "… (3)") so that none is
answered from the query cache. One keep-alive connection; every response must be the one expected.

    .venv/bin/python bench/bench_chat_bots.py [--requests 200]

The index is taken from `KB_DATA_DIR` when it exists there, else built into a temporary
directory first. Prints p50, p90, p99 and the slowest, in milliseconds.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import cycle, islice
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_http import free_port, questions, ready_settings, start_server  # noqa: E402
from bench_slack import pct  # noqa: E402

APP_ID, APP_SECRET, TOKEN, KEY = "cli_bench", "bench-secret", "bench-token", "bench-encrypt-key"
DING_KEY, DING_SECRET = "dingbench", "bench-ding-secret"
cards: dict[str, float] = {}  # message id -> when its card arrived (perf_counter)
arrived = threading.Condition()


class OpenPlatform(BaseHTTPRequestHandler):
    """Stands in for open.feishu.cn: a tenant access token, and replies taken (their arrival noted)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/tenant_access_token/internal"):
            answer = {"code": 0, "msg": "ok", "tenant_access_token": "t-bench", "expire": 7200}
        else:
            message_id = self.path.split("/")[-2]
            with arrived:
                cards[message_id] = time.perf_counter()
                arrived.notify_all()
            answer = {"code": 0, "msg": "success", "data": {"message_id": "om_reply"}}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def feishu_event(text: str, chat: str) -> tuple[str, bytes, dict[str, str]]:
    """A message event for `text`, encrypted and signed as Feishu does; with its message id."""
    from Crypto.Cipher import AES

    message_id = f"om_{uuid.uuid4().hex}"
    event = {
        "schema": "2.0",
        "header": {
            "event_id": uuid.uuid4().hex,
            "token": TOKEN,
            "event_type": "im.message.receive_v1",
            "tenant_key": "t",
        },
        "event": {
            "sender": {"sender_id": {"open_id": "ou_bench"}},
            "message": {
                "message_id": message_id,
                "chat_id": chat,
                "chat_type": "p2p",
                "message_type": "text",
                "content": json.dumps({"text": text}),
            },
        },
    }
    data = json.dumps(event).encode()
    pad = 16 - len(data) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(KEY.encode()).digest(), AES.MODE_CBC, iv)
    body = json.dumps({"encrypt": base64.b64encode(iv + cipher.encrypt(data + bytes([pad]) * pad)).decode()}).encode()
    ts, nonce = str(int(time.time())), uuid.uuid4().hex
    signature = hashlib.sha256((ts + nonce + KEY).encode() + body).hexdigest()
    headers = {"X-Lark-Request-Timestamp": ts, "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": signature}
    return message_id, body, {**headers, "Content-Type": "application/json"}


def dingtalk_message(text: str, chat: str) -> tuple[bytes, dict[str, str]]:
    body = {"msgtype": "text", "text": {"content": text}, "msgId": uuid.uuid4().hex, "conversationId": chat}
    ts = str(int(time.time() * 1000))
    sign = base64.b64encode(hmac.new(DING_SECRET.encode(), f"{ts}\n{DING_SECRET}".encode(), hashlib.sha256).digest())
    return json.dumps(body).encode(), {"timestamp": ts, "sign": sign.decode(), "Content-Type": "application/json"}


def card_arrival(message_id: str, timeout: float = 30) -> float:
    deadline = time.monotonic() + timeout
    with arrived:
        while message_id not in cards:
            if not arrived.wait(max(0.0, deadline - time.monotonic())):
                raise SystemExit(f"no card for {message_id} within {timeout} s")
        return cards[message_id]


def asked_three_ways(client: httpx.Client, n: int, text: str) -> tuple[float, float, float, float]:
    """Seconds for question `n` (`text`) as a Feishu event (to its 200, to its card), a DingTalk message and a search."""
    message_id, body, headers = feishu_event(f"{text} (1)", f"oc_{n}")  # a chat each: under its limit
    started = time.perf_counter()
    response = client.post("/feishu/events", content=body, headers=headers)
    acknowledged = time.perf_counter()
    if response.json() != {"msg": "ok"}:
        raise SystemExit(f"{text!r}: Feishu event: HTTP {response.status_code}: {response.text[:200]}")
    card = card_arrival(message_id)
    body, headers = dingtalk_message(f"{text} (2)", f"cid_{n}")
    ding_started = time.perf_counter()
    answer = client.post("/dingtalk/robot", content=body, headers=headers)
    ding = time.perf_counter()
    if answer.status_code != 200 or answer.json().get("msgtype") != "markdown":
        raise SystemExit(f"{text!r}: DingTalk: HTTP {answer.status_code}: {answer.text[:200]}")
    search_started = time.perf_counter()
    client.get("/api/search", params={"q": f"{text} (3)", "k": 4}).raise_for_status()
    searched = time.perf_counter()
    return acknowledged - started, card - started, ding - ding_started, searched - search_started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="timed questions (each sent three ways)")
    args = parser.parse_args()

    platform = ThreadingHTTPServer(("127.0.0.1", 0), OpenPlatform)
    threading.Thread(target=platform.serve_forever, daemon=True).start()
    bots = {
        "KB_FEISHU_APP_ID": APP_ID,
        "KB_FEISHU_APP_SECRET": APP_SECRET,
        "KB_FEISHU_VERIFICATION_TOKEN": TOKEN,
        "KB_FEISHU_ENCRYPT_KEY": KEY,
        "KB_FEISHU_BASE_URL": f"http://127.0.0.1:{platform.server_address[1]}",
        "KB_DINGTALK_APP_KEY": DING_KEY,
        "KB_DINGTALK_APP_SECRET": DING_SECRET,
    }
    items = questions()
    times: dict[str, list[float]] = {
        "Feishu: event → 200": [],
        "Feishu: event → card": [],
        "DingTalk: message → answer": [],
        "GET /api/search": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = start_server(ready_settings(Path(tmp)), port, **bots)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
                for n, text in enumerate(islice(cycle(items), args.requests + 10)):
                    took = asked_three_ways(client, n, text)
                    if n >= 10:  # after the warm-up: the first searches build caches
                        for name, seconds in zip(times, took):
                            times[name].append(seconds * 1000)
        finally:
            server.terminate()
            server.wait(timeout=10)
            platform.shutdown()

    print(
        f"\n{args.requests} questions ({len(items)} distinct), each as a Feishu event, a DingTalk message and a search"
    )
    print(f"{'':30} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, samples in times.items():
        print(
            f"{name:30} {statistics.median(samples):8.1f} {pct(samples, 90):8.1f} {pct(samples, 99):8.1f} {max(samples):8.1f}"
        )


if __name__ == "__main__":
    main()
