"""Run one analysis of one metric: the unit of work of a Snakemake analysis job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from infrepro.io.errors import plural
from infrepro.io.scores import incomplete_runs
from infrepro.vocabulary import ANALYSES, ANALYSIS_TABLES, BIN_SUFFIX, SEGMENT

from .budget import budget_analysis
from .classical import classical_tests
from .comparison import compare_systems
from .conditional import conditional_analyses
from .data import MetricData
from .fitlog import FitLog
from .metaparam import metaparameter_interactions
from .names import Names
from .planning import planning_analysis
from .tables import conform
from .variance import variance_components


def load_metric_data(
    evaluation: pd.DataFrame,
    runs: pd.DataFrame,
    bins: pd.DataFrame,
    *,
    metric: str,
    better: str,
    baseline: str,
    facets: list[str],
    properties: list[str],
    options: Mapping[str, Any],
) -> MetricData:
    """Bundle one metric's view of the evaluation table with the experiment's structure.

    The metric, facet and property columns (and the properties' bins) get safe internal names
    here, once (:class:`Names`); :func:`run_analysis` gives the tables back the user's names.
    """
    binned = [p + BIN_SUFFIX for p in properties if p + BIN_SUFFIX in evaluation]
    names = Names.of([metric, *facets, *properties, *binned])
    bin_order: dict[str, list[str]] = {}
    for prop, group in bins.groupby("property", sort=False):
        bin_order[names.internal(f"{prop}{BIN_SUFFIX}")] = [str(b) for b in group["bin"]]
    inner = names.internal(metric)
    return MetricData(
        metric=inner,
        better=better,
        baseline=baseline,
        evaluation=names.rename_columns(evaluation.dropna(subset=[metric])).reset_index(drop=True),
        runs=names.rename_columns(runs),
        facets=names.internal_list(facets),
        properties=names.internal_list(properties),
        options=names.internal_options(options),
        bin_order=bin_order,
        names=names,
    )


def note_incomplete_runs(data: MetricData, log: FitLog) -> None:
    """List every incomplete run (admitted by ``incomplete_runs: admit``) in the diagnostics."""
    total = data.evaluation[SEGMENT].nunique()
    for run, missing in incomplete_runs(data.evaluation).items():
        log.note(
            "incomplete runs",
            run,
            f"run {run} is incomplete: it lacks {plural(missing, 'segment')} of {total}; "
            "it is not a candidate for best run",
        )


def run_analysis(
    name: str, data: MetricData, components: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    """The tables one analysis writes (vocabulary.ANALYSIS_TABLES), each with its columns."""
    log = FitLog(data.metric)
    if components is not None:
        components = data.names.internal_values(components, ["component"])
    if name == "comparison":
        note_incomplete_runs(data, log)
        tables = compare_systems(data, log)
    elif name == "conditional":
        tables = conditional_analyses(data, log)
    elif name == "variance":
        tables = variance_components(data, log)
    elif name == "metaparam":
        if components is None:
            raise ValueError("the metaparam analysis needs the variance components table")
        tables = metaparameter_interactions(data, log, components)
    elif name == "classical":
        tables = classical_tests(data, log)
    elif name == "planning":
        tables = planning_analysis(data, log)
    elif name == "budget":
        tables = budget_analysis(data, log)
    else:
        raise ValueError(f"unknown analysis '{name}'; choose from {', '.join(ANALYSES)}")
    tables["diagnostics"] = log.diagnostics()
    tables["qq"] = log.qq_table()
    user = {table: data.names.user_table(frame) for table, frame in tables.items()}
    return {table: conform(table, user.get(table)) for table in ANALYSIS_TABLES[name]}
