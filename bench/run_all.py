"""Every benchmark, one table: section | metric | measured | target | ok?, then the machine.

Runs, in this process, the `run(quick)` of bench_startup (start-up, memory), bench_http
(the query path), bench_long_inputs, bench_hostile_text (the worst pasted shapes reduced), bench_hostile_patterns (every pattern on hostile text), bench_workers, bench_core (ingest), bench_soak, bench_acknowledged (the GitHub and harvest surfaces, a kill -9
halfway: nothing acknowledged lost), bench_scale and
bench_replicas (on a throwaway PostgreSQL), bench_links (links: loading 10,000, their cost to a
search), bench_tables (10,000 entries from a CSV against the same as Markdown) and learning (retrieval on
real questions as links are added); and bench_slack, bench_chat_bots and bench_insights as scripts, their printed
figures read back into rows. All of
them share one temporary data directory made first (`KB_DATA_DIR` points at it; the
embedding cache of the usual data directory is copied in), so nothing outside it is written
and no benchmark embeds the shipped FAQs again.

    .venv/bin/python bench/run_all.py            # all of it, about half an hour on 2 cores (`make bench`)
    .venv/bin/python bench/run_all.py --quick    # a smoke run of a few minutes

Progress goes to stderr, the table to stdout. A benchmark that fails gives a row saying why.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from common import ROOT, Row, machine, ok_mark, own_settings, table  # noqa: E402

IN_PROCESS = (
    "bench_startup",
    "bench_http",
    "bench_long_inputs",
    "bench_hostile_text",
    "bench_hostile_patterns",
    "bench_workers",
    "bench_core",
    "bench_soak",
    "bench_acknowledged",
    "bench_scale",
    "bench_replicas",
    "bench_links",
    "bench_tables",
    "bench_adapter_cost",
    "learning",
    "adapter",
)


def slack_rows(output: str) -> list[Row]:
    found = re.search(r"^POST /slack/command\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", output, re.M)
    if not found:
        raise ValueError("no `POST /slack/command` line")
    p50, p99, slowest = map(float, found.groups())
    return [
        Row(
            "signed `/faq` slash command, p50 / p99 / slowest",
            f"{p50:.0f} / {p99:.0f} / {slowest:.0f} ms",
            "slowest < 3 s (Slack's limit)",
            slowest < 3000,
        )
    ]


def chat_bot_rows(output: str) -> list[Row]:
    def line(name: str) -> tuple[float, float, float]:
        found = re.search(rf"^{re.escape(name)}\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", output, re.M)
        if not found:
            raise ValueError(f"no `{name}` line")
        p50, p99, slowest = map(float, found.groups())
        return p50, p99, slowest

    ack, card, ding = line("Feishu: event → 200"), line("Feishu: event → card"), line("DingTalk: message → answer")
    return [
        Row(
            "Feishu event acknowledged, p50 / p99 / slowest",
            "{:.0f} / {:.0f} / {:.0f} ms".format(*ack),
            "slowest < 3 s (Feishu's limit)",
            ack[2] < 3000,
        ),
        Row("Feishu event to its card sent, p50 / p99 / slowest", "{:.0f} / {:.0f} / {:.0f} ms".format(*card), "–"),
        Row(
            "DingTalk message answered, p50 / p99 / slowest",
            "{:.0f} / {:.0f} / {:.0f} ms".format(*ding),
            'slowest < 2 s (then "still looking")',
            ding[2] < 2000,
        ),
    ]


def insights_rows(output: str) -> list[Row]:
    ratio = float(_find(r"p50 with / without: ([\d.]+)", output)[0])
    cost = float(_find(r"Recorder.searched costs the request ([\d.]+) µs", output)[0])
    clients, rate, failed, recorded, sent = map(
        int, _find(r"(\d+) concurrent clients: (\d+) searches/s, (\d+) failed, (\d+) of (\d+) recorded", output)
    )
    return [
        Row("`/api/search` p50 with the insights store / without", f"{ratio:.3f}", "≈ 1 (≤ 1.05)", ratio <= 1.05),
        Row("`Recorder.searched`, cost to the request", f"{cost:.0f} µs", "–"),
        # Rows still queued from its latency blocks can land in the count too, hence "at least".
        Row(
            f"recording under {clients} concurrent clients",
            f"{rate}/s, {failed} failed, {recorded} of {sent} recorded",
            "none failed, all recorded",
            failed == 0 and recorded >= sent,
        ),
    ]


def _find(pattern: str, output: str) -> tuple[str, ...]:
    found = re.search(pattern, output)
    if not found:
        raise ValueError(f"no line matching {pattern!r}")
    return found.groups()


SCRIPTS: dict[str, tuple[str, list[str], list[str], Callable[[str], list[Row]]]] = {
    # script: (section, arguments, arguments with --quick, rows from its output)
    "bench_slack": ("slack", [], ["--requests", "60"], slack_rows),
    "bench_chat_bots": ("chat bots", [], ["--requests", "40"], chat_bot_rows),
    "bench_insights": ("insights", [], ["--rounds", "1", "--repeat", "1", "--threads", "8"], insights_rows),
}


def in_process(name: str, quick: bool) -> tuple[str, list[Row]]:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        return name.removeprefix("bench_"), [Row(f"`bench/{name}.py`", f"not run: {exc}", "", None)]
    section = getattr(module, "SECTION", name.removeprefix("bench_"))
    return section, [Row(*row) for row in module.run(quick=quick)]


def script(name: str, quick: bool) -> tuple[str, list[Row]]:
    section, args, quick_args, rows = SCRIPTS[name]
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *(quick_args if quick else args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    sys.stderr.write(done.stdout)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return section, rows(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run of every benchmark")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind through `finally`: stop the servers
    started = time.perf_counter()
    results: list[tuple[str, Row]] = []
    with tempfile.TemporaryDirectory() as tmp:
        print("preparing a data directory ...", file=sys.stderr)
        os.environ["KB_DATA_DIR"] = str(own_settings(Path(tmp)).data_dir)
        for name in (*IN_PROCESS, *SCRIPTS):
            print(f"\n== {name} ==", file=sys.stderr)
            began = time.perf_counter()
            try:
                section, rows = (in_process if name in IN_PROCESS else script)(name, args.quick)
            except Exception as exc:  # one benchmark failing leaves the others' rows
                traceback.print_exc()
                section, rows = name.removeprefix("bench_"), [Row(f"`bench/{name}.py`", f"failed: {exc}", "", False)]
            results += [(section, row) for row in rows]
            print(f"== {name}: {time.perf_counter() - began:.0f} s", file=sys.stderr)

    print()
    print(
        table(
            [(section, r.metric, r.measured, r.target, ok_mark(r.ok)) for section, r in results],
            ("section", "metric", "measured", "target", "ok?"),
        )
    )
    failed = sum(r.ok is False for _, r in results)
    print(
        f"\n{failed} of {sum(r.ok is not None for _, r in results)} targets missed; "
        f"{'quick run' if args.quick else 'full run'} in {time.perf_counter() - started:.0f} s on:"
    )
    print("\n".join(f"- {line}" for line in machine()))


if __name__ == "__main__":
    main()
