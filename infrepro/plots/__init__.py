"""Report figures: deterministic matplotlib plots rendered to inline SVG strings."""

from .distributions import MOST_UPRIGHT, run_distribution
from .interaction import PlotText, categorical_interaction, numeric_interaction
from .names import short_name, short_names
from .palette import component_colours, level_styles, system_style
from .qq import qq_panels
from .reliability import dstudy_curve, variance_bars
from .svg import clean_svg, figure, to_svg

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
