"""Meta-parameter importance and meta-parameter x data property interactions.

The facet with the largest variance share of a system (from its VCA) becomes a fixed effect,
crossed with each property: the paper's ``score ~ f * d + (1|s)`` vs ``score ~ f + d + (1|s)``
GLRTs and the run-aware ``score ~ f * d + (1|s) + (1 + d_c || run_id)`` (d_c: d centred) F tests
(docs/method.md §4.5, §4b).
"""

from __future__ import annotations

import pandas as pd

from infrepro.registry import METAPARAM
from infrepro.vocabulary import SYSTEM, VARIANCE_COLUMN, columns

from .conditional import _Tables, factor_analysis, property_rows
from .data import MetricData, distinct_strings
from .effects import effect_scale
from .fitlog import FitLog


def facet_importance(data: MetricData, components: pd.DataFrame) -> pd.DataFrame:
    """Facets of each system ranked by their variance share (segment and residual excluded)."""
    rows: list[dict[str, object]] = []
    for system in data.systems:
        facets = data.facets_of(system)
        mine = components[(components[SYSTEM] == system) & components["component"].isin(facets)]
        ranked = mine.sort_values(["percent", "component"], ascending=[False, True])
        for rank, row in enumerate(ranked.itertuples(index=False), start=1):
            rows.append(
                {
                    "metric": data.metric,
                    SYSTEM: system,
                    "facet": row.component,
                    VARIANCE_COLUMN: row.variance,
                    "percent": row.percent,
                    "rank": rank,
                    "dominant": rank == 1,
                }
            )
    return pd.DataFrame(rows, columns=columns("importance"))


def metaparameter_interactions(
    data: MetricData, log: FitLog, components: pd.DataFrame
) -> dict[str, pd.DataFrame]:
    """Importance ranking and, per system, its dominant facet crossed with every property."""
    importance = facet_importance(data, components)
    tables = _Tables(data.binned_columns)
    tables.scale = effect_scale(data, log)
    for system in data.systems:
        dominant = importance[(importance[SYSTEM] == system) & importance["dominant"]]
        if dominant.empty:
            log.skip(METAPARAM, system, "", f"{system} has no facet with two or more levels")
            continue
        facet = str(dominant["facet"].iloc[0])
        rows = data.evaluation[data.evaluation[SYSTEM] == system].dropna(subset=[facet])
        reference = sorted(distinct_strings(rows[facet]))[0]
        for variant, variant_rows, _ in property_rows(data, rows):
            factor_analysis(
                data,
                log,
                tables,
                variant_rows,
                factor=facet,
                prop=variant,
                analysis=METAPARAM,
                subset=system,
                reference=reference,
            )
    frames = tables.frames()
    frames["importance"] = importance
    return frames
