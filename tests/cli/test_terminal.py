"""kbcli/terminal.py's tables: on a terminal every value whole, wrapped within its cell to the terminal's
width; elsewhere one line a row, whole values aligned."""

from __future__ import annotations

import io
import re

from rich.cells import cell_len
from rich.console import Console

from kbcli.terminal import print_rows

LONG = "our cluster nodes keep dropping off with a frozen gizmo on tuesdays"
CHINESE = "多机训练时节点频繁掉线并且训练进程卡住不动直到有人手动重启整个任务为止"


def render(width: int, terminal: bool) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None, highlight=False)
    print_rows(
        "2 active links", ("id", "question", "entry"), [(1, LONG, "not covered"), (12, CHINESE, "[bold]x")], console
    )
    return out.getvalue()


def test_on_a_terminal_a_long_value_wraps_within_the_width_and_nothing_is_cut() -> None:
    out = render(40, terminal=True)
    lines = out.splitlines()
    assert lines[1] == "2 active links" and max(len(line) for line in lines) <= 40
    assert len(lines) > 5  # the question wrapped over several lines
    assert "…" not in out and "[bold]x" in out  # a value's brackets are text, not markup
    assert set(LONG.split()) <= set(out.split())  # every word whole, on one line or the next
    assert "".join(c for c in out if "\u4e00" <= c <= "\u9fff") == CHINESE  # every character, in order


def test_piped_each_row_is_one_line_with_its_values_whole_and_numbers_aligned_right() -> None:
    lines = render(40, terminal=False).splitlines()
    assert lines[1:3] == ["2 active links", lines[2]] and lines[2].split() == ["id", "question", "entry"]
    assert len(lines) == 5 and LONG in lines[3] and CHINESE in lines[4]
    assert lines[3].startswith("   1  ") and lines[4].startswith("  12  ")
    # the third column starts at the same terminal column in both rows (a Chinese character takes two)
    assert cell_len(lines[3][: lines[3].index("not covered")]) == cell_len(lines[4][: lines[4].index("[bold]x")])


def test_piped_a_very_long_value_stays_whole_without_padding_the_other_rows_by_as_much() -> None:
    trace = "RuntimeError: CUDA error: an illegal memory access was encountered " * 6  # a pasted trace, 400 long
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False, color_system=None, highlight=False)
    print_rows(
        "gaps", ("asked", "topic", "channels"), [(3, trace.strip(), "web"), (1, "how do I resume", "slack")], console
    )
    lines = out.getvalue().splitlines()
    assert trace.strip() in lines[3] and lines[3].endswith("  web")  # whole, the row going on after it
    assert lines[4].startswith("      1  how do I resume") and lines[4].endswith("slack")
    assert max(len(run) for run in re.findall(r" +", lines[4])) <= 80 + 2  # not padded to the trace's 400
