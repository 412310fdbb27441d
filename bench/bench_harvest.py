"""`kb harvest` on real tracker threads: which threads it chooses and which answer, and how fast on 1,000.

1. The choice, on `tests/data/harvest/threads.json` (150 real threads, labelled by hand): precision
   and recall of the threads chosen against those labelled "resolved by a maintainer's answer"
   (targets 0.9 and 0.7), and the share of the chosen ones whose answer is the labelled comment
   (target 0.8). Every miss is printed with why, so the figures can be read.
2. Scale: the fixture replicated with new numbers to 1,000 threads, written as one `gh` JSON file,
   and `kb harvest --from FILE --dry-run --json` run on it as a user runs it (a process of its own,
   with the embedder grouping the drafts and the search checking them when an index exists): wall
   time (target under a minute), CPU time and the process's peak memory. Each copy's title is marked
   with its copy number, so every draft's question is embedded (a repeat would be embedded once).

    .venv/bin/python bench/bench_harvest.py [--quick]
"""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import Row, kb_command, main  # noqa: E402

from kb.harvest import Rules, choose, read_threads  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "harvest" / "threads.json"
SCALE = 1000


def choice_figures(raw: list[dict], verbose: bool = True) -> dict[str, float]:
    """Precision and recall of the threads chosen, and the share of chosen ones with the labelled answer."""
    threads = read_threads(raw, str(FIXTURE))
    tp = fp = fn = right = 0
    for item, thread in zip(raw, threads):
        label = item["fixture"]
        chosen = choose(thread, Rules())
        if chosen is not None and label["harvest"]:
            tp += 1
            index = (
                next(i for i, c in enumerate(thread.comments) if c is chosen.answer)
                if chosen.answer in thread.comments
                else -1
            )
            if index == label["answer"]:
                right += 1
            elif verbose:
                print(
                    f"  wrong answer  {thread.url}: chose comment {index} ({chosen.signals['answer']}), labelled {label['answer']}"
                )
        elif chosen is not None:
            fp += 1
            if verbose:
                print(f"  false choice  {thread.url} ({label['category']}): {chosen.signals}")
        elif label["harvest"]:
            fn += 1
            if verbose:
                print(f"  missed        {thread.url}")
    return {
        "threads": len(threads),
        "labelled": tp + fn,
        "chosen": tp + fp,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "answer_right": right / tp if tp else 0.0,
    }


def replicated(raw: list[dict], n: int) -> list[dict]:
    """`n` threads: the fixture's, again and again, each copy with a number of its own and its title marked with
    it, so that every question is a text of its own to embed (as in a real tracker), not a repeat the harvest
    embeds once."""
    out = []
    for i in range(n):
        item = copy.deepcopy(raw[i % len(raw)])
        item["number"] = 100_000 + i
        item["title"] = f"{item['title']} (copy {i // len(raw)})"
        item["url"] = item["url"].rsplit("/", 1)[0] + f"/{100_000 + i}"
        out.append(item)
    return out


def scale_run(n: int) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB, drafts printed) of `kb harvest --from` on `n` threads, in a
    process of its own."""
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "threads.json"
        path.write_text(json.dumps(replicated(raw, n)), encoding="utf-8")
        started = time.perf_counter()
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [*kb_command("harvest", "--from", str(path), "--dry-run", "--json")],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            check=True,
        )
        took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    return took, cpu_s, after.ru_maxrss / 1024, len(done.stdout.splitlines())


def run(quick: bool = False) -> list[Row]:
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    figures = choice_figures(raw)
    rows = [
        Row(
            f"threads chosen: precision ({figures['chosen']:.0f} chosen of {figures['threads']:.0f})",
            f"{figures['precision']:.3f}",
            ">= 0.9",
            figures["precision"] >= 0.9,
        ),
        Row(
            f"threads chosen: recall ({figures['labelled']:.0f} labelled)",
            f"{figures['recall']:.3f}",
            ">= 0.7",
            figures["recall"] >= 0.7,
        ),
        Row(
            "chosen answer is the labelled one",
            f"{figures['answer_right']:.3f}",
            ">= 0.8",
            figures["answer_right"] >= 0.8,
        ),
    ]
    n = 200 if quick else SCALE
    took, cpu_s, peak, drafts = scale_run(n)
    rows.append(Row(f"kb harvest --from on {n} threads ({drafts} drafts): wall", f"{took:.1f} s", "< 60 s", took < 60))
    rows.append(Row("its CPU time (user + system)", f"{cpu_s:.1f} s", "", None))
    rows.append(Row("its peak memory (RSS)", f"{peak:.0f} MiB", "", None))
    return rows


if __name__ == "__main__":
    main(run, __doc__)
