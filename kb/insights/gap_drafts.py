"""Draft FAQ entries: for each gap, its question and the askers' words, in a layout the FAQ parser reads.

A question asked from a GitHub issue is its title, a blank line and its body's question (`kb.issue_question`):
the draft's heading is the title, and the notes give each wording on one line, cut to `WORDING_CHARS`.
"""

from __future__ import annotations

from ..entries import ENTRY_STYLES
from .groups import EXAMPLES, Gap
from .report import day

__all__ = ["draft_entry", "draft_entries", "LAYOUTS"]

LAYOUTS = ENTRY_STYLES  # `headings`: the question is a `##` heading; `list`: a `1. **question**` item
WORDING_CHARS = 300  # of each wording in a draft's notes


def draft_entry(gap: Gap, layout: str = "headings") -> str:
    """A Markdown FAQ entry to paste into a source document: the question, the askers' words, no answer yet.

    `headings`: the question is a `##` heading; `list`: a `1. **question**` item. The
    notes are an HTML comment, so nothing but the question shows until the answer is written.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    zh = "zh" in gap.langs and gap.questions[0].lang == "zh"
    first_line = gap.label.strip().split("\n", 1)[0]  # an issue's title
    question = " ".join(first_line.split())[:WORDING_CHARS].rstrip("?？ ") + ("？" if zh else "?")
    when = day(gap.first_asked)
    if day(gap.last_asked) != when:
        when += f" to {day(gap.last_asked)}"
    times = "once" if gap.count == 1 else f"{gap.count} times"
    notes = [f"<!-- Asked {times} ({when}; {', '.join(gap.channels)}), in these words:"]
    notes += [
        f"     - {_one_line(q.text)}" + (f" (x{q.count})" if q.count > 1 else "") for q in gap.questions[:EXAMPLES]
    ]
    if len(gap.questions) > EXAMPLES:
        notes.append(f"     and {len(gap.questions) - EXAMPLES} more wordings.")
    notes.append("     Write the answer below, then delete this comment. -->")
    if layout == "headings":
        return "\n".join([f"## {question}", "", *notes, "", ""])
    indented = ["   " + line for line in notes]
    return "\n".join([f"1. **{question}**", "", *indented, "", ""])


def _one_line(wording: str) -> str:
    """A wording on one line of the notes, cut to WORDING_CHARS, unable to close their HTML comment."""
    line = " ".join(wording[: WORDING_CHARS * 4].split())
    line = line if len(line) <= WORDING_CHARS else line[: WORDING_CHARS - 1] + "…"
    return line.replace("-->", "-- >")


def draft_entries(gap: Gap) -> dict[str, str]:
    """The gap's draft entry in each layout, by layout."""
    return {layout: draft_entry(gap, layout) for layout in LAYOUTS}
