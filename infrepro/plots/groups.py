"""Groups diagram of the decision table, in the manner of a critical-difference diagram: systems
at their model means on the score axis (better to the right), a bar over each group of systems
that no significant pairwise difference separates, labels on both sides joined by elbow lines
(docs/method.md §4c.9)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.ticker import MaxNLocator

from infrepro.plots.cache import cached_figure
from infrepro.plots.names import label_width, short_names
from infrepro.plots.svg import figure, to_svg

AXIS = 3.2  # inches of the score axis
ELBOW = 0.18  # inches from the axis' end to a label's line end
ROW = 0.16  # inches between label rows
LEVEL = 0.12  # inches between group-bar levels
LETTER = 0.14  # inches kept free left of a bar for its letter
TOP = 0.62  # title, axis label and tick labels above the axis line
BAR = "#1f5fa8"
OUTPUT_BAR = "#b8641c"  # output groups of single-run systems (dashed)
_LETTER = re.compile(r"\.*[A-Za-z]")
LEADER = "#9aa0a8"


@dataclass(frozen=True)
class Placement:
    """Where a system's label goes: ``side`` ``"left"`` or ``"right"`` of the axis, ``row`` 0
    nearest the axis."""

    side: str
    row: int


def label_rows(positions: Sequence[float]) -> list[Placement]:
    """The CD-diagram label layout, for screen positions (larger = further right).

    The left half of the systems (ties by input order) is labelled on the left, the rest on the
    right, one row each; rows deepen towards the middle (left: in increasing position; right:
    in decreasing position), so that no elbow line crosses another.
    """
    order = sorted(range(len(positions)), key=lambda i: (positions[i], i))
    half = len(order) // 2
    out: dict[int, Placement] = {}
    for row, i in enumerate(order[:half]):
        out[i] = Placement("left", row)
    for row, i in enumerate(reversed(order[half:])):
        out[i] = Placement("right", row)
    return [out[i] for i in range(len(positions))]


def bar_levels(spans: Sequence[tuple[float, float]], gap: float) -> list[int]:
    """A level (0 = nearest the axis) for each bar ``(start, end)`` (screen units, start <=
    end): the lowest level whose bars all end more than ``gap`` before this one starts (greedy
    interval colouring in order of start, then end, then input order)."""
    ends: list[float] = []
    out = [0] * len(spans)
    for i in sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1], i)):
        start, end = spans[i]
        level = next((k for k, last in enumerate(ends) if last + gap < start), len(ends))
        if level == len(ends):
            ends.append(end)
        else:
            ends[level] = end
        out[i] = level
    return out


def letter_members(groups: Sequence[str]) -> dict[str, list[int]]:
    """Letter -> indices of the systems carrying it, from each system's letters as the table
    shows them (``"ab"``; past 52 letters multcomp's ``".a"``, ``"..a"``)."""
    out: dict[str, list[int]] = {}
    for i, letters in enumerate(groups):
        for name in _LETTER.findall(str(letters)):
            out.setdefault(name, []).append(i)
    return out


def axis_limits(means: Sequence[float], lower_is_better: bool) -> tuple[float, float]:
    """The score axis' (left, right) ends: the means' range padded by 6 % (±1 when all are
    equal), reversed when lower is better so that better is always to the right."""
    low, high = min(means), max(means)
    pad = 0.06 * (high - low) if high > low else 1.0
    return (high + pad, low - pad) if lower_is_better else (low - pad, high + pad)


def _groups(letters: dict[str, list[int]], screen: Sequence[float]) -> list[tuple[str, list[int]]]:
    """The groups with two or more members, by the leftmost member's position, then letter."""
    shown = [(name, members) for name, members in letters.items() if len(members) > 1]
    return sorted(shown, key=lambda g: (min(screen[i] for i in g[1]), g[0]))


@cached_figure
def groups_diagram(
    systems: Sequence[str],
    means: Sequence[float],
    letters: dict[str, list[int]],
    *,
    outputs: dict[str, list[int]] | None = None,
    lower_is_better: bool,
    xlabel: str,
    title: str,
    key: str,
) -> str:
    """Points at ``means`` on one axis (reversed when lower is better); a solid bar per letter of
    ``letters`` (letter -> indices of the systems carrying it) with two or more members, a
    dashed one per letter of ``outputs`` (the output groups of single-run systems)."""
    sign = -1.0 if lower_is_better else 1.0
    screen = [sign * float(m) for m in means]
    labels = short_names(systems)
    words = 0.06 * max(len(xlabel), len(title)) + 0.3  # centred over the axis, inside
    side = max(label_width(labels) + ELBOW, (words - AXIS) / 2)
    placements = label_rows(screen)
    limits = axis_limits(means, lower_is_better)
    span = abs(limits[1] - limits[0])
    dashed = set(outputs or {})
    groups = _groups({**letters, **(outputs or {})}, screen)
    ranges = [(min(screen[i] for i in g), max(screen[i] for i in g)) for _, g in groups]
    levels = bar_levels(ranges, LETTER * span / AXIS)
    bars_depth = 0.14 + LEVEL * (max(levels) + 1 if levels else 0)
    rows = max(p.row for p in placements) + 1
    depth = bars_depth + 0.1 + ROW * rows
    width, height = 2 * side + AXIS, TOP + depth + 0.08
    with figure(width, height, left=side, right=side, top=TOP, bottom=0.08) as fig:
        ax = fig.add_subplot()
        ax.set_xlim(*limits)
        ax.set_ylim(depth, 0.0)

        def at(fraction: float) -> float:  # an axes fraction as a data x
            return limits[0] + fraction * (limits[1] - limits[0])

        for i, place in enumerate(placements):
            y = bars_depth + 0.1 + ROW * (place.row + 0.5)
            end, text = (-ELBOW, -ELBOW - 0.04) if place.side == "left" else (ELBOW, ELBOW + 0.04)
            base = 0.0 if place.side == "left" else 1.0
            edge, anchor = at(base + end / AXIS), at(base + text / AXIS)
            ax.plot(
                [means[i], means[i], edge],
                [0.0, y, y],
                color=LEADER,
                linewidth=0.7,
                clip_on=False,
                zorder=1,
            )
            ha = "right" if place.side == "left" else "left"
            ax.text(anchor, y, labels[i], ha=ha, va="center", fontsize=7, clip_on=False)
        ax.plot(
            means,
            [0.0] * len(means),
            "o",
            color="#333333",
            markersize=3.5,
            zorder=3,
            clip_on=False,
        )
        for (name, members), level in zip(groups, levels, strict=True):
            xs = sorted((means[i] for i in members), key=lambda v: sign * v)
            _bar(ax, xs, 0.14 + LEVEL * level, name, name in dashed, sign * 0.03 * span / AXIS)
        _axis_on_top(ax, xlabel, title)
        return to_svg(fig, key, title)


def _bar(ax, xs: list[float], y: float, name: str, dashed: bool, gap: float) -> None:
    """One group's bar from its first to its last member (``xs``, in screen order), a tick at
    each member, its letter ``gap`` left of it: solid for systems, dashed for outputs."""
    colour, style = (OUTPUT_BAR, (0, (3, 2))) if dashed else (BAR, "solid")
    ax.plot(
        [xs[0], xs[-1]],
        [y, y],
        color=colour,
        linewidth=2.2,
        linestyle=style,
        zorder=2,
        solid_capstyle="butt",
        dash_capstyle="butt",
    )
    for x in xs:
        ax.plot([x, x], [y - 0.035, y + 0.035], color=colour, linewidth=1.0, zorder=2)
    ax.text(xs[0] - gap, y, name, ha="right", va="center", fontsize=6.5, color=colour)


def _axis_on_top(ax, xlabel: str, title: str) -> None:
    """The score axis as the top spine, its ticks and label above it; no grid, no y axis."""
    for name in ("left", "right", "bottom"):
        ax.spines[name].set_visible(False)
    ax.spines["top"].set_visible(True)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel(xlabel, labelpad=3)
    ax.set_title(title, pad=4)
