"""Planning figures: the headline test's power against runs per system (docs/method.md §4d.1)
and the expected best score against the tuning budget (§4d.2, thesis Algorithm 3.1)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.ticker import MaxNLocator

from infrepro.core.vocabulary import BUDGET_COLUMN, SYSTEM
from infrepro.plots.cache import cached_figure
from infrepro.plots.svg import (
    legend_below,
    legend_columns,
    lines_figure,
    lines_legend_svg,
    marked_line,
    to_svg,
)

TARGETS = (0.8, 0.9)


@cached_figure
def power_curve(curves: pd.DataFrame, *, title: str, key: str) -> str:
    """Simulated power (± 2 Monte Carlo SE) against runs per system (equal allocation), one line
    per effect (``effect_source, improvement_points, runs_baseline, power, mc_se``); dashed lines at
    the 80 % and 90 % targets."""
    sources = list(dict.fromkeys(curves["effect_source"]))
    entries: dict[str, object] = {}
    with lines_figure(len(sources), 2, left=0.55, right=0.2) as fig:
        ax = fig.add_subplot()
        for target in TARGETS:
            ax.axhline(target, color="#333333", linewidth=0.8, linestyle=(0, (4, 2)), zorder=1)
        for i, source in enumerate(sources):
            curve = curves[curves["effect_source"] == source].sort_values("runs_baseline")
            points = float(curve["improvement_points"].iloc[0])
            name = "smallest effect of interest" if source == "min_effect" else source
            label = f"{name}: improvement {points:+.2f} points"
            style = "-" if i == 0 else (0, (2, 1))
            line = marked_line(
                ax, curve["runs_baseline"], curve["power"], label, 2.2, linestyle=style
            )
            entries.setdefault(label, line)
            ax.fill_between(
                curve["runs_baseline"],
                (curve["power"] - 2 * curve["mc_se"]).clip(lower=0),
                (curve["power"] + 2 * curve["mc_se"]).clip(upper=1),
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
        ax.set_ylim(0, 1)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole runs
        ax.set_xlabel("runs per system")
        ax.set_ylabel("power of the pair's test")
        ax.set_title(title)
        legend_below(fig, list(entries.values()), list(entries), min(len(sources), 2))
        return to_svg(fig, key, title)


@cached_figure
def budget_curves(
    curves: pd.DataFrame,
    styles: Mapping[str, Mapping[str, object]],
    *,
    crossing: int | None,
    title: str,
    ylabel: str,
    key: str,
) -> str:
    """Expected best of B runs (exact) with the bootstrap percentile band, per system
    (``system, budget, expected_best, percentile_low, percentile_high``); a vertical line at the
    crossing budget."""
    columns = legend_columns(list(styles), 3.5, 4)
    entries: dict[str, object] = {}
    with lines_figure(len(styles), columns, left=0.6, right=0.2) as fig:
        ax = fig.add_subplot()
        for system, style in styles.items():
            curve = curves[curves[SYSTEM] == system].sort_values(BUDGET_COLUMN)
            if curve.empty:
                continue
            line = marked_line(
                ax, curve[BUDGET_COLUMN], curve["expected_best"], str(system), 2.2, **style
            )
            entries[str(system)] = line
            ax.fill_between(
                curve[BUDGET_COLUMN],
                curve["percentile_low"],
                curve["percentile_high"],
                color=line.get_color(),
                alpha=0.15,
                linewidth=0,
            )
        if crossing is not None:
            ax.axvline(crossing, color="#333333", linewidth=0.8, linestyle=(0, (4, 2)))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole runs
        ax.set_xlabel("budget B (runs trained)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        return lines_legend_svg(fig, entries, columns, key, title)
