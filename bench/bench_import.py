"""The web app's cold start, side by side with another revision: `import server.app`, and `kb serve` to /healthz.

Each revision is a checkout: this one, and `--against REV` (default: the commit before the
channels were moved into `server/channels/`), made as a temporary git worktree. In alternating
rounds (both trees byte-compiled first, as an installed package is), a fresh Python process of each times `import server.app` inside itself, with no
channel configured; and `kb serve` of each on the same built index is launched until
`/healthz` first answers 200. Medians over the rounds (targets: import ≤ 1.0 s, start-up to a
healthy /healthz ≤ 1.5 s, both on a quiet 2-core machine; the load average is printed).

    .venv/bin/python bench/bench_import.py [--rounds 7] [--against REV] [--quick]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, free_port, kb_env, main, own_settings, stop, wait_healthy  # noqa: E402

BEFORE = "334d68d"  # the last commit before the channel registry
IMPORT = "import time; t = time.perf_counter(); import server.app; print(time.perf_counter() - t)"


def import_seconds(tree: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    for name in [k for k in env if k.startswith("KB_")]:
        env.pop(name)  # no channel configured
    out = subprocess.run([sys.executable, "-c", IMPORT], cwd=tree, env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def serve_seconds(tree: Path, env: dict[str, str]) -> float:
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port), "--workers", "1"],
        cwd=tree,
        env={**env, "PYTHONPATH": str(tree)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        return time.perf_counter() - started
    finally:
        stop(process)


def run(quick: bool = False, rounds: int = 7, against: str = BEFORE) -> list[Row]:
    rounds = 2 if quick else rounds
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "against"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(other), against], cwd=ROOT, check=True, capture_output=True
        )
        try:
            settings = own_settings(Path(tmp))
            env = kb_env(settings)
            trees = {"this checkout": ROOT, f"at {against}": other}
            for (
                tree
            ) in trees.values():  # byte-compiled first, as an installed package is (and whatever the environment says)
                compiled = [sys.executable, "-m", "compileall", "-q", "kb", "server", "kbcli", "ingest"]
                subprocess.run(compiled, cwd=tree, check=True, capture_output=True)
            imports: dict[str, list[float]] = {name: [] for name in trees}
            starts: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(rounds):  # alternating, so that the machine's load falls on both alike
                for name, tree in trees.items():
                    imports[name].append(import_seconds(tree))
                    starts[name].append(serve_seconds(tree, env))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    rows = []
    for name in trees:
        imported, started = statistics.median(imports[name]), statistics.median(starts[name])
        mine = name == "this checkout"
        rows.append(
            Row(
                f"import server.app, {name} (median of {rounds})",
                f"{imported:.2f} s",
                "≤ 1.0 s" if mine else "",
                imported <= 1.0 if mine else None,
            )
        )
        rows.append(
            Row(
                f"kb serve to /healthz, {name} (median of {rounds})",
                f"{started:.2f} s",
                "≤ 1.5 s" if mine else "",
                started <= 1.5 if mine else None,
            )
        )
    return rows


if __name__ == "__main__":
    main(
        run,
        __doc__,
        rounds=(int, 7, "rounds of each measurement"),
        against=(str, BEFORE, "the revision to compare with"),
    )
