"""Meta-parameters: facets ranked by variance share (descriptive), and every tested facet of each
system (``analyses.metaparam_facets``, by default all) as a fixed effect crossed with every data
property (paper Fig. 2: one line per facet level); one block per system and facet."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.registry import METAPARAM, RUN_AWARE_SUFFIX, interaction_only, joint, run_aware
from infrepro.core.vocabulary import SYSTEM, VARIANCE_COLUMN, bin_column
from infrepro.plots import level_styles, short_name
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import fixed, integer, scientific
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label, property_label
from infrepro.report.query import first, ordered, select
from infrepro.report.sections.interactions import Block, interaction_svg, p_of
from infrepro.report.sections.properties import MOST_LINES, plotted_systems


@dataclass(kw_only=True)
class SystemBlock(Block):
    system: str
    facets: str
    figure_note: str = ""  # why a system's figures are not drawn (more than MOST_LINES systems)


@dataclass
class Metaparams:
    importance: Table | None = None
    systems: list[SystemBlock] = field(default_factory=list)  # the drawn (top) systems' blocks
    more: list[SystemBlock] = field(default_factory=list)  # the others, one click away


UNDRAWN = (
    f"Figures and within-bin contrasts are shown for the baseline and the {MOST_LINES - 1} "
    "systems ranked first in each metric's decision table among those with tested "
    "meta-parameters; this system's tests and slopes are below, its contrasts in contrasts.csv."
)
POST_HOC = ("glrt", "tests", "predictions", "means", "slopes", "contrasts")
# A facet with more levels than this (20 seeds: 190 pairs a bin) shows in the page's within-bin
# table each level against its reference level only; every pair stays in contrasts.csv.
MOST_PAIRED_LEVELS = 5
PER_SYSTEM = ("tests", "glrt", "slopes", "contrasts")


def tested_facets(tables: dict[str, pd.DataFrame], system: str) -> list[str]:
    """The facets the metaparam analysis tested for a system, in the order of its tables."""
    rows = select(tables["glrt"], analysis=joint(METAPARAM), subset=system)
    return list(dict.fromkeys(str(f) for f in rows["facet"])) if not rows.empty else []


def _system_block(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    bins: dict[str, list[str]],
    *,
    system: str,
    facet: str,
    drawn: bool = True,
) -> SystemBlock:
    """The plots and tables of one system's tested facet (the tables cut to that facet); the
    plots only when ``drawn``."""
    tables = {**tables, **{name: select(tables[name], facet=facet) for name in POST_HOC}}
    block = SystemBlock(system=system, facets=facet, figure_note="" if drawn else UNDRAWN)
    for metric in settings.metrics:
        if not drawn:
            break
        if first(tables["glrt"], metric=metric, analysis=joint(METAPARAM), subset=system) is None:
            continue
        for prop in settings.properties:
            figure = _figure(tables, system, facet, metric, prop, bins)
            if figure is not None:
                block.figures.append(figure)
    variants = [v for p in settings.properties for v in (p, bin_column(p))]
    mine = {**tables, **{name: select(tables[name], subset=system) for name in PER_SYSTEM}}
    mine["contrasts"], block.within_pairs = _reference_pairs(mine["contrasts"], facet)
    block.fill(
        mine,
        settings,
        METAPARAM,
        variants,
        bins,
        slope_props=settings.properties,
        group_label="level",
    )
    if not drawn:  # the within-bin contrasts are in contrasts.csv (a page at 30 systems)
        block.within = None
    return block


def _reference_pairs(contrasts: pd.DataFrame, facet: str) -> tuple[pd.DataFrame, str]:
    """A facet's within-bin contrasts as the page shows them: every pair of levels, or, beyond
    MOST_PAIRED_LEVELS levels, each level against the reference level (the first in sorted
    order, method §4.5), with a note that says so."""
    if contrasts.empty:
        return contrasts, ""
    first, second = contrasts["level1"].astype(str), contrasts["level2"].astype(str)
    levels = sorted({*first, *second})
    if len(levels) <= MOST_PAIRED_LEVELS:
        return contrasts, ""
    reference = levels[0]
    pairs = len(levels) * (len(levels) - 1) // 2
    note = (
        f"each level of {facet} against its reference level {reference}, Holm over all "
        f"{pairs} pairs of levels in every bin (all in contrasts.csv)"
    )
    return contrasts[(first == reference) | (second == reference)], note


def _figure(
    tables: dict[str, pd.DataFrame],
    system: str,
    facet: str,
    metric: str,
    prop: str,
    bins: dict[str, list[str]],
) -> Figure | None:
    """The interaction plot of one facet's levels with a property (None without data): lines
    from the run-aware fit when it has predictions, else from the paper's model."""
    where = {"metric": metric, "subset": system, "property": prop}
    groups = select(tables["predictions"], analysis=METAPARAM, **where)
    if groups.empty:
        groups = select(tables["means"], analysis=METAPARAM, **where)
    levels = ordered(sorted(set(groups["group"])), []) if not groups.empty else []
    title = f"{short_name(system, 20)}: {metric_label(metric)} × {property_label(prop)}"
    key = f"meta-{system}-{metric}-{prop}"
    lines = run_aware(METAPARAM)
    if select(tables["predictions"], analysis=lines, **where).empty:
        lines = METAPARAM
    svg = interaction_svg(
        tables,
        metric=metric,
        analysis=lines,
        observed=METAPARAM,
        subset=system,
        prop=prop,
        styles=level_styles(levels),
        bin_order=bins.get(prop, []),
        xlabel=property_label(prop),
        title=title,
        key=key,
        legend_title=facet,
    )
    if svg is None:
        return None
    primary = p_of(tables, metric, interaction_only(run_aware(METAPARAM)), system, prop)
    paper = p_of(tables, metric, interaction_only(METAPARAM), system, prop)
    model = "run-aware fit" if lines.endswith(RUN_AWARE_SUFFIX) else "paper's model"
    return make_figure(
        svg,
        f"{title} per level of {facet} (a tested meta-parameter; lines: "
        f"{model}); {facet} × {property_label(prop)} interaction {primary}; paper's "
        f"interaction {paper}.",
        key,
    )


def build(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, bins: dict[str, list[str]]
) -> Metaparams:
    section = Metaparams()
    importance = tables["importance"]
    if not importance.empty:
        section.importance = frame_table(
            importance,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column(SYSTEM, SYSTEM, text, numeric=False),
                Column("rank", "rank", integer),
                Column("facet", "meta-parameter", text, numeric=False),
                Column(VARIANCE_COLUMN, VARIANCE_COLUMN, scientific),
                Column("percent", "percent of variance", lambda v: fixed(v, 1)),
                Column(
                    "dominant",
                    "largest share",
                    lambda v: "yes" if v is True else "",
                    numeric=False,
                    title="descriptive: the tests below do not depend on the ranking",
                ),
            ],
            csv=settings.link("importance"),
        )
    tested = {s: tested_facets(tables, s) for s in settings.systems}
    eligible = {s for s, facets in tested.items() if facets}
    drawn = {s for m in settings.metrics for s in plotted_systems(tables, settings, m, eligible)}
    for system in [*settings.competitors, settings.baseline]:
        for facet in tested[system]:
            block = _system_block(
                tables, settings, bins, system=system, facet=facet, drawn=system in drawn
            )
            # beyond MOST_LINES systems, the undrawn ones collapsed: every number stays on
            # the page, the section stays a few screens (62 blocks were most of the page)
            collapse = len(settings.systems) > MOST_LINES and system not in drawn
            (section.more if collapse else section.systems).append(block)
    return section
