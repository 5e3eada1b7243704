"""Normal QQ plots of standardized residuals, one small panel per model."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd

from infrepro.plots.cache import cached_figure
from infrepro.plots.names import short_name
from infrepro.plots.svg import figure, to_svg

PANEL_TITLE = 30  # characters of a panel title that fit a 1.75-inch panel
LINES = ("subset", "model")  # a panel's frame with several fits: one line per fit, overlaid
RASTER_BELOW = 1.9  # zorder under which the overlaid lines are rasterized (the identity: 2)
RASTER_DPI = 150  # overlaid lines are drawn as one image at this resolution (SVG size)
RASTER_FROM = 10  # a panel with more fits than this draws their lines as one image


@cached_figure
def qq_panels(panels: Sequence[tuple[str, pd.DataFrame]], *, title: str, key: str) -> str:
    """Each panel: (title, frame with ``theoretical`` and ``sample`` quantiles) as a line."""
    count = max(len(panels), 1)
    columns = min(count, 5)
    rows = int(np.ceil(count / columns))
    width, height = 1.75 * columns + 0.6, 1.6 * rows + 0.8
    with figure(
        width, height, left=0.55, right=0.1, top=0.55, bottom=0.5, wspace=0.35, hspace=0.6
    ) as fig:
        axes = fig.subplots(rows, columns, squeeze=False)
        for ax in axes.flat[len(panels) :]:
            ax.set_visible(False)
        for ax, (name, frame) in zip(axes.flat, panels, strict=False):
            _qq_lines(ax, frame)
            ax.set_title(short_name(name, PANEL_TITLE), fontsize=7, fontweight="normal")
            ax.tick_params(labelsize=6)
        # placed in inches from the edges: matplotlib's default figure fractions (0.98, 0.01)
        # land inside the outer panels once a figure is many rows tall
        fig.supxlabel("normal quantiles", fontsize=7, y=0.08 / height, va="bottom")
        fig.supylabel("residual quantiles", fontsize=7, x=0.08 / width, ha="left")
        fig.suptitle(title, fontsize=8.5, fontweight="bold", y=1 - 0.12 / height, va="top")
        with matplotlib.rc_context({"savefig.dpi": RASTER_DPI}):
            return to_svg(fig, key, title)


def _qq_lines(ax, frame: pd.DataFrame) -> None:
    """The identity line and one QQ line per fit of ``frame`` (``subset`` and ``model``); more
    than RASTER_FROM fits are thin lines drawn as a single image at RASTER_DPI (hundreds of lines
    of thousands of points would be megabytes of SVG paths)."""
    if frame.empty:
        return
    lines = [c for c in LINES if c in frame]
    fits = len(frame.drop_duplicates(lines)) if lines else 1
    values = frame[["theoretical", "sample"]].to_numpy(dtype=float)
    bound = float(np.abs(values).max())
    ax.plot([-bound, bound], [-bound, bound], color="#999999", linewidth=0.7)
    if fits == 1:
        data = frame.sort_values("theoretical")
        ax.plot(data["theoretical"], data["sample"], color="#0072B2", linewidth=1.1)
        return
    raster = fits > RASTER_FROM
    if raster:
        ax.set_rasterization_zorder(RASTER_BELOW)  # every artist below: one image
    for _, data in frame.groupby(lines, sort=True):
        data = data.sort_values("theoretical")
        ax.plot(
            data["theoretical"],
            data["sample"],
            color="#0072B2",
            linewidth=0.5 if raster else 0.9,
            alpha=0.3 if raster else 0.7,
            zorder=RASTER_BELOW - 0.1 if raster else 2.1,
        )
