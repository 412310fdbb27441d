"""What a hostile upstream can make `kb sync` do, measured: a huge FAQ file and one of very many entries.

    python bench/sync_hostile.py [--mb 200] [--entries 100000]

Each case commits the file to a local Git repository (a real one, `git` as the sync runs it), then runs
`kb sync` as a user does, in a process of its own with a fresh data directory, and reports its exit status,
its one line of error, the wall time and the process's peak memory (its maximum resident set size):
- a file of `--mb` megabytes (one entry whose answer is that long), refused by KB_SYNC_MAX_FILE_BYTES;
- a file of `--entries` short entries (under the size limit), refused by KB_SYNC_MAX_ENTRIES (counted
  before it is parsed: more than twice the limit's headings).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.git_repos import Upstream, manifest  # noqa: E402


def run(upstream: Upstream, work: Path, name: str) -> None:
    sources = work / name
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    env |= {"KB_DATA_DIR": str(work / f"{name}-data"), "KB_SOURCES_DIR": str(sources)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, sys.executable, "-m", "kbcli.cli", "sync"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - started
    *lines, peak = done.stderr.strip().splitlines()
    print(f"{name}: exit {done.returncode} in {seconds:.1f} s, peak memory {int(peak) / 1024:.0f} MiB")
    print(f"  {lines[-1][:300] if lines else ''}")


# `kb sync` run by a process of its own that then prints the largest resident set of it and its `git` children
# (the bench's own `git add` of the huge file is not counted).
_MEASURED = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(done.returncode)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="the huge file's size in megabytes")
    parser.add_argument("--entries", type=int, default=100_000, help="the many-entry file's entries")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        many = Upstream(work / "many")
        many.commit("Many entries", {"docs/faq.md": "".join(f"## Q{n}?\n\nA{n}.\n\n" for n in range(args.entries))})
        run(many, work, "many-entries")
        huge = Upstream(work / "huge")
        answer = ("All work and no play. " * 50 + "\n") * (args.mb * 1_000_000 // 1101)
        huge.commit("A huge FAQ", {"docs/faq.md": f"# Team FAQ\n\n## Why?\n\n{answer}"})
        run(huge, work, "huge-file")


if __name__ == "__main__":
    main()
