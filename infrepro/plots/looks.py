"""The look history of a sequential decision (docs/method.md §4e.10): per look, the improvement
with its repeated (or anytime-valid) interval, and the look's p against the level it had to
reach; a look that crossed is filled."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from infrepro.plots.cache import cached_figure
from infrepro.plots.forest import NOT_SHOWN, SIGNIFICANT
from infrepro.plots.svg import STYLE, figure, to_svg

BOUNDARY = "#b35900"


@dataclass(frozen=True)
class LookPoint:
    """One look as the figure draws it: its label (look and runs), the improvement and its
    interval (points; ±inf where the interval is unbounded), its p and the level it had to
    reach (NaN where the look was not tested), and whether it crossed."""

    label: str
    estimate: float
    lower: float
    upper: float
    p: float
    level: float
    crossed: bool


def _limits(points: Sequence[LookPoint]) -> tuple[float, float]:
    """The y range: the estimates, 0 and the last tested look's interval, with a margin; the
    early looks' wide intervals are clipped (an arrow marks where they go on)."""
    values = [0.0] + [p.estimate for p in points if math.isfinite(p.estimate)]
    last = [p for p in points if math.isfinite(p.lower) and math.isfinite(p.upper)]
    if last:
        values += [last[-1].lower, last[-1].upper]
    low, high = min(values), max(values)
    pad = 0.15 * (high - low or 1.0)
    return low - pad, high + pad


@cached_figure
def look_history(
    points: Sequence[LookPoint],
    *,
    ylabel: str,
    xlabel: str,
    title: str,
    key: str,
    description: str = "",
) -> str:
    """Two panels over the looks: the improvement with its interval (0 dashed), and the look's
    p on a log scale with the level it had to reach (the boundary's nominal level, a bar per
    look). The pair's ``title`` spans both panels: over one panel two 24-character names do
    not fit."""
    n = len(points)
    width = max(6.4, 2.4 + 1.0 * n)
    height = 2.7
    with figure(width, height, left=0.6, bottom=0.62, top=0.5, wspace=0.35) as fig:
        fig.suptitle(title, y=1 - 0.06 / height, va="top", fontsize=STYLE["axes.titlesize"])
        left, right = fig.subplots(1, 2)
        low, high = _limits(points)
        for x, p in enumerate(points):
            if not math.isfinite(p.estimate):
                continue
            colour = SIGNIFICANT if p.crossed else NOT_SHOWN
            lo, hi = max(p.lower, low), min(p.upper, high)
            left.plot([x, x], [lo, hi], color=colour, linewidth=1.4)
            for end, clipped, marker in ((lo, p.lower < low, "v"), (hi, p.upper > high, "^")):
                if clipped:
                    left.plot([x], [end], marker=marker, markersize=4, color=colour)
            face = colour if p.crossed else "white"
            left.plot([x], [p.estimate], "o", markersize=4.5, color=colour, markerfacecolor=face)
        left.axhline(0.0, color="#444444", linewidth=0.8, linestyle="--")
        left.set_ylim(low, high)
        left.set_ylabel(ylabel)
        left.set_title("improvement at each look")
        tested = [(x, p) for x, p in enumerate(points) if math.isfinite(p.p) and p.p > 0]
        levels = [(x, p.level) for x, p in tested if math.isfinite(p.level) and p.level > 0]
        for x, level in levels:
            right.plot([x - 0.3, x + 0.3], [level, level], color=BOUNDARY, linewidth=1.6)
        if levels:
            right.plot([], [], color=BOUNDARY, linewidth=1.6, label="level to reach")
        if tested:
            right.plot([x for x, _ in tested], [p.p for _, p in tested], color=NOT_SHOWN)
            for x, p in tested:
                colour = SIGNIFICANT if p.crossed else NOT_SHOWN
                face = colour if p.crossed else "white"
                right.plot([x], [p.p], "o", markersize=4.5, color=colour, markerfacecolor=face)
            right.plot([], [], "o", color=NOT_SHOWN, markerfacecolor="white", label="p")
            right.set_yscale("log")
            right.legend(loc="best")
        right.set_title("p against the level to reach")
        right.set_ylabel("p (log scale)")
        for ax in (left, right):
            ax.set_xticks(range(n), [p.label for p in points])
            ax.set_xlim(-0.5, n - 0.5)
            ax.set_xlabel(xlabel)
            ax.grid(axis="x", visible=False)
        return to_svg(fig, key, f"{title}. {description}" if description else title)
