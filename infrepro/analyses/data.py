"""The data one metric's analyses work on, and the choices every analysis shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from infrepro.properties.bins import BIN_SUFFIX

SEGMENT = "segment_id"
RUN = "run_id"
SYSTEM = "system"


def distinct_strings(values: pd.Series) -> set[str]:
    """The distinct values of a column as strings, as ``set(map(str, values))`` gives them.

    Converts only the distinct values: element-wise iteration over an Arrow-backed column of
    half a million rows costs seconds.
    """
    return {str(value) for value in values.unique()}


@dataclass(frozen=True)
class MetricData:
    """One metric's evaluation table plus the experiment's structure."""

    metric: str
    better: str
    baseline: str
    evaluation: pd.DataFrame
    runs: pd.DataFrame
    facets: list[str]
    properties: list[str]
    options: Mapping[str, Any] = field(default_factory=dict)
    bin_order: Mapping[str, list[str]] = field(default_factory=dict)

    @property
    def systems(self) -> list[str]:
        """Baseline first, then the other systems in sorted order."""
        names = sorted(distinct_strings(self.evaluation[SYSTEM]))
        return [self.baseline] + [n for n in names if n != self.baseline]

    @property
    def reference_levels(self) -> dict[str, str]:
        return {SYSTEM: self.baseline}

    def sign(self) -> int:
        """+1 when higher scores are better, -1 when lower are."""
        return 1 if self.better == "higher" else -1

    def facets_of(self, system: str) -> list[str]:
        """The facets that vary among a system's runs (configurable per system)."""
        configured = self.options.get("facets", {}) or {}
        if system in configured:
            return list(configured[system])
        runs = self.runs[self.runs[SYSTEM] == system]
        return [f for f in self.facets if f in runs and runs[f].dropna().nunique() > 1]

    def is_numeric(self, prop: str) -> bool:
        return pd.api.types.is_numeric_dtype(self.evaluation[prop])

    def property_variants(self, prop: str) -> list[str]:
        """The property itself, plus its binned version when it is numeric and binned."""
        variants = [prop]
        if self.is_numeric(prop) and prop + BIN_SUFFIX in self.evaluation:
            variants.append(prop + BIN_SUFFIX)
        return variants

    def rows_of(
        self, systems: list[str] | None = None, runs: list[str] | None = None
    ) -> pd.DataFrame:
        """Evaluation rows of some systems or runs, with facet values missing dropped nowhere."""
        table = self.evaluation
        if systems is not None:
            table = table[table[SYSTEM].isin(systems)]
        if runs is not None:
            table = table[table[RUN].isin(runs)]
        return table


def evaluation_columns(
    names: list[str], *, metric: str, facets: list[str], properties: list[str]
) -> list[str]:
    """The columns of the evaluation table one metric's analyses read, in file order: ids,
    system, facets, properties (and their bins) and the metric (not the other metrics)."""
    wanted = {RUN, SYSTEM, SEGMENT, metric, *facets, *properties}
    wanted |= {prop + BIN_SUFFIX for prop in properties}
    return [name for name in names if name in wanted]


def read_evaluation(
    path: str, *, metric: str, facets: list[str], properties: list[str]
) -> pd.DataFrame:
    """The evaluation table as the analyses of one metric need it, read lean.

    Only the needed columns (evaluation_columns); text columns (ids, system, facets, bins) as
    categoricals whose categories are sorted as strings, so that grouping, sorting and
    factor coding see the same values in the same order as with plain strings, at one or a few
    bytes per row instead of a string each (the table can have millions of rows).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    columns = evaluation_columns(
        list(schema.names), metric=metric, facets=facets, properties=properties
    )
    text = [
        name
        for name in columns
        if pa.types.is_string(schema.field(name).type)
        or pa.types.is_large_string(schema.field(name).type)
    ]
    frame = pq.read_table(path, columns=columns, read_dictionary=text).to_pandas()
    for name in text:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            categories = column.cat.categories
            frame[name] = column.cat.reorder_categories(sorted(categories, key=str))
    return frame


def best_runs(data: MetricData) -> pd.DataFrame:
    """The best run of every system: by dev score when every run has one, else by test mean.

    Selection by the test mean is what the field often does and is optimistic; it is flagged.
    Ties go to the run listed first.
    """
    means = run_means(data)
    has_dev = "dev_score" in data.runs and data.runs["dev_score"].notna().all()
    dev_better = data.options.get("dev_score_better", data.better)
    rows = []
    for system in data.systems:
        runs = means[means[SYSTEM] == system]
        if has_dev:
            values, better, criterion = runs["dev_score"], dev_better, "dev_score"
        else:
            values, better, criterion = runs["mean"], data.better, "test mean (optimistic)"
        position = values.to_numpy().argmax() if better == "higher" else values.to_numpy().argmin()
        best = runs.iloc[int(position)]
        rows.append(
            {
                SYSTEM: system,
                RUN: best[RUN],
                "selected_by": criterion,
                "selection_value": float(values.iloc[int(position)]),
                "optimistic": not has_dev,
            }
        )
    return pd.DataFrame(rows)


def run_means(data: MetricData) -> pd.DataFrame:
    """Mean test score of every run, with its system, facets and dev score, in runs-sheet order."""
    means = (
        data.evaluation.groupby(RUN, sort=False)[data.metric].agg(["mean", "count"]).reset_index()
    )
    meta_columns = [c for c in [RUN, SYSTEM, *data.facets, "dev_score"] if c in data.runs]
    table = data.runs[meta_columns].merge(means, on=RUN, how="inner")
    return table.reset_index(drop=True)
