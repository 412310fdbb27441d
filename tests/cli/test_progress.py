"""`kb ingest`'s progress where there is no terminal (`make serve`, a log): a line when a stage
starts and every few seconds after, with the count, the rate and the time left; on a clock the
test moves, on a real small ingest, and in one real `kb ingest` of the shipped FAQs with an empty
embedding cache."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ingest import build_index
from kb.settings import Settings
from kbcli.progress import ProgressLines
from tests.support.clock import Clock
from tests.support.paths import ROOT


def test_a_line_at_each_stage_then_every_few_seconds_with_rate_and_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    lines = ProgressLines("kb ingest", out, every=5.0, clock=clock)
    lines("embed", 0, 118)  # the stage starts: a line
    clock.now += 4.9
    lines("embed", 16, 118)  # 4.9 s since the last line: none yet
    clock.now += 0.1
    lines.tick()  # 5 s: due
    clock.now += 3
    lines("embed", 32, 118)
    clock.now += 7  # a slow batch: the ticker writes the line though no count came
    lines.tick()
    lines.tick()  # not due again at once
    lines("embed", 118, 118)
    clock.now += 5
    lines.tick()
    lines("background", 600, 600)  # all of it from the cache
    assert out.getvalue().splitlines() == [
        "kb ingest: entry texts embedded 0/118, starting",
        "kb ingest: entry texts embedded 16/118, 3.2 a second, about 32 s left",
        "kb ingest: entry texts embedded 32/118, 2.1 a second, about 40 s left",
        "kb ingest: entry texts embedded 118/118, done; still working",
        "kb ingest: background sentences embedded 600/600, done",
    ]


def test_a_first_batch_slower_than_the_interval_says_so() -> None:
    clock, out = Clock(), io.StringIO()
    lines = ProgressLines("kb ingest", out, every=5.0, clock=clock)
    lines("embed", 0, 118)
    clock.now += 6
    lines.tick()
    assert out.getvalue().splitlines()[-1] == "kb ingest: entry texts embedded 0/118, 6 s on the first batch"


@pytest.mark.slow
def test_a_real_small_ingest_reports_every_stage_in_order(settings: Settings, tmp_path: Path) -> None:
    """The build's own calls, on a clock that moves 3 s at each: every stage has its line, the
    counts only grow within it, and no two lines are more than 5 s of that clock apart."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "team-faq.md").write_text(
        "# Team FAQ\n\n"
        + "".join(
            f"## How do I reach service {i}?\n\nUse host svc-{i}.internal, port {8000 + i}.\n\n" for i in range(40)
        ),
        encoding="utf-8",
    )
    data = tmp_path / "data"
    shutil.copytree(settings.cache_dir, data / "cache")  # the background's vectors; the entries' are new
    clock, out = Clock(), io.StringIO()
    moments: list[float] = []

    class Moving(ProgressLines):
        def tick(self) -> None:
            clock.now += 3
            before = out.tell()
            super().tick()
            if out.tell() != before:
                moments.append(clock.now)

    build_index(Settings(data_dir=data, sources_dir=folder), progress=Moving("kb ingest", out, 5.0, clock))
    lines = out.getvalue().splitlines()
    stages = list(dict.fromkeys(re.sub(r" \d+/\d+.*", "", line) for line in lines))
    assert stages == [
        "kb ingest: entry texts embedded",
        "kb ingest: background sentences embedded",
        "kb ingest: learned questions embedded",
        "kb ingest: entry questions embedded",
        "kb ingest: background questions embedded",
    ]
    counts = [(int(m[1]), int(m[2])) for m in re.finditer(r"entry texts embedded (\d+)/(\d+)", out.getvalue())]
    assert counts == sorted(counts) and counts[0] == (0, counts[0][1]) and counts[-1][0] > 0 and counts[0][1] >= 40
    assert max(b - a for a, b in zip(moments, moments[1:])) <= 6


@pytest.mark.slow
def test_kb_ingest_into_a_pipe_with_an_empty_cache_writes_a_line_every_10_s(tmp_path: Path) -> None:
    """The first `make serve`: the shipped FAQs, no embedding cache, standard error a pipe. The first
    35 s of it (the model loaded, the first batches embedded), then it is stopped."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "ingest"],
        cwd=ROOT,
        env={**environment, "KB_DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            seen.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=35)
    process.kill()
    process.wait()
    reader.join()
    process.stderr.close()  # type: ignore[union-attr]
    print("\n".join(f"{at:5.1f} {line}" for at, line in seen))
    assert seen, "no line in 35 s"
    assert all(line.startswith("kb ingest: ") for _, line in seen), seen
    assert any(re.fullmatch(r"kb ingest: entry texts embedded \d+/150, .*", line) for _, line in seen), seen
    moments = [0.0] + [at for at, _ in seen] + [35.0]
    assert max(b - a for a, b in zip(moments[1:], moments[2:])) <= 10, seen
    assert seen[0][0] <= 15, seen  # the process started, the modules and the model loaded
