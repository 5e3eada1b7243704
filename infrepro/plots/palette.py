"""Colours and line styles: systems as in the paper (baseline solid, competitor dashed)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

from infrepro.core.vocabulary import SEGMENT

# Okabe & Ito's colour-blind-safe palette; the baseline is blue, the first competitor vermilion.
SYSTEM_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
SYSTEM_DASHES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 2)), (0, (8, 2)))
LEVEL_DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (8, 2)), (0, (1, 1)))
SEGMENT_COLOUR = "#0072B2"
RESIDUAL_COLOUR = "#bdbdbd"
FACET_COLOURS = ("#D55E00", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442", "#8c564b")


def system_style(index: int) -> dict[str, object]:
    """Colour and line style of the system at ``index`` (0 = baseline)."""
    return {
        "color": SYSTEM_COLOURS[index % len(SYSTEM_COLOURS)],
        "linestyle": SYSTEM_DASHES[index % len(SYSTEM_DASHES)],
    }


def level_styles(levels: Sequence[str]) -> dict[str, dict[str, object]]:
    """Ordered facet levels: a sequential (viridis) colour ramp and alternating dashes."""
    cmap = matplotlib.colormaps["viridis"]
    count = len(levels)
    styles = {}
    for i, level in enumerate(levels):
        position = 0.1 + 0.75 * (i / (count - 1) if count > 1 else 0.0)
        styles[level] = {
            "color": matplotlib.colors.to_hex(cmap(position)),
            "linestyle": LEVEL_DASHES[i % len(LEVEL_DASHES)],
        }
    return styles


def component_colours(components: Sequence[str]) -> dict[str, str]:
    """Variance components: segments blue, residual grey, facets from a qualitative palette."""
    colours: dict[str, str] = {}
    facets = 0
    for name in components:
        if name == SEGMENT:
            colours[name] = SEGMENT_COLOUR
        elif name == "Residual":
            colours[name] = RESIDUAL_COLOUR
        else:
            colours[name] = FACET_COLOURS[facets % len(FACET_COLOURS)]
            facets += 1
    return colours
