"""Forest plot of the decision table: each system's improvement over the baseline with its
interval (the decision records'), one row per system in the table's order (best first), zero
marked (docs/method.md §4c)."""

from __future__ import annotations

from collections.abc import Sequence

from infrepro.plots.cache import cached_figure
from infrepro.plots.names import label_width, short_names
from infrepro.plots.svg import figure, to_svg

SIGNIFICANT = "#1f5fa8"
NOT_SHOWN = "#8a8f98"


@cached_figure
def improvement_forest(
    systems: Sequence[str],
    estimates: Sequence[float],
    intervals: Sequence[tuple[float, float]],
    significant: Sequence[bool],
    *,
    xlabel: str,
    title: str,
    key: str,
    description: str = "",
) -> str:
    """Points with horizontal interval bars; filled where ``significant`` (a directional
    verdict). ``description``: the values in words, the figure's accessible label (a screen
    reader's, and what a test reads back)."""
    labels = short_names(systems)
    left = label_width(labels)
    height = 0.75 + 0.24 * len(systems)
    with figure(4.8, height, left=left, bottom=0.45, top=0.28) as fig:
        ax = fig.add_subplot()
        for row, (estimate, (low, high), filled) in enumerate(
            zip(estimates, intervals, significant, strict=True)
        ):
            colour = SIGNIFICANT if filled else NOT_SHOWN
            ax.plot([low, high], [row, row], color=colour, linewidth=1.4)
            ax.plot(
                [estimate],
                [row],
                marker="o",
                markersize=4.5,
                color=colour,
                markerfacecolor=colour if filled else "white",
            )
        ax.axvline(0.0, color="#444444", linewidth=0.8, linestyle="--")
        ax.set_yticks(range(len(systems)), labels)
        ax.set_ylim(len(systems) - 0.5, -0.5)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(axis="y", visible=False)
        return to_svg(fig, key, f"{title}. {description}" if description else title)
