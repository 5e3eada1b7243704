"""Run one analysis of one metric: the unit of work of a Snakemake analysis job."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.names import Names
from infrepro.analyses.common.tables import conform
from infrepro.analyses.common.units import UnitStore
from infrepro.core.registry import ANALYSES, DeclaredOptions, analysis_spec, resolve
from infrepro.core.schema import defaults
from infrepro.core.vocabulary import BIN_SUFFIX

__all__ = ["ANALYSES", "load_metric_data", "run_analysis"]


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
    units: UnitStore | None = None,
) -> MetricData:
    """Bundle one metric's view of the evaluation table with the experiment's structure.

    The metric, facet and property columns (and the properties' bins) get safe internal names
    here, once (:class:`Names`); :func:`run_analysis` gives the tables back the user's names.
    ``units``: the job's store of per-system units (:class:`UnitStore`), none by default.
    """
    binned = [p + BIN_SUFFIX for p in properties if p + BIN_SUFFIX in evaluation]
    names = Names.of([metric, *facets, *properties, *binned], _user_values(evaluation, runs))
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
        units=units,
    )


def _user_values(*frames: pd.DataFrame) -> set[object]:
    """Every text cell of the frames' text columns (systems, run ids, facet levels, categorical
    properties): the values an internal name must not be mistaken for."""
    values: set[object] = set()
    for frame in frames:
        for column in frame.columns:
            series = frame[column]
            if isinstance(series.dtype, pd.CategoricalDtype):  # its used categories
                codes = series.cat.codes.to_numpy()
                used = np.bincount(codes[codes >= 0], minlength=len(series.cat.categories))
                values.update(series.cat.categories[used > 0].tolist())
            elif not pd.api.types.is_numeric_dtype(series.dtype):
                values.update(series.unique())
    return values


def run_analysis(
    name: str, data: MetricData, needed: Mapping[str, pd.DataFrame] | None = None
) -> dict[str, pd.DataFrame]:
    """The tables one analysis writes (its registry entry's ``tables``), each with its columns.

    Dispatch is by the registry (infrepro.core.registry.ANALYSES): the analysis's function gets
    ``data``, a FitLog and, by keyword, the tables it needs from other analyses (``needed``,
    keyed by each Need's ``argument``, in the user's names).
    """
    spec = analysis_spec(name)
    # the analysis sees only the options it declares (a change of any other does not rerun it)
    report = {k: v for k, v in defaults("report").items() if k in spec.report_reads}
    data = replace(data, options=DeclaredOptions.of(name, {**report, **data.options}))
    log = FitLog(data.metric)
    given = needed or {}
    arguments = {}
    for need in spec.needs:
        if given.get(need.argument) is None:
            raise ValueError(
                f"the {name} analysis needs the {need.table} table of the {need.analysis} analysis"
            )
        arguments[need.argument] = data.names.internal_values(
            given[need.argument], list(need.user_names)
        )
    tables = resolve(spec.function)(data, log, **arguments)
    tables["diagnostics"] = log.diagnostics()
    tables["qq"] = log.qq_table()
    user = {table: data.names.user_table(frame) for table, frame in tables.items()}
    return {table: conform(table, user.get(table)) for table in spec.tables}
