"""The data one metric's analyses work on, and the choices every analysis shares."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from infrepro.analyses.common.names import Names
from infrepro.core.registry import DeclaredOptions
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import BIN_SUFFIX, RUN, SEGMENT, SYSTEM
from infrepro.io.scores import incomplete_runs
from infrepro.plumbing.memo import FrameMemo

if TYPE_CHECKING:
    from infrepro.analyses.common.units import UnitStore


def distinct_strings(values: pd.Series) -> set[str]:
    """The distinct values of a column as strings, as ``set(map(str, values))`` gives them.

    Converts only the distinct values: element-wise iteration over an Arrow-backed column of
    half a million rows costs seconds.
    """
    return {str(value) for value in values.unique()}


_COUNTS = FrameMemo()


def distinct_count(frame: pd.DataFrame, column: str) -> int:
    """``frame[column].nunique()``, remembered per DataFrame object while it lives.

    Every fit, GLRT and test row of the same rows counts their segments and runs again, at a
    few milliseconds a count on half a million rows. The analyses never modify a frame in place
    (they derive new ones), so a count stays valid for the frame's lifetime.
    """
    counts = _COUNTS.of(frame)
    if column not in counts:
        counts[column] = int(frame[column].nunique())
    return counts[column]


@dataclass(frozen=True)
class MetricData:
    """One metric's evaluation table plus the experiment's structure.

    Built by :func:`~infrepro.analyses.runner.load_metric_data`, its metric, facet and property
    names (fields, columns, options) are the safe internal names of ``names``: formulas are built
    from them, never from a user's spelling (see :mod:`infrepro.analyses.common.names`).
    """

    metric: str
    better: str
    baseline: str
    evaluation: pd.DataFrame
    runs: pd.DataFrame
    facets: list[str]
    properties: list[str]
    options: Mapping[str, Any] = field(default_factory=dict)
    bin_order: Mapping[str, list[str]] = field(default_factory=dict)
    names: Names = field(default_factory=Names)
    units: UnitStore | None = None  # units kept from the job's previous run (units.py)

    def __post_init__(self) -> None:
        # options not given take the config schema's defaults (the only source of defaults); an
        # analysis' own view (runner.run_analysis) is kept as it is
        if not isinstance(self.options, DeclaredOptions):
            object.__setattr__(self, "options", with_defaults("analyses", self.options))

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
        configured = self.options["facets"]
        if system in configured:
            return list(configured[system])
        runs = self.runs[self.runs[SYSTEM] == system]
        return [f for f in self.facets if f in runs and runs[f].dropna().nunique() > 1]

    def is_numeric(self, prop: str) -> bool:
        return pd.api.types.is_numeric_dtype(self.evaluation[prop])

    def bin_column(self, prop: str) -> str:
        """The (internal) name of a property's binned column, present or not."""
        return self.names.internal(self.names.user(prop) + BIN_SUFFIX)

    @property
    def binned_columns(self) -> frozenset[str]:
        """The (internal) names of every property's binned column."""
        return frozenset(self.bin_column(p) for p in self.properties)

    def property_variants(self, prop: str) -> list[str]:
        """The property itself, plus its binned version when it is numeric and binned."""
        variants = [prop]
        if self.is_numeric(prop) and self.bin_column(prop) in self.evaluation:
            variants.append(self.bin_column(prop))
        return variants

    @functools.cached_property
    def _system_positions(self) -> dict[object, Any]:
        """Each system's row positions in the evaluation table, found in one pass."""
        return self.evaluation.groupby(SYSTEM, sort=False, observed=True).indices

    def system_rows(self, system: str) -> pd.DataFrame:
        """``evaluation[evaluation[SYSTEM] == system]`` (the same rows, order and index), from
        positions found once for every system: a loop over the systems that filtered the whole
        table for each cost systems x rows (the meta-parameter analysis at 200 systems)."""
        positions = self._system_positions.get(system)
        return self.evaluation.iloc[positions if positions is not None else []]

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

    A worker process runs one metric's jobs after another's: the frame of a (file version,
    columns) is built once per process (up to KEPT_FRAME_BYTES of them) and each call gets a
    copy of its own (3 ms at paper scale, where building it took 40-70 ms).
    """
    table, text, version = _evaluation_table(path)
    key = (version, metric, tuple(facets), tuple(properties))
    kept = _FRAMES.pop(key, None)
    if kept is None:
        columns = evaluation_columns(
            list(table.schema.names), metric=metric, facets=facets, properties=properties
        )
        frame = table.select(columns).to_pandas()
        for name in columns:
            column = frame[name]
            if name in text and isinstance(column.dtype, pd.CategoricalDtype):
                categories = column.cat.categories
                frame[name] = column.cat.reorder_categories(sorted(categories, key=str))
        kept = frame, int(frame.memory_usage().sum())
    _FRAMES[key] = kept  # the most recent last
    while sum(size for _, size in _FRAMES.values()) > KEPT_FRAME_BYTES:
        del _FRAMES[next(iter(_FRAMES))]  # the least recent first (this one, if too large)
    return kept[0].copy(deep=True)


_TABLES: dict[tuple[object, ...], tuple[Any, frozenset[str]]] = {}  # the last read, by file
# read_evaluation's frames with their sizes, by file version and columns
_FRAMES: dict[tuple[object, ...], tuple[pd.DataFrame, int]] = {}
KEPT_FRAME_BYTES = 256 * 2**20  # a few metrics' frames at paper scale (30 MB each)


def _evaluation_table(path: str) -> tuple[Any, frozenset[str], tuple[object, ...]]:
    """The whole evaluation table (a pyarrow Table: immutable) with its text columns read as
    dictionaries, their names, and the file version it was read from; read once per process
    and file version. A worker process serves every analysis job of a workflow run
    (infrepro.workflow.jobs): its jobs decode the Parquet file once, not once each (a tenth of a
    second per job at paper scale). The file is written by an atomic rename, so a new version
    has a new inode; only the last one is kept (and the frames of other versions dropped)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    read = _TABLES.get(key)
    if read is None:
        schema = pq.read_schema(path)
        text = frozenset(
            field.name
            for field in schema
            if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
        )
        read = pq.read_table(path, read_dictionary=sorted(text)), text
        _TABLES.clear()
        _FRAMES.clear()
        _TABLES[key] = read
    return (*read, key)


def best_runs(data: MetricData) -> pd.DataFrame:
    """The best run of every system: by dev score when every run has one, else by test mean.

    Selection by the test mean is what the field often does and is optimistic; it is flagged.
    Only complete runs (scores of every segment) are candidates, unless a system has none.
    Ties go to the run listed first.
    """
    means = run_means(data)
    lacking = incomplete_runs(data.evaluation)
    has_dev = "dev_score" in data.runs and data.runs["dev_score"].notna().all()
    # Required whenever runs have a dev score (checked before any job): one dev score serves
    # every metric, so no metric's direction can stand in for it.
    dev_better = data.options["dev_score_better"] if has_dev else None
    rows = []
    for system in data.systems:
        runs = means[means[SYSTEM] == system]
        complete = runs[~runs[RUN].isin(list(lacking))]
        runs = complete if not complete.empty else runs
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
    """Mean test score of every run, with its system, facets and dev score, in runs order."""
    means = (
        data.evaluation.groupby(RUN, sort=False)[data.metric].agg(["mean", "count"]).reset_index()
    )
    meta_columns = [c for c in [RUN, SYSTEM, *data.facets, "dev_score"] if c in data.runs]
    table = data.runs[meta_columns].merge(means, on=RUN, how="inner")
    return table.reset_index(drop=True)
