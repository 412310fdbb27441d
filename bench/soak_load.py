"""The soak's mixed load (bench/bench_soak.py): what each closed-loop client sends to each surface, what it checks of
the answer (every entry carried is the build's its header names), and the `kb ingest` runs during the load."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.support's stand-ins

from bench_chat_bots import dingtalk_message, feishu_event  # noqa: E402
from common import ROOT, kb_command, kb_env  # noqa: E402

from kb.settings import Settings  # noqa: E402

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
        try:
            response, wrong = self._sent(client, kind, q, entry, page, i, rng)
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

    def _sent(
        self, client: httpx.Client, kind: str, q: str, entry: str, page: bool, i: int, rng: random.Random
    ) -> tuple[httpx.Response, str]:
        """Request `i` of `kind` sent, and what its answer lacked that its surface should give ("": nothing)."""
        wrong = ""
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
        return response, wrong

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


class Forgetting(list):  # type: ignore[type-arg]
    """The stand-in LLM's record of requests, kept empty: a soak sends tens of thousands."""

    def append(self, item: Any) -> None:
        pass
