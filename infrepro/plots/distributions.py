"""Run-level mean scores per system: a box per system, every run as a point, the best run starred
(thesis Fig. 2.4 and seed 002's score distributions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from infrepro.core.vocabulary import SYSTEM
from infrepro.plots.cache import cached_figure
from infrepro.plots.names import label_width, short_names, text_width
from infrepro.plots.palette import level_styles, system_style
from infrepro.plots.svg import figure, legend_below, legend_columns, legend_rows, to_svg

JITTER = 0.17
MOST_UPRIGHT = 8  # more systems than this: one horizontal row per system
UPRIGHT_AXIS = 3.4 - 0.6 - 0.15  # inches of the upright figure's x axis (width less margins)
UPRIGHT_SLOT_SHARE = 0.9  # of a system's slot its tick label may take (a gap between labels)
LEGEND_COLUMNS = 3


BOX_STYLE = {
    "boxprops": {"facecolor": "#f4f4f4", "edgecolor": "#9a9a9a", "linewidth": 0.8},
    "medianprops": {"color": "#555555", "linewidth": 1.0},
    "whiskerprops": {"color": "#9a9a9a", "linewidth": 0.8},
    "capprops": {"color": "#9a9a9a", "linewidth": 0.8},
}


@cached_figure
def run_distribution(
    runs: pd.DataFrame,
    systems: Sequence[str],
    *,
    ylabel: str,
    title: str,
    key: str,
    colour_by: Mapping[str, tuple[str, Sequence[str]]] | None = None,
) -> str:
    """Box and strip plot of ``runs`` (columns ``system``, ``value``, ``is_best`` and any facet).

    ``colour_by`` maps a system to (facet, ordered levels): its points are coloured by that
    facet's level; other systems' points take the system's colour.
    """
    colour_by = colour_by or {}
    rng = np.random.default_rng(20230501)
    handles: list[Line2D] = []
    names = list(
        dict.fromkeys(
            f"{facet} = {level}" for facet, levels in colour_by.values() for level in levels
        )
    )
    entries = 1 + len(names)
    labels = short_names(systems)
    widest = max((text_width(label) for label in labels), default=0.0)
    # upright only while every tick label fits its system's slot (else they would overlap)
    flat = len(systems) > MOST_UPRIGHT or widest > UPRIGHT_SLOT_SHARE * UPRIGHT_AXIS / len(systems)
    columns = legend_columns([*names, "best run"], 4.8 if flat else 3.4, LEGEND_COLUMNS)
    rows = legend_rows(entries, columns)
    size = (
        figure(
            4.8,
            0.75 + 0.22 * len(systems) + 0.17 * rows,
            left=max(label_width(labels), 0.3 + widest),
            bottom=0.45 + 0.17 * rows,
            top=0.28,
        )
        if flat
        else figure(3.4, 2.45 + 0.17 * rows, left=0.6, bottom=0.3 + 0.17 * rows)
    )
    with size as fig:
        ax = fig.add_subplot()
        for index, system in enumerate(systems):
            rows = runs[runs[SYSTEM] == system]
            if not rows.empty:
                handles += _strip(ax, index, rows, rng, colour_by.get(system), flat)
        handles.append(
            Line2D(
                [],
                [],
                marker="*",
                linestyle="",
                color="#777777",
                markeredgecolor="black",
                markersize=8,
                label="best run",
            )
        )
        if flat:  # many systems: one row each, top to bottom, labels readable
            ax.set_yticks(range(len(systems)), labels)
            ax.set_ylim(len(systems) - 0.4, -0.6)
            ax.set_xlabel(ylabel)
            ax.grid(axis="y", visible=False)
        else:
            ax.set_xticks(range(len(systems)), labels)
            ax.set_xlim(-0.6, len(systems) - 0.4)
            ax.set_ylabel(ylabel)
            ax.grid(axis="x", visible=False)
        ax.set_title(title)
        legend_below(
            fig,
            handles,
            [str(h.get_label()) for h in handles],
            columns,
            handletextpad=0.2,
            columnspacing=0.9,
        )
        return to_svg(fig, key, title)


def _strip(
    ax,
    index: int,
    rows: pd.DataFrame,
    rng: np.random.Generator,
    colour_by: tuple[str, Sequence[str]] | None,
    flat: bool = False,
) -> list[Line2D]:
    """One system's box, its runs as jittered points and its best run starred, at x = index
    (y = index when ``flat``); returns the legend handles of the facet levels its points are
    coloured by."""
    values = rows["value"].to_numpy(dtype=float)
    ax.boxplot(
        values,
        positions=[index],
        widths=0.55,
        showfliers=False,
        patch_artist=True,
        **({"orientation": "horizontal"} if flat else {}),
        **BOX_STYLE,
    )
    offsets = rng.uniform(-JITTER, JITTER, size=len(rows))
    colours = [str(system_style(index)["color"])] * len(rows)
    handles: list[Line2D] = []
    if colour_by is not None:
        facet, levels = colour_by
        styles = level_styles([str(level) for level in levels])
        colours = [str(styles[str(v)]["color"]) for v in rows[facet].astype(str)]
        handles = [
            Line2D(
                [],
                [],
                marker="o",
                linestyle="",
                color=str(s["color"]),
                label=f"{facet} = {level}",
                markersize=4,
            )
            for level, s in styles.items()
        ]
    best = rows["is_best"].to_numpy(dtype=bool)

    def at(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        position = index + offsets[mask]
        return (values[mask], position) if flat else (position, values[mask])

    ax.scatter(
        *at(~best),
        s=16,
        c=[colours[i] for i in np.flatnonzero(~best)],
        alpha=0.85,
        linewidths=0.3,
        edgecolors="white",
        zorder=3,
    )
    if best.any():
        ax.scatter(
            *at(best),
            s=90,
            marker="*",
            c=[colours[i] for i in np.flatnonzero(best)],
            edgecolors="black",
            linewidths=0.7,
            zorder=4,
        )
    return handles
