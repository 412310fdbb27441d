"""An answer written on /insights: from the save to the first `/api/search` that finds it (target: within 10 s on 2 cores).

Starts a real server (uvicorn, one worker, in a subprocess) on a data directory of its own that
serves the index of `KB_DATA_DIR` (or one built into a temporary directory), with an admin token.
Each round writes one new answer, in English and Chinese, through the page's form
(`POST /insights/write`, with the bearer token), then asks `/api/search` for its question every
20 ms until its first hit is the new entry. Times over the rounds (min / median / max):

- the save: `POST /insights/write` until it returns (the file written, a new build written with the
  answer's two passages embedded, and swapped in);
- save to found: from sending the save to the first search whose first hit is the answer.

Then, for scale, a whole `kb ingest` of the shipped FAQs with a warm embedding cache, in this process.

    .venv/bin/python bench/bench_written.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import ready_settings, serving, serving_dir  # noqa: E402

TOKEN = "bench-written-token"
WORDS = ["quokka", "zephyr", "marmot", "ocelot", "tapir", "narwhal", "axolotl", "pangolin", "wombat", "ibex"]


def found(base: str, question: str, timeout: float = 60.0) -> int:
    """How many searches it took until the first hit for `question` was a written answer; polled every 20 ms."""
    started = time.perf_counter()
    tries = 0
    while time.perf_counter() - started < timeout:
        tries += 1
        hits = httpx.get(f"{base}/api/search", params={"q": question}, timeout=30).json()["hits"]
        if hits and hits[0]["id"].startswith("written-") and hits[0]["question"] == question:
            return tries
        time.sleep(0.02)
    raise RuntimeError(f"no search found {question!r} within {timeout} s")


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = ready_settings(Path(tmp))
        data = serving_dir(Path(tmp), "written", settings)
        saves, founds = [], []
        with serving(settings.with_(data_dir=data), KB_ADMIN_TOKEN=TOKEN) as (base, _):
            headers = {"Authorization": f"Bearer {TOKEN}"}
            for i in range(args.rounds):
                word = WORDS[i % len(WORDS)] + str(i)
                question = f"How do I tune the {word} scheduler for rollouts?"
                form = {
                    "question_en": question,
                    "answer_en": f"Set `scheduler.{word}=true` in the trainer config and restart the rollout workers.",
                    "question_zh": f"如何调整 {word} 调度器？",
                    "answer_zh": f"在训练配置里设置 `scheduler.{word}=true`，然后重启 rollout worker。",
                    "tags": "scheduler",
                }
                started = time.perf_counter()
                saved = httpx.post(f"{base}/insights/write", data=form, headers=headers, timeout=120)
                saves.append(time.perf_counter() - started)
                assert saved.status_code == 303, (saved.status_code, saved.text[:500])
                tries = found(base, question)
                founds.append(time.perf_counter() - started)
                print(
                    f"round {i + 1}: saved in {saves[-1]:.2f} s, found {founds[-1]:.2f} s after the save was sent "
                    f"(search {tries})"
                )
        print(f"the save (min / median / max):           {spread(saves)}")
        print(f"save to first search finding it:         {spread(founds)}")

        from ingest import build_index

        whole = settings.with_(data_dir=Path(tmp) / "ingest")
        if settings.cache_dir.is_dir():
            import shutil

            shutil.copytree(settings.cache_dir, whole.cache_dir)
        build_index(whole)  # the first fills what the cache lacks (the background, the questions)
        started = time.perf_counter()
        report = build_index(whole)
        print(
            f"for scale, kb ingest of {report.entries} entries, warm cache: {time.perf_counter() - started:.2f} s "
            f"({report.embedded} passages embedded)"
        )


if __name__ == "__main__":
    main()
