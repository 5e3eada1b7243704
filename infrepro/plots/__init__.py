"""Report figures: deterministic matplotlib plots rendered to inline SVG strings."""

from infrepro.plots.distributions import MOST_UPRIGHT, run_distribution
from infrepro.plots.interaction import PlotText, categorical_interaction, numeric_interaction
from infrepro.plots.names import short_name, short_names
from infrepro.plots.palette import component_colours, level_styles, system_style
from infrepro.plots.qq import qq_panels
from infrepro.plots.reliability import dstudy_curve, variance_bars
from infrepro.plots.svg import clean_svg, figure, to_svg

__all__ = [
    "MOST_UPRIGHT",
    "PlotText",
    "categorical_interaction",
    "clean_svg",
    "component_colours",
    "dstudy_curve",
    "figure",
    "level_styles",
    "numeric_interaction",
    "qq_panels",
    "run_distribution",
    "short_name",
    "short_names",
    "system_style",
    "to_svg",
    "variance_bars",
]
