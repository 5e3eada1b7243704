"""Scores mode: read an experiment that is already scored per segment (long format)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from infrepro.vocabulary import DEV_SCORE, RUN, SEGMENT, SYSTEM

from .errors import InputError
from .properties import property_values
from .text import require_file

FRACTION, POINTS_SCALE = "fraction", "points"  # the schema's scale values
# a fraction-scale metric has most scores within [-2, 2] (TER may exceed 1 on some segments)
FRACTION_MEDIAN_MAX = 2.0
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}
MAX_SCORE_MAGNITUDE = 1e12  # far beyond any metric; squares and sums stay exact enough


@dataclass(frozen=True)
class ScoresColumns:
    """The roles of a scores file's columns, from the config's ``columns:`` mapping."""

    segment: str
    system: str
    run: tuple[str, ...]
    metrics: tuple[str, ...]
    facets: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    dev_score: str | None = None

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any]) -> ScoresColumns:
        run = mapping["run"]
        return cls(
            segment=str(mapping["segment"]),
            system=str(mapping[SYSTEM]),
            run=(run,) if isinstance(run, str) else tuple(run),
            metrics=tuple(mapping["metrics"]),
            facets=tuple(mapping.get("facets", ()) or ()),
            properties=tuple(mapping.get("properties", ()) or ()),
            dev_score=mapping.get("dev_score"),
        )

    def all(self) -> list[str]:
        """Every column the mapping names, each once."""
        names = [self.segment, self.system, *self.run, *self.metrics, *self.facets]
        names += [*self.properties, *([self.dev_score] if self.dev_score else [])]
        return list(dict.fromkeys(names))


def read_raw_scores(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV/Parquet file (gzip allowed) with every column as text (Parquet: as stored).

    Whatever goes wrong (a truncated or non-gzip ``.gz``, an empty file, a file that is not
    Parquet, a header without rows) is one line naming the file and the problem.
    """
    file = Path(path)
    require_file(file, "scores file")
    name = file.name.lower()
    try:
        if name.endswith(".parquet"):
            frame = pd.read_parquet(file)
        else:
            sep = "\t" if name.endswith((".tsv", ".tsv.gz", ".txt", ".txt.gz")) else ","
            frame = pd.read_csv(file, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(file, f"invalid UTF-8 ({err.reason}); files must be UTF-8") from None
    except pd.errors.EmptyDataError:
        raise InputError(file, "file is empty; expected a header line and rows of scores") from None
    except pd.errors.ParserError as err:
        raise InputError(file, f"cannot parse: {_one_line(err)}") from None
    except (OSError, EOFError, zlib.error, pa.ArrowException) as err:
        raise InputError(file, f"cannot read {_format_of(name)}: {_one_line(err)}") from None
    if frame.empty:
        raise InputError(
            file,
            f"file has a header ({', '.join(map(str, frame.columns)) or 'no columns'}) but no "
            "rows of scores; expected one row per run and segment",
        )
    return frame


def _format_of(name: str) -> str:
    if name.endswith(".parquet"):
        return "it as Parquet (is it a Parquet file, and complete?)"
    kind = next((kind for end, kind in COMPRESSIONS.items() if name.endswith(end)), None)
    return f"it as {kind}-compressed text (is it {kind}, and complete?)" if kind else "it"


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def read_scores_table(
    path: str | Path,
    columns: ScoresColumns,
    *,
    categorical: Sequence[str] = (),
    scale: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read and validate a scores file into evaluation-table layout.

    Columns are renamed to ``run_id``, ``system``, ``segment_id``; facets, properties and metrics
    keep their names. A run is a distinct combination of ``columns.run`` values. Scores are
    stored as fractions: a metric on the ``points`` ``scale`` is divided by 100; one on the
    (default) fraction scale whose median magnitude exceeds FRACTION_MEDIAN_MAX is refused, as
    0-100 scores read as fractions would be shown x 100.
    """
    raw = read_raw_scores(path)
    for column in columns.all():
        if column not in raw.columns:
            raise InputError(
                path,
                f"the columns mapping names '{column}', which the file lacks "
                f"(found: {', '.join(map(str, raw.columns))})",
                column=column,
            )
    out = pd.DataFrame(
        {
            RUN: _join(raw, columns.run),
            SYSTEM: _text(raw[columns.system]),
        }
    )
    for facet in columns.facets:
        out[facet] = _text(raw[facet])
    out[SEGMENT] = _text(raw[columns.segment])
    for prop in columns.properties:
        lines = range(2, len(raw) + 2)  # line 1 is the header
        out[prop] = property_values(
            raw[prop], prop in categorical, path=path, column=prop, lines=lines
        ).to_numpy()
    for metric in columns.metrics:
        out[metric] = _on_fraction_scale(
            _numeric(raw[metric], path, metric), (scale or {}).get(metric, FRACTION), path, metric
        )
    if columns.dev_score:
        out[DEV_SCORE] = _numeric(raw[columns.dev_score], path, columns.dev_score)
    _check_design(out, path, columns)
    return out


def _on_fraction_scale(values: pd.Series, scale: str, path: str | Path, metric: str) -> pd.Series:
    """Scores as fractions: points / 100; fractions checked to look like fractions."""
    if scale == POINTS_SCALE:
        return values / 100.0
    median = float(values.abs().median())
    if median > FRACTION_MEDIAN_MAX:
        row = int(np.flatnonzero((values.abs() > FRACTION_MEDIAN_MAX).to_numpy())[0])
        raise InputError(
            path,
            f"scores of metric '{metric}' have a median magnitude of {median:g} (this line: "
            f"{values.iloc[row]:g}), too large for fractions (0-1), which the report shows x 100 "
            f"as points; if they are on a 0-100 scale set scale: {{{metric}: points}}",
            line=row + 2,
            column=metric,
        )
    return values


def _join(raw: pd.DataFrame, run_columns: tuple[str, ...]) -> pd.Series:
    parts = [_text(raw[c]) for c in run_columns]
    joined = parts[0]
    for part in parts[1:]:
        joined = joined + ":" + part
    return joined


def _text(series: pd.Series) -> pd.Series:
    return series.map(lambda v: "" if v is None else str(v)).astype(object)


def _numeric(series: pd.Series, path: str | Path, column: str) -> pd.Series:
    values = pd.to_numeric(series.replace({"": np.nan, "NA": np.nan}), errors="coerce")
    bad = values.isna() & ~series.isin(["", "NA", "NaN", "nan"]) & series.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            path,
            f"non-numeric score '{series.iloc[row]}'",
            line=row + 2,
            column=column,
        )
    missing = values.isna()
    if missing.any():
        row = int(np.flatnonzero(missing.to_numpy())[0])
        raise InputError(path, "missing score", line=row + 2, column=column)
    out_of_range = ~(values.abs() <= MAX_SCORE_MAGNITUDE)
    if out_of_range.any():
        row = int(np.flatnonzero(out_of_range.to_numpy())[0])
        raise InputError(
            path,
            f"score '{series.iloc[row]}' is not a finite number of magnitude at most "
            f"{MAX_SCORE_MAGNITUDE:g} (models are fitted in double precision)",
            line=row + 2,
            column=column,
        )
    return values.astype("float64")


def incomplete_runs(table: pd.DataFrame) -> dict[str, int]:
    """Runs that lack some of the table's segments, with how many each lacks (in table order)."""
    total = table[SEGMENT].nunique()
    counts = table.groupby(RUN, sort=False)[SEGMENT].nunique()
    return {str(run): int(total - n) for run, n in counts.items() if n < total}


def _check_design(frame: pd.DataFrame, path: str | Path, columns: ScoresColumns) -> None:
    duplicated = frame.duplicated([RUN, SEGMENT], keep=False)
    if duplicated.any():
        rows = np.flatnonzero(duplicated.to_numpy())[:2]
        raise InputError(
            path,
            f"run '{frame[RUN].iloc[rows[0]]}' has segment "
            f"'{frame[SEGMENT].iloc[rows[0]]}' twice (lines {rows[0] + 2} and {rows[1] + 2}); "
            f"do the run columns {list(columns.run)} identify a run?",
        )
    for column, key in [(SYSTEM, RUN), *[(f, RUN) for f in columns.facets]]:
        _check_constant(frame, path, column, key)
    if columns.dev_score:  # one dev score per run: the first row must not win silently
        _check_constant(frame, path, DEV_SCORE, RUN, name=columns.dev_score)
    for prop in columns.properties:
        _check_constant(frame, path, prop, SEGMENT)


def _check_constant(
    frame: pd.DataFrame, path: str | Path, column: str, key: str, *, name: str | None = None
) -> None:
    """Refuse a ``column`` (the file's ``name``) that varies within a ``key``, naming the line."""
    counts = frame.groupby(key, sort=False)[column].nunique(dropna=False)
    varying = counts[counts > 1]
    if len(varying):
        values = frame.loc[frame[key] == varying.index[0], column]
        other = values.ne(values.iloc[0]) & ~(values.isna() & pd.isna(values.iloc[0]))
        line = int(values.index[int(np.flatnonzero(other.to_numpy())[0])]) + 2
        raise InputError(
            path,
            f"'{name or column}' must be constant within each {key}, but {key} "
            f"'{varying.index[0]}' has {int(varying.iloc[0])} different values",
            line=line,
            column=name or column,
        )
