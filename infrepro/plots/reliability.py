"""Reliability figures: variance shares per system (paper Table 4 as bars) and the D-study curve
of phi against the number of runs averaged per facet (thesis Fig. 3.3), with Koo & Li's bands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from matplotlib.patches import Patch

from infrepro.core.vocabulary import SYSTEM
from infrepro.plots.cache import cached_figure
from infrepro.plots.names import label_width, short_names
from infrepro.plots.svg import (
    figure,
    legend_below,
    legend_columns,
    legend_rows,
    lines_figure,
    lines_legend_svg,
    marked_line,
    to_svg,
)

KOO_LI_BANDS = (
    (0.0, 0.5, "poor", "#fbe9e7"),
    (0.5, 0.75, "moderate", "#fff4e0"),
    (0.75, 0.9, "good", "#eaf5ea"),
    (0.9, 1.0, "excellent", "#dcefe0"),
)
PHI_TARGET = 0.8


@cached_figure
def variance_bars(
    shares: pd.DataFrame,
    systems: Sequence[str],
    components: Sequence[str],
    colours: Mapping[str, str],
    *,
    title: str,
    key: str,
) -> str:
    """One horizontal bar per system, stacked by component percent (``system, component,
    percent``); shares of 6% or more are printed inside their segment."""
    shown = [s for s in systems if s in set(shares[SYSTEM])]
    rows = legend_rows(len(components), 6)
    labels = short_names(shown)
    left = label_width(labels)
    height = 0.3 + 0.36 * len(shown) + 0.45 + 0.17 * rows
    with figure(4.8, height, left=left, bottom=0.45 + 0.17 * rows, top=0.28) as fig:
        ax = fig.add_subplot()
        for row, system in enumerate(shown):
            mine = shares[shares[SYSTEM] == system].set_index("component")["percent"]
            left = 0.0
            for component in components:
                if component not in mine:
                    continue
                width = float(mine[component])
                ax.barh(
                    row,
                    width,
                    left=left,
                    height=0.62,
                    color=colours[component],
                    edgecolor="white",
                    linewidth=0.6,
                )
                if width >= 6:
                    ax.text(
                        left + width / 2,
                        row,
                        f"{width:.0f}%",
                        ha="center",
                        va="center",
                        fontsize=6.5,
                        color="white" if component != "Residual" else "#333",
                    )
                left += width
        ax.set_yticks(range(len(shown)), labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of score variance (%)")
        ax.set_title(title)
        ax.grid(axis="y", visible=False)
        handles = [Patch(color=colours[c], label=c) for c in components]
        legend_below(fig, handles, list(components), 6, handlelength=1.2)
        return to_svg(fig, key, title)


@cached_figure
def dstudy_curve(
    curves: pd.DataFrame,
    styles: Mapping[str, Mapping[str, object]],
    *,
    title: str,
    key: str,
) -> str:
    """phi against n runs per facet level (``system, n_per_facet, phi``) with the 0.8 line."""
    low = min(0.4, float(curves["phi"].min()) - 0.05) if not curves.empty else 0.4
    columns = legend_columns(list(styles), 3.5, 4)
    with lines_figure(len(styles), columns, left=0.55, right=0.6) as fig:
        ax = fig.add_subplot()
        for bottom, top, label, colour in KOO_LI_BANDS:
            if top <= low:
                continue
            ax.axhspan(max(bottom, low), top, color=colour, zorder=0, linewidth=0)
            ax.text(
                1.0,
                (max(bottom, low) + top) / 2,
                f" {label}",
                transform=ax.get_yaxis_transform(),
                fontsize=6.5,
                va="center",
                ha="left",
                color="#777777",
            )
        ax.axhline(PHI_TARGET, color="#333333", linewidth=0.9, linestyle=(0, (4, 2)), zorder=1)
        entries: dict[str, object] = {}
        for system, style in styles.items():
            curve = curves[curves[SYSTEM] == system].sort_values("n_per_facet")
            if curve.empty:
                continue
            entries[str(system)] = marked_line(
                ax, curve["n_per_facet"], curve["phi"], str(system), 2.5, **style
            )
        ax.set_ylim(low, 1.0)
        ax.set_xlabel("runs averaged per facet level (n)")
        ax.set_ylabel("reliability φ")
        ax.set_title(title)
        ax.grid(False)
        return lines_legend_svg(fig, entries, columns, key, title)
