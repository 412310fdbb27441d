"""Stacked bar charts as inline SVG, drawn on the server: no script, no CDN, colours from CSS classes.

The page's Content-Security-Policy forbids inline styles, so every shape is placed by
attributes and coloured by a class (`series-web`, `series-zh`, ...) that insights.css styles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from markupsafe import Markup, escape

__all__ = ["Series", "stacked_bars", "nice_ceiling"]

WIDTH, HEIGHT = 720, 220
# Room around the plot for the axis labels at the size a phone shows them (insights.css draws
# them at 22 units there, as the chart is shown at half size): four-digit counts on the left,
# half of the last day's label on the right (it is centred under the last bar), a line above
# the top count and below the days.
LEFT, RIGHT, TOP, BOTTOM = 64, 36, 24, 32
MAX_LABELS = 8


@dataclass(frozen=True)
class Series:
    key: str  # used in the CSS class `series-{key}`
    label: str
    counts: tuple[int, ...]  # one per day


def nice_ceiling(value: int) -> int:
    """The axis top: 1, 2, 4, 6 or 8 times a power of ten, at least `value` (at least 1); its half is a whole number."""
    if value <= 1:
        return 1
    power = 1
    while power * 10 <= value:
        power *= 10
    for step in (1, 2, 4, 6, 8, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def stacked_bars(title: str, days: Sequence[str], series: Sequence[Series]) -> Markup:
    """One bar per day, its segments stacked in the order of `series`; each segment has a tooltip."""
    totals = [sum(s.counts[i] for s in series) for i in range(len(days))]
    top = nice_ceiling(max(totals, default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(days), 1)
    bar = max(slot * 0.72, 1.0)
    summary = ", ".join(f"{s.label} {sum(s.counts)}" for s in series) or "no questions"
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" preserveAspectRatio="xMidYMid meet">',
        f"<title>{escape(title)}</title>",
        f"<desc>{escape(f'{days[0]} to {days[-1]}: ' if days else '')}{escape(summary)}</desc>",
    ]
    for tick in (0, top // 2 if top >= 2 else None, top):
        if tick is None:
            continue
        y = TOP + plot_h - plot_h * tick / top
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    for i, day in enumerate(days):
        x = LEFT + i * slot + (slot - bar) / 2
        base = float(TOP + plot_h)
        for s in series:
            n = s.counts[i]
            if not n:
                continue
            h = plot_h * n / top
            base -= h
            parts.append(
                f'<rect class="series-{escape(s.key)}" x="{x:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{h:.1f}">'
                f"<title>{escape(day)} · {escape(s.label)}: {n}</title></rect>"
            )
    every = max(1, math.ceil(len(days) / MAX_LABELS))
    for i in range(len(days) - 1, -1, -every):  # evenly spaced, counting back from the last day
        x = LEFT + i * slot + slot / 2
        label = escape(days[i][5:])  # MM-DD
        parts.append(f'<text class="axis" x="{x:.1f}" y="{HEIGHT - 8}" text-anchor="middle">{label}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
