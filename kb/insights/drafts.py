"""Draft FAQ entries: for each gap, its question and the askers' words, in a layout the FAQ parser reads."""

from __future__ import annotations

from ..entries import ENTRY_STYLES
from .groups import EXAMPLES, Gap
from .report import day

__all__ = ["draft_entry", "draft_entries", "LAYOUTS"]

LAYOUTS = ENTRY_STYLES  # `headings`: the question is a `##` heading; `list`: a `1. **question**` item


def draft_entry(gap: Gap, layout: str = "headings") -> str:
    """A Markdown FAQ entry to paste into a source document: the question, the askers' words, no answer yet.

    `headings`: the question is a `##` heading; `list`: a `1. **question**` item. The
    notes are an HTML comment, so nothing but the question shows until the answer is written.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    zh = "zh" in gap.langs and gap.questions[0].lang == "zh"
    question = gap.label.rstrip("?？ ") + ("？" if zh else "?")
    when = day(gap.first_asked)
    if day(gap.last_asked) != when:
        when += f" to {day(gap.last_asked)}"
    times = "once" if gap.count == 1 else f"{gap.count} times"
    notes = [f"<!-- Asked {times} ({when}; {', '.join(gap.channels)}), in these words:"]
    notes += [f"     - {q.text.strip()}" + (f" (x{q.count})" if q.count > 1 else "") for q in gap.questions[:EXAMPLES]]
    if len(gap.questions) > EXAMPLES:
        notes.append(f"     and {len(gap.questions) - EXAMPLES} more wordings.")
    notes.append("     Write the answer below, then delete this comment. -->")
    if layout == "headings":
        return "\n".join([f"## {question}", "", *notes, "", ""])
    indented = ["   " + line for line in notes]
    return "\n".join([f"1. **{question}**", "", *indented, "", ""])


def draft_entries(gap: Gap) -> dict[str, str]:
    """The gap's draft entry in each layout, by layout."""
    return {layout: draft_entry(gap, layout) for layout in LAYOUTS}
