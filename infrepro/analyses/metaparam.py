"""Meta-parameter importance and meta-parameter x data property interactions.

Importance (descriptive): each system's facets ranked by their share in the run-aware VCA. It
selects nothing: the tested facets are the ones the user names (``analyses.metaparam_facets``)
or, by default, every facet of the system, each crossed with each property, with Holm over the
system's facets x properties: the paper's ``score ~ f * d + (1|s)`` vs ``score ~ f + d + (1|s)``
GLRTs and the run-aware ``score ~ f * d + (1|s) + <run intercepts per level of f> +
(0 + d_c | run_id)`` (d_c: d centred) F tests (docs/method.md §4.5, §4b.3).
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from infrepro.analyses.common.data import MetricData, distinct_strings
from infrepro.analyses.common.effects import effect_scale
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.units import UnitStore
from infrepro.analyses.conditional import Cell, _Tables, factor_analysis, property_rows
from infrepro.core.registry import METAPARAM
from infrepro.core.vocabulary import (
    CONVERGED,
    NOT_CONVERGED,
    SYSTEM,
    VARIANCE_COLUMN,
    VCA_COLUMN,
    VCA_RUN_AWARE,
    columns,
)


def facet_importance(data: MetricData, log: FitLog, components: pd.DataFrame) -> pd.DataFrame:
    """Facets of each system ranked by their variance share in the run-aware VCA (segment, run
    and residual excluded); descriptive: the tests do not depend on it. A system whose VCA did
    not converge has no shares, so no ranking (noted, docs/method.md §4.6.1)."""
    if VCA_COLUMN in components:
        components = components[components[VCA_COLUMN] == VCA_RUN_AWARE]
    rows: list[dict[str, object]] = []
    for system in data.systems:
        facets = data.facets_of(system)
        mine = components[(components[SYSTEM] == system) & components["component"].isin(facets)]
        if CONVERGED in mine and not mine[CONVERGED].astype(bool).all():
            log.note(METAPARAM, system, f"no importance ranking (VCA fit {NOT_CONVERGED})")
            continue
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


def tested_facets(data: MetricData, system: str) -> list[str]:
    """The facets tested for a system: those named in ``analyses.metaparam_facets`` that vary
    among its runs, or every facet that does (never chosen by their shares on these data)."""
    varied = data.facets_of(system)
    named = list(data.options["metaparam_facets"])
    return [f for f in named if f in varied] if named else varied


def untested_facets(data: MetricData, system: str) -> str:
    """Why facets are not tested for ``system`` ("" when none is left out): it has no facet
    that varies among its runs, or the facets ``analyses.metaparam_facets`` names do not."""
    varied = data.facets_of(system)
    named = list(data.options["metaparam_facets"])
    if not varied:
        return f"{system} has no facet with two or more levels among its runs to test"
    missing = [f for f in named if f not in varied]
    if not missing:
        return ""
    tested = [f for f in named if f in varied]
    return (
        f"{system}: {_listed(missing)} (named in analyses.metaparam_facets) "
        f"{'has' if len(missing) == 1 else 'have'} fewer than two levels among its runs, so "
        f"{'it is' if len(missing) == 1 else 'they are'} not tested; "
        + (f"tested: {_listed(tested)}" if tested else f"its varying facets: {_listed(varied)}")
    )


def _listed(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def facet_variants(
    data: MetricData, system: str, facet: str
) -> Iterator[tuple[str, pd.DataFrame, str]]:
    """A system's rows with a value of ``facet``, per property variant: (variant, rows,
    reference level), the reference being the facet's first level in sorted order."""
    rows = data.system_rows(system).dropna(subset=[facet])
    reference = sorted(distinct_strings(rows[facet]))[0]
    for variant, variant_rows, _ in property_rows(data, rows):
        yield variant, variant_rows, reference


def metaparameter_interactions(
    data: MetricData, log: FitLog, components: pd.DataFrame
) -> dict[str, pd.DataFrame]:
    """Importance ranking and, per system, every tested facet crossed with every property."""
    tables = _Tables(data.binned_columns)
    tables.scale = effect_scale(data, log)
    store = data.units or UnitStore()
    structure = (
        data.metric,
        data.better,
        data.baseline,
        tuple(data.facets),
        tuple(data.properties),
        tuple(sorted((k, tuple(v)) for k, v in data.bin_order.items())),
        dict(data.options),
    )
    for system in data.systems:
        facets = tested_facets(data, system)
        untested = untested_facets(data, system)
        if untested:
            log.skip(METAPARAM, system, "", untested)
        for facet in facets:
            for variant, variant_rows, reference in facet_variants(data, system, facet):
                cell = Cell(facet, variant, METAPARAM, system, reference)
                # a system whose rows did not change since the job's last run: its units' rows
                # are taken from then (units.py)
                store.run(
                    store.key(variant_rows, cell, data.is_numeric(variant), structure),
                    tables,
                    log.rows,
                    log.qq,
                    lambda rows=variant_rows, cell=cell: factor_analysis(
                        data, log, tables, rows, cell
                    ),
                )
    frames = tables.frames()
    frames["importance"] = facet_importance(data, log, components)
    return frames
