"""Meta-parameters: facets ranked by variance share, and the dominant facet of each system as a
fixed effect crossed with every data property (paper Fig. 2: one line per facet level)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.plots import level_styles
from infrepro.registry import METAPARAM, RUN_AWARE_SUFFIX, interaction_only, joint, run_aware
from infrepro.vocabulary import SYSTEM, VARIANCE_COLUMN, bin_column

from ..figure import Figure, make_figure
from ..formatting import fixed, integer, scientific
from ..htmltable import Column, Table, frame_table, text
from ..inputs import ReportSettings
from ..labels import metric_label, property_label
from ..query import first, ordered, select
from .interactions import (
    glrt_table,
    interaction_svg,
    p_of,
    slopes_table,
    tests_table,
    within_bins_table,
)

ANALYSES = (joint(METAPARAM), interaction_only(METAPARAM))
RUN_AWARE_ANALYSES = (joint(run_aware(METAPARAM)), interaction_only(run_aware(METAPARAM)))


@dataclass
class SystemBlock:
    system: str
    facets: str
    figures: list[Figure] = field(default_factory=list)
    tests: Table | None = None
    glrt: Table | None = None
    slopes: Table | None = None
    within: Table | None = None


@dataclass
class Metaparams:
    importance: Table | None = None
    systems: list[SystemBlock] = field(default_factory=list)


def dominant_facet(tables: dict[str, pd.DataFrame], metric: str, system: str) -> str | None:
    row = first(tables["glrt"], metric=metric, analysis=joint(METAPARAM), subset=system)
    return None if row is None else str(row["facet"])


def _system_block(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    system: str,
    bins: dict[str, list[str]],
) -> SystemBlock | None:
    facets = {m: dominant_facet(tables, m, system) for m in settings.metrics}
    if not any(facets.values()):
        return None
    names = sorted({f for f in facets.values() if f})
    block = SystemBlock(system, ", ".join(names))
    for metric in settings.metrics:
        facet = facets[metric]
        if facet is None:
            continue
        for prop in settings.properties:
            groups = select(
                tables["predictions"],
                metric=metric,
                analysis=METAPARAM,
                subset=system,
                property=prop,
            )
            if groups.empty:
                groups = select(
                    tables["means"],
                    metric=metric,
                    analysis=METAPARAM,
                    subset=system,
                    property=prop,
                )
            levels = ordered(sorted(set(groups["group"])), []) if not groups.empty else []
            title = f"{system}: {metric_label(metric)} × {property_label(prop)}"
            key = f"meta-{system}-{metric}-{prop}"
            lines = run_aware(METAPARAM)
            found = select(
                tables["predictions"], metric=metric, analysis=lines, subset=system, property=prop
            )
            if found.empty:
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
                continue
            primary = p_of(tables, metric, interaction_only(run_aware(METAPARAM)), system, prop)
            paper = p_of(tables, metric, interaction_only(METAPARAM), system, prop)
            model = "run-aware fit" if lines.endswith(RUN_AWARE_SUFFIX) else "paper's model"
            block.figures.append(
                make_figure(
                    svg,
                    f"{title} per level of {facet} (its dominant meta-parameter; lines: "
                    f"{model}); {facet} × {property_label(prop)} interaction {primary}; paper's "
                    f"interaction {paper}.",
                    key,
                )
            )
    variants = [v for p in settings.properties for v in (p, bin_column(p))]
    block.tests = tests_table(
        {**tables, "tests": select(tables["tests"], subset=system)},
        settings,
        RUN_AWARE_ANALYSES,
        variants,
    )
    block.glrt = glrt_table(
        {**tables, "glrt": select(tables["glrt"], subset=system)}, settings, ANALYSES, variants
    )
    slopes = slopes_table(
        {**tables, "slopes": select(tables["slopes"], subset=system)},
        settings,
        METAPARAM,
        settings.properties,
        group_label="level",
    )
    block.slopes = None if slopes.empty else slopes
    within = within_bins_table(
        {**tables, "contrasts": select(tables["contrasts"], subset=system)},
        settings,
        METAPARAM,
        variants,
        bins,
    )
    block.within = None if within.empty else within
    return block


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
                Column("dominant", "dominant", lambda v: "yes" if v is True else "", numeric=False),
            ],
            csv=settings.link("importance"),
        )
    for system in [*settings.competitors, settings.baseline]:
        block = _system_block(tables, settings, system, bins)
        if block is not None:
            section.systems.append(block)
    return section
