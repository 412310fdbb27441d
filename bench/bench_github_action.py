"""The GitHub Action's time to an answer on this machine: `kb ingest`, then `kb github answer --event FILE --dry-run`,
each a process of its own, as action.yml runs them (Python's start-up and imports included).

- cold: a fresh data directory and no embedding cache (the Action's first run, or a cache miss): the index
  built from the shipped FAQ files, every passage embedded, then the answer;
- cache warm: a fresh data directory with the embedding cache the cold run left (what `actions/cache` restores
  on every later run): the index built with nothing to embed, then the answer;
- warm: the index built already: `kb github answer` alone.

The event is an issue the FAQ answers, in `comment` mode; each run must print the comment it would post.
The issue's target: an answer within 2 minutes on a GitHub-hosted runner with the cache warm.

    .venv/bin/python bench/bench_github_action.py [--quick]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, kb_command, main  # noqa: E402

from kb.settings import SHIPPED_SOURCES  # noqa: E402

ISSUE = {
    "action": "opened",
    "repository": {"full_name": "owner/repo", "private": False},
    "issue": {
        "number": 1,
        "title": "How do I resume training in slime after it stopped?",
        "body": "Training stopped halfway. How can I go on from the last checkpoint?",
        "html_url": "https://github.com/owner/repo/issues/1",
        "user": {"login": "asker", "type": "User"},
        "author_association": "NONE",
        "locked": False,
        "state": "open",
        "labels": [],
    },
}
MARKER = "<!-- kb-faq-bot -->"


@dataclass(frozen=True)
class Spent:
    """Wall-clock and CPU seconds (on a shared machine the CPU time is the steadier figure)."""

    wall: float
    cpu: float

    def plus(self, other: Spent) -> Spent:
        return Spent(self.wall + other.wall, self.cpu + other.cpu)

    def __str__(self) -> str:
        return f"{self.wall:.1f} s wall, {self.cpu:.1f} s CPU"


def cpu() -> float:
    """CPU seconds (user and system) of the commands run so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(command: list[str], env: dict[str, str]) -> tuple[Spent, str]:
    """The time `command` took, and what it printed; raises when it fails."""
    started, used = time.perf_counter(), cpu()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    spent = Spent(time.perf_counter() - started, cpu() - used)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[2:])}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return spent, done.stdout


def env_for(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    return env | {
        "KB_DATA_DIR": str(data_dir),
        "KB_SOURCES_DIR": str(SHIPPED_SOURCES),
        "KB_GITHUB_MODE": "comment",
        "KB_CHANNEL_PRECISION": "github=0.25",  # sure enough to comment on this plain question
        "PYTHONPATH": str(ROOT),
    }


def action(data_dir: Path, event: Path, ingest: bool) -> tuple[Spent, Spent]:
    """(the ingest's time, the answer's) in `data_dir`; the answer must be a comment."""
    env = env_for(data_dir)
    built = timed(kb_command("ingest"), env)[0] if ingest else Spent(0.0, 0.0)
    answered, printed = timed(
        kb_command("github", "answer", "--event", str(event), "--event-name", "issues", "--dry-run"), env
    )
    if not printed.startswith(MARKER):
        raise RuntimeError(f"kb github answer printed no comment: {printed[:200]!r}")
    return built, answered


def run(quick: bool = False) -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        event = Path(tmp) / "event.json"
        event.write_text(json.dumps(ISSUE), encoding="utf-8")
        cold, cache_warm = Path(tmp) / "cold", Path(tmp) / "cache-warm"
        ingest, answer = action(cold, event, ingest=True)
        rows.append(Row("cold (no cache): kb ingest", str(ingest)))
        rows.append(Row("cold (no cache): kb ingest + kb github answer", str(ingest.plus(answer))))
        shutil.copytree(cold / "cache", cache_warm / "cache")
        ingest, answer = action(cache_warm, event, ingest=True)
        total = ingest.plus(answer)
        rows.append(Row("cache warm: kb ingest + kb github answer", str(total), "≤ 120 s", total.wall <= 120))
        answers = [action(cache_warm, event, ingest=False)[1] for _ in range(1 if quick else 3)]
        best = min(answers, key=lambda spent: spent.wall)
        rows.append(Row(f"warm (index built): kb github answer, best of {len(answers)}", str(best)))
    return rows


if __name__ == "__main__":
    main(run, __doc__)
