"""Interaction plots (paper Figs. 1-2, thesis Fig. 2.7): one line per group over a data property.

Numeric properties: model predictions with 95% bands, binned observed means as points with 95%
error bars. Categorical properties: model cell means with 95% error bars, joined per group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .cache import cached_figure
from .svg import figure, legend_below, legend_columns, legend_rows, to_svg

LEGEND_COLUMNS = 4
WIDTH = 3.5  # inches


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
    """Predicted lines (``group, x, estimate, lower, upper``) and binned means (same columns)."""
    entries: dict[str, object] = {}
    with _figure(list(styles), text.legend_title) as fig:
        ax = fig.add_subplot()
        for group, style in styles.items():
            line = lines[lines["group"] == group].sort_values("x")
            colour = style["color"]
            if not line.empty:
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
            dots = points[points["group"] == group].sort_values("x")
            if not dots.empty:
                ax.errorbar(
                    dots["x"],
                    dots["estimate"],
                    yerr=[dots["estimate"] - dots["lower"], dots["upper"] - dots["estimate"]],
                    fmt="o",
                    color=colour,
                    markersize=3.5,
                    elinewidth=0.8,
                    capsize=2,
                    markeredgecolor="white",
                    markeredgewidth=0.4,
                    zorder=3,
                )
        _finish(fig, ax, text, list(styles), entries)
        return to_svg(fig, text.key, text.title)


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
    rows = legend_rows(len(groups), columns) + (1 if legend_title else 0)
    return figure(WIDTH, 2.45 + 0.17 * rows, left=0.6, bottom=0.5 + 0.17 * rows)


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
