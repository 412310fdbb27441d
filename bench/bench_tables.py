"""Q&A files against Markdown: the same 10,000 entries ingested from a CSV and from a Markdown page.

Generated distinct questions and answers (half Chinese, half English, each answer with a code
span and a link) are written three ways: a CSV (`question,answer,section`), the same as an XLSX
workbook, and a Markdown page of `## question` headings under `#` sections. Then:

- parsing (`ingest.sources.read_sources`: read, split into entries, tag), CSV and Markdown in
  alternating rounds, median time; peak Python memory of one parse of each (tracemalloc, in a
  run of its own: it slows what it watches); one parse of the workbook for comparison;
- the whole `kb ingest` (parse, embed, lexical data, write the index), each in a process of its
  own: of the first 1,000 entries (`--embedded`) with an empty embedding cache each time, two
  alternating rounds (every passage embedded: the embedder dominates, and a shared machine's
  load moves it more than the format does); then of all of them, once from the CSV to fill a cache (timed too),
  and with a copy of that cache for each format (nothing embedded: what the format costs beside
  the embedder) in alternating rounds; wall time and peak RSS of the process.

Target: a CSV takes at most 1.2x the time of the same entries as Markdown.

    .venv/bin/python bench/bench_tables.py [--quick] [--rows N]
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main  # noqa: E402

SECTION = "Q&A files"
TARGET = 1.2
COMPONENTS = ["Megatron", "vLLM", "DeepSpeed", "sglang", "Ray", "FSDP", "NCCL", "Triton", "LoRA", "CUDA"]
ZH = [
    "显存不足",
    "启动卡住",
    "版本不兼容",
    "速度很慢",
    "保存失败",
    "加载报错",
    "通信超时",
    "出现 NaN",
    "导入失败",
    "参数无效",
]
EN = ["runs out of memory", "hangs at start", "has a version clash", "is slow", "fails to save", "fails to load",
      "times out", "logs NaN", "cannot import", "ignores an option"]  # fmt: skip

BUILD = """
import json, resource, sys, time
from pathlib import Path
from kb.settings import Settings
from ingest.pipeline import build_index
started = time.perf_counter()
report = build_index(Settings(data_dir=Path(sys.argv[1]), sources_dir=Path(sys.argv[2])))
print(json.dumps({"seconds": time.perf_counter() - started, "embedded": report.embedded,
                  "entries": report.entries, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def entries(n: int) -> list[tuple[str, str, str]]:
    """`n` distinct (section, question, answer)."""
    found = []
    for i in range(n):
        component, k = COMPONENTS[i % len(COMPONENTS)], (i // len(COMPONENTS)) % len(ZH)
        option = f"--{component.lower()}-opt-{i}"
        if i % 2:
            # no inline code in a question: a Markdown heading's text drops the backticks, and the
            # two formats must give the same passages, so that one cache serves both
            question = f"What to do when {component} {EN[k]} with {option} (case {i})?"
            answer = f"Set `{option}=0` and retry; see [the notes](https://example.com/notes/{i}) for case {i}."
        else:
            question = f"{component} 在 {option} 下{ZH[k]}怎么办（第 {i} 例）？"
            answer = f"把 `{option}` 设为 0 后重试，第 {i} 例的说明见 [笔记](https://example.com/notes/{i})。"
        found.append((component, question, answer))
    return found


def write_sources(tmp: Path, n: int) -> dict[str, Path]:
    made = entries(n)
    folders = {name: tmp / name for name in ("csv", "markdown", "xlsx")}
    for folder in folders.values():
        folder.mkdir()
    with open(folders["csv"] / "faq.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "answer", "section"])
        writer.writerows([(q, a, s) for s, q, a in made])
    lines = ["# FAQ", ""]
    for section in COMPONENTS:
        lines += [f"# {section}", ""]
        for s, q, a in made:
            if s == section:
                lines += [f"## {q}", "", a, ""]
    (folders["markdown"] / "faq.md").write_text("\n".join(lines), encoding="utf-8")
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("FAQ")
    sheet.append(["question", "answer", "section"])
    for s, q, a in made:
        sheet.append([q, a, s])
    book.save(folders["xlsx"] / "faq.xlsx")
    return folders


def parse_seconds(folder: Path) -> float:
    from ingest.sources import read_sources

    started = time.perf_counter()
    read_sources(folder)
    return time.perf_counter() - started


def parse_peak_mib(folder: Path) -> float:
    from ingest.sources import read_sources

    tracemalloc.start()
    read_sources(folder)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def build(data: Path, folder: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(data), str(folder)], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"kb ingest of {folder} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ratio_row(what: str, csv_s: list[float], md_s: list[float]) -> Row:
    a, b = statistics.median(csv_s), statistics.median(md_s)
    return Row(
        f"{what}: CSV / Markdown (median of {len(csv_s)})",
        f"{a:.2f} s / {b:.2f} s = {a / b:.2f}x",
        f"≤ {TARGET}x",
        a / b <= TARGET,
    )


def run(quick: bool = False, rows: int = 0, embedded: int = 1000) -> list[Row]:
    n = rows or (1000 if quick else 10000)
    cold_n = min(n, embedded)
    rounds = 2 if quick else 3
    from ingest.sources import read_sources

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "all").mkdir()
        folders = write_sources(root / "all", n)
        assert len(read_sources(folders["csv"]).entries) == len(read_sources(folders["markdown"]).entries) == n
        parsed: dict[str, list[float]] = {"csv": [], "markdown": []}
        for _ in range(rounds):
            for name in parsed:
                parsed[name].append(parse_seconds(folders[name]))
        xlsx = parse_seconds(folders["xlsx"])
        peaks = {name: parse_peak_mib(folders[name]) for name in ("csv", "markdown", "xlsx")}
        print(f"parsed {n} entries: {parsed}, xlsx {xlsx:.2f} s; peak MiB {peaks}", file=sys.stderr)
        # Every passage embedded, each format with an empty cache of its own: the first `cold_n` entries.
        (root / "small").mkdir()
        small = write_sources(root / "small", cold_n)
        cold: dict[str, list[dict[str, float]]] = {"csv": [], "markdown": []}
        for round_ in range(2):  # alternating: the machine's load moves the embedder more than the format does
            for name in cold:
                cold[name].append(build(root / f"cold-{name}-{round_}", small[name]))
        print(f"cold ingest of {cold_n}: {cold}", file=sys.stderr)
        # All `n` embedded once (the CSV's ingest), that cache copied for the Markdown: both then embed nothing.
        seed = build(root / "warm-csv", folders["csv"])
        print(f"seed ingest of {n}: {seed}", file=sys.stderr)
        shutil.copytree(root / "warm-csv" / "cache", root / "warm-markdown" / "cache")
        warm: dict[str, list[dict[str, float]]] = {"csv": [], "markdown": []}
        for _ in range(rounds):
            for name in warm:
                warm[name].append(build(root / f"warm-{name}", folders[name]))
        print(f"warm ingest of {n}: {warm}", file=sys.stderr)
    embedded = {name: [r["embedded"] for r in runs] for name, runs in warm.items()}
    assert not any(sum(e) for e in embedded.values()), f"the cached ingests embedded {embedded}: different passages"
    rss = {name: max(r["rss_kib"] for r in warm[name]) / 1024 for name in warm}
    return [
        _ratio_row(f"parsing {n} entries", parsed["csv"], parsed["markdown"]),
        Row(f"parsing {n} entries from an XLSX workbook (openpyxl, read-only)", f"{xlsx:.2f} s", "–"),
        Row(
            f"parsing {n} entries, peak Python memory: CSV / Markdown / XLSX",
            f"{peaks['csv']:.0f} / {peaks['markdown']:.0f} / {peaks['xlsx']:.0f} MiB",
            "–",
        ),
        _ratio_row(f"whole ingest of {cold_n} entries, every passage embedded", [r["seconds"] for r in cold["csv"]], [r["seconds"] for r in cold["markdown"]]),
        Row(f"whole ingest of {n} entries from the CSV, every passage embedded", f"{seed['seconds']:.0f} s, peak RSS {seed['rss_kib'] / 1024:.0f} MiB", "–"),
        _ratio_row(f"whole ingest of {n} entries, embeddings from the cache", [r["seconds"] for r in warm["csv"]], [r["seconds"] for r in warm["markdown"]]),
        Row(f"whole ingest of {n} entries from the cache, peak RSS: CSV / Markdown", f"{rss['csv']:.0f} / {rss['markdown']:.0f} MiB", "–"),
    ]  # fmt: skip


if __name__ == "__main__":
    main(
        run,
        __doc__,
        rows=(int, 0, "entries to generate (default 10,000; 1,000 with --quick)"),
        embedded=(int, 1000, "entries of the ingests that embed every passage, each format with an empty cache"),
    )
