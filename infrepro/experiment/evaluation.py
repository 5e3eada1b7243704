"""The evaluation table: one row per (run, segment), the input of every analysis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from pandas.api.extensions import take

from infrepro.core.vocabulary import BIN_SUFFIX, LOOK, RUN, SEGMENT, SYSTEM
from infrepro.io.scores import ScoresColumns, read_scores_table
from infrepro.properties.bins import add_bins


def assemble_evaluation(
    runs: pd.DataFrame,
    scores: Sequence[pd.DataFrame],
    properties: pd.DataFrame,
    *,
    facets: Sequence[str],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """Join per-run scores with run metadata and segment properties.

    Columns: run_id, system, facets, segment_id, properties (and their bins), metrics; rows
    ordered by run and segment id, as in scores mode: the order of the runs sheet's and the test
    set's rows is not information, and sums over rows must not depend on it.
    """
    stacked = pd.concat(scores, ignore_index=True)
    stacked = stacked.sort_values([RUN, SEGMENT], kind="stable").reset_index(drop=True)
    joined = {
        **_left_join(stacked, runs[[RUN, SYSTEM, *facets]], RUN),
        **_left_join(stacked, properties, SEGMENT),
    }
    prop_columns = [c for c in properties.columns if c != SEGMENT]
    columns = [RUN, SYSTEM, *facets, SEGMENT, *prop_columns, *metrics]
    return stacked.assign(**joined)[columns].reset_index(drop=True)


def run_scores(files: Sequence[pd.DataFrame]) -> list[pd.DataFrame]:
    """One table per run (run_id, segment_id, its metrics) from the score files of its metrics
    (``scores/<run>/<metric>.parquet``: run_id, segment_id, one metric, written together by the
    run's scoring job, so in the same segment order), runs in order of appearance."""
    by_run: dict[str, pd.DataFrame] = {}
    for frame in files:
        run = str(frame[RUN].iloc[0]) if len(frame) else ""
        if run not in by_run:
            by_run[run] = frame.reset_index(drop=True)
            continue
        table = by_run[run]
        if not table[SEGMENT].reset_index(drop=True).equals(frame[SEGMENT].reset_index(drop=True)):
            raise ValueError(f"run {run}: its metrics' score files list different segments")
        extra = [c for c in frame.columns if c not in (RUN, SEGMENT)]
        by_run[run] = table.assign(**{c: frame[c].to_numpy() for c in extra})
    return list(by_run.values())


def _left_join(rows: pd.DataFrame, right: pd.DataFrame, key: str) -> dict[str, object]:
    """The columns of ``right`` for each row of ``rows`` by ``key`` (missing: NA), as a left
    many-to-one merge gives them, dtypes included. Each distinct key is looked up once (a merge
    hashes every row's key against the other table: half the assembly's time at paper scale,
    which the analyses wait for)."""
    if right[key].duplicated().any():
        raise ValueError(f"{key} repeats in the table joined to the scores")
    codes, distinct = pd.factorize(rows[key])
    where = pd.Index(right[key]).get_indexer(distinct)[codes]
    where[codes < 0] = -1  # a missing key stays missing
    return {
        column: take(right[column].array, where, allow_fill=True)
        for column in right.columns
        if column != key
    }


def import_scores(
    path: str,
    columns: ScoresColumns,
    *,
    n_bins: int = 3,
    cuts: Mapping[str, Sequence[float]] | None = None,
    labels: Mapping[str, Sequence[str]] | None = None,
    categorical: Sequence[str] = (),
    scale: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Scores mode: the evaluation table, the runs table and the property bins of a scores file.

    Bins of numeric properties are computed over segments (not rows), as in raw mode;
    ``categorical`` properties stay text even when every value parses as a number; ``scale``
    (metric -> fraction or points) says which metrics to divide by 100. Rows are
    ordered by run and segment id whatever the file's order: the order of a file's rows is not
    information, and sums over rows must not depend on it (the tables stay byte-identical).
    """
    table = read_scores_table(path, columns, categorical=categorical, scale=scale)
    table = table.sort_values([RUN, SEGMENT], kind="stable").reset_index(drop=True)
    props = list(columns.properties)
    segments = table[[SEGMENT, *props]].drop_duplicates(SEGMENT).reset_index(drop=True)
    binned, bins = add_bins(segments, props, n_bins=n_bins, cuts=cuts, labels=labels)
    bins.insert(0, "computed_on", "scores file")
    bin_columns = [c for c in binned.columns if c.endswith(BIN_SUFFIX) and c not in table]
    table = table.merge(binned[[SEGMENT, *bin_columns]], on=SEGMENT, how="left")
    run_columns = [RUN, SYSTEM, *columns.facets]
    if columns.dev_score:
        run_columns.append("dev_score")
    if columns.look:
        run_columns.append(LOOK)
    runs = table[run_columns].drop_duplicates(RUN).reset_index(drop=True)
    ordered = [
        RUN,
        SYSTEM,
        *columns.facets,
        SEGMENT,
        *props,
        *bin_columns,
        *columns.metrics,
    ]
    return table[ordered].reset_index(drop=True), runs, bins
