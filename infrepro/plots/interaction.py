"""Interaction plots (paper Figs. 1-2, thesis Fig. 2.7): one line per group over a data property.

Numeric properties: model predictions with 95% bands, binned observed means as points with 95%
error bars. Categorical properties: model cell means with 95% error bars, joined per group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from infrepro.plots.cache import cached_figure
from infrepro.plots.svg import legend_below, legend_columns, lines_figure, to_svg

LEGEND_COLUMNS = 4
WIDTH = 3.5  # inches, as lines_figure draws it


@dataclass(frozen=True)
class PlotText:
    """The words of an interaction plot: axis labels, title, SVG id prefix, legend title."""

    xlabel: str
    ylabel: str
    title: str
    key: str
    legend_title: str = ""


@cached_figure
def numeric_interaction(
    lines: pd.DataFrame,
    points: pd.DataFrame,
    styles: Mapping[str, Mapping[str, object]],
    text: PlotText,
) -> str:
    """Predicted lines (``group, x, estimate, lower, upper``) and binned means (same columns).

    Each group's band and line are its own artists (the legend shows the lines); the binned
    means of all groups are three artists (error bars, their caps, the points) instead of an
    ``errorbar`` container per group: a facet with twenty seeds drew 130 artists, now 43."""
    entries: dict[str, object] = {}
    lines_of = _by_group(lines)
    dots_of = _by_group(points)
    bars: list[pd.DataFrame] = []
    colours: list[object] = []
    with _figure(list(styles), text.legend_title) as fig:
        ax = fig.add_subplot()
        for group, style in styles.items():
            line = lines_of.get(group)
            colour = style["color"]
            if line is not None:
                ax.fill_between(
                    line["x"],
                    line["lower"],
                    line["upper"],
                    color=colour,
                    alpha=0.13,
                    linewidth=0,
                )
                drawn = ax.plot(line["x"], line["estimate"], label=str(group), **style)
                entries.setdefault(str(group), drawn[0])
            dots = dots_of.get(group)
            if dots is not None:
                bars.append(dots)
                colours.extend([colour] * len(dots))
        if bars:
            _error_bars(ax, pd.concat(bars, ignore_index=True), colours)
        _finish(fig, ax, text, list(styles), entries)
        return to_svg(fig, text.key, text.title)


def _by_group(frame: pd.DataFrame) -> dict[object, pd.DataFrame]:
    """The rows of each group, sorted by x (one pass instead of a filter per group)."""
    if frame.empty:
        return {}
    ordered_ = frame.sort_values("x", kind="stable")
    return {group: rows for group, rows in ordered_.groupby("group", sort=False, observed=True)}


def _error_bars(ax, dots: pd.DataFrame, colours: list[object]) -> None:
    """Binned means with 95% error bars, each in its group's colour: what ``errorbar`` draws
    (bars 0.8 pt, caps 2 pt each side, points 3.5 pt with a white edge) as one collection each."""
    x = dots["x"].to_numpy(dtype=float)
    low = dots["lower"].to_numpy(dtype=float)
    high = dots["upper"].to_numpy(dtype=float)
    ax.vlines(x, low, high, colors=colours, linewidth=0.8, zorder=2.9)
    caps = np.concatenate([low, high])
    ax.scatter(
        np.concatenate([x, x]),
        caps,
        s=4.0**2,
        marker="_",
        c=colours + colours,
        linewidths=0.8,
        zorder=2.9,
    )
    ax.scatter(
        x,
        dots["estimate"].to_numpy(dtype=float),
        s=3.5**2,
        marker="o",
        c=colours,
        edgecolors="white",
        linewidths=0.4,
        zorder=3,
    )


@cached_figure
def categorical_interaction(
    points: pd.DataFrame,
    levels: Sequence[str],
    styles: Mapping[str, Mapping[str, object]],
    text: PlotText,
) -> str:
    """Cell means (``group, bin, estimate, lower, upper``) per level of a categorical property."""
    position = {level: i for i, level in enumerate(levels)}
    dodge = np.linspace(-0.12, 0.12, len(styles)) if len(styles) > 1 else np.zeros(1)
    entries: dict[str, object] = {}
    with _figure(list(styles), text.legend_title) as fig:
        ax = fig.add_subplot()
        for shift, (group, style) in zip(dodge, styles.items(), strict=True):
            cells = points[points["group"] == group].copy()
            cells = cells[cells["bin"].isin(position)]
            cells["pos"] = cells["bin"].map(position) + shift
            cells = cells.sort_values("pos")
            if cells.empty:
                continue
            entries[str(group)] = ax.errorbar(
                cells["pos"],
                cells["estimate"],
                yerr=[cells["estimate"] - cells["lower"], cells["upper"] - cells["estimate"]],
                marker="o",
                markersize=3.5,
                capsize=2,
                elinewidth=0.8,
                label=str(group),
                **style,
            )
        ax.set_xticks(range(len(levels)), list(levels))
        ax.grid(axis="x", visible=False)
        _finish(fig, ax, text, list(styles), entries)
        return to_svg(fig, text.key, text.title)


def _figure(groups: Sequence[str], legend_title: str):
    columns = legend_columns(groups, WIDTH, LEGEND_COLUMNS)
    return lines_figure(len(groups), columns, left=0.6, titled=bool(legend_title))


def _finish(fig, ax, text: PlotText, groups: Sequence[str], entries: Mapping[str, object]) -> None:
    ax.set_xlabel(text.xlabel)
    ax.set_ylabel(text.ylabel)
    ax.set_title(text.title)
    legend_below(
        fig,
        list(entries.values()),
        list(entries),
        legend_columns(groups, WIDTH, LEGEND_COLUMNS),
        title=text.legend_title or None,
        title_fontsize=7,
        handlelength=2.6,
    )
