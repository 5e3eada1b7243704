"""Scores mode: read an experiment that is already scored per segment (long format)."""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from infrepro.core.catalog import FRACTION, POINTS, RAW, Scale
from infrepro.core.vocabulary import DEV_SCORE, LOOK, RUN, SEGMENT, SYSTEM
from infrepro.io.errors import InputError, located
from infrepro.io.looks import look_values
from infrepro.io.names import check_names
from infrepro.io.properties import property_values
from infrepro.io.tables import separator_hint
from infrepro.io.text import require_file

LOG = logging.getLogger(__name__)
# A fraction-scale metric's scores lie within [-FRACTION_BOUND, FRACTION_BOUND] but for at most a
# share FRACTION_OUTSIDE of them (TER exceeds 1, rarely 2, on some segments; COMET and BLEURT may
# be negative): more outside is a 0-100 scale or a rating; points are refused when no more are.
FRACTION_BOUND = 2.0
FRACTION_OUTSIDE = 0.01
# Every score a whole number within [-RATING_BOUND, RATING_BOUND]: a rating (1-5, 1-7, 0-10).
RATING_BOUND = 10
SHOWN_VALUES = 3  # offending values a refusal names
COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zip": "zip"}
WANTED = "with commas (.csv) or tabs (.tsv)"  # how a scores file's fields must be separated
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
    look: str | None = None  # in which batch each run arrived (docs/method.md §4e.1)

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
            look=mapping.get("look"),
        )

    def named(self) -> list[tuple[str, str]]:
        """(option, column) for every column the mapping names, in the mapping's order."""
        pairs = [("segment", self.segment), (SYSTEM, self.system)]
        pairs += [("run", c) for c in self.run] + [("metrics", c) for c in self.metrics]
        pairs += [("facets", c) for c in self.facets] + [("properties", c) for c in self.properties]
        pairs += [("dev_score", self.dev_score)] if self.dev_score else []
        return pairs + ([("look", self.look)] if self.look else [])


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
            sep = _separator(name)
            frame = pd.read_csv(file, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(file, f"invalid UTF-8 ({err.reason}); files must be UTF-8") from None
    except pd.errors.EmptyDataError:
        raise InputError(file, "file is empty; expected a header line and rows of scores") from None
    except pd.errors.ParserError as err:
        hint = _header_hint(file, _separator(name))
        raise InputError(file, f"cannot parse: {_one_line(err)}{hint}") from None
    except (OSError, EOFError, zlib.error, pa.ArrowException) as err:
        raise InputError(file, f"cannot read {_format_of(name)}: {_one_line(err)}") from None
    check_names(
        [str(c) for c in frame.columns], file, "column", lines=[1] * frame.shape[1], formulas=False
    )
    if frame.empty:
        raise InputError(
            file,
            f"file has a header ({', '.join(map(str, frame.columns)) or 'no columns'}) but no "
            "rows of scores; expected one row per run and segment",
        )
    return frame


def _header_hint(file: Path, separator: str) -> str:
    """What ``separator_hint`` says of the file's header (rows that do not parse with the
    file's separator: a ';'-separated file with decimal commas), or nothing."""
    try:
        header = pd.read_csv(file, sep=separator, dtype=str, nrows=0, encoding="utf-8").columns
    except (ValueError, OSError, EOFError, zlib.error):
        return ""
    return separator_hint([str(c) for c in header], separator, WANTED)


def _separator(name: str) -> str:
    """The field separator of a text scores file, by its name: tab for .tsv and .txt, else
    comma."""
    return "\t" if name.endswith((".tsv", ".tsv.gz", ".txt", ".txt.gz")) else ","


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
    scale: Mapping[str, Scale | str | Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Read and validate a scores file into evaluation-table layout.

    Columns are renamed to ``run_id``, ``system``, ``segment_id``; facets, properties and metrics
    keep their names. A run is a distinct combination of ``columns.run`` values. Each metric's
    scores are checked against its declared ``scale`` (default fraction; :func:`check_scale`)
    and stored as the tables hold them: fractions as given, points and raw scores / 100.
    """
    raw = read_raw_scores(path)
    for option, column in columns.named():
        if column not in raw.columns:
            header = [str(c) for c in raw.columns]
            hint = ""
            if not str(path).lower().endswith(".parquet"):
                hint = separator_hint(header, _separator(str(path).lower()), WANTED, column)
            raise InputError(
                path,
                f"columns.{option} names '{column}', which the file lacks "
                f"(columns: {', '.join(header)}){hint}",
                column=column,
            )
    _check_lookalike_names(raw, path, columns)
    if columns.look:
        _check_look_role(columns, path)
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
        given = (scale or {}).get(metric)
        declared = given if isinstance(given, Scale | None) else Scale.from_config(given)
        values = _numeric(raw[metric], path, metric)
        note = check_scale(values, declared, path, metric)
        if note is not None:
            LOG.warning(note)
        out[metric] = values / (declared or Scale(FRACTION)).given_per_stored
    if columns.dev_score:
        out[DEV_SCORE] = _numeric(raw[columns.dev_score], path, columns.dev_score)
    if columns.look:
        lines = range(2, len(raw) + 2)  # line 1 is the header
        out[LOOK] = look_values(list(raw[columns.look]), path, lines, columns.look)
    _check_design(out, path, columns)
    return out


def check_scale(
    values: pd.Series, scale: Scale | None, path: str | Path, metric: str
) -> str | None:
    """Check scores against their scale; ``scale`` None: none declared (fraction, the default).

    - fraction: at most FRACTION_OUTSIDE of |x| > FRACTION_BOUND (0-100 scores, even with a
      median of 1, have more: the report would show them x 100);
    - points: more than that share outside (fractions would be shown / 100), and not every score
      a whole number within [-RATING_BOUND, RATING_BOUND] (ratings would be shown as points);
    - raw: every score within the declared [low, high].

    Scores outside a raw scale's bounds, and scores unlike fractions when no scale is declared,
    are refused, naming the file, a line, the column, the offending values and the option that
    fits them. A declared fraction or points scale wins (a 0-100 metric may score within
    [-2, 2]): scores unusual for it give a note saying so (returned, for a warning), else None.
    """
    numbers = values.to_numpy(dtype="float64")
    outside = np.abs(numbers) > FRACTION_BOUND
    bound = f"[{-FRACTION_BOUND:g}, {FRACTION_BOUND:g}]"
    declared = scale if scale is not None else Scale(FRACTION)
    if declared.name == RAW:
        assert declared.low is not None and declared.high is not None
        bad = (numbers < declared.low) | (numbers > declared.high)
        if bad.any():
            raise _scale_error(
                path,
                metric,
                f"{_count(bad, numbers)} lie outside its declared scale {declared}",
                (numbers, bad),
                _advice(numbers, metric),
            )
        return None
    largest = np.abs(numbers) == np.abs(numbers).max()
    if declared.name == FRACTION and outside.mean() > FRACTION_OUTSIDE:
        problem = (
            f"{_count(outside, numbers)} lie outside {bound}, where a fraction-scale metric "
            f"(0-1, shown x 100 as points) has at most {FRACTION_OUTSIDE * 100:g} % of its scores"
        )
        if scale is None:
            raise _scale_error(path, metric, problem, (numbers, outside), _advice(numbers, metric))
        return _scale_note(path, metric, problem, (numbers, outside), declared)
    if declared.name == POINTS and outside.mean() <= FRACTION_OUTSIDE:
        problem = f"{_count(~outside, numbers)} lie within {bound}, as fractions (0-1) do"
        advice = f"if they are fractions, remove scale.{metric} (fraction is the default)"
        return _scale_note(path, metric, problem, (numbers, largest), declared, advice)
    if declared.name == POINTS and _rating_like(numbers):
        problem = (
            f"every one of the {len(numbers)} scores is a whole number within "
            f"[{numbers.min():g}, {numbers.max():g}], as ratings are"
        )
        return _scale_note(path, metric, problem, (numbers, largest), declared)
    return None


def _scale_note(
    path: str | Path,
    metric: str,
    problem: str,
    offending: tuple[np.ndarray, np.ndarray],
    scale: Scale,
    advice: str | None = None,
) -> str:
    """A warning that scores look unusual for their declared ``scale``, which is used as
    declared: how a score is shown, and the option that would fit the scores instead."""
    numbers, mask = offending
    value = float(numbers[np.flatnonzero(mask)[0]])
    shown = value * 100.0 / scale.given_per_stored
    return located(
        path,
        f"scores of metric '{metric}': {problem}; e.g. {', '.join(_listed(numbers, mask))}; "
        f"the declared scale.{metric}: {scale} is used ({value:g} is shown as {shown:g} "
        f"points); {advice or _advice(numbers, metric)}",
        column=metric,
    )


def _rating_like(numbers: np.ndarray) -> bool:
    """Every score a whole number within [-RATING_BOUND, RATING_BOUND]."""
    return bool(np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) <= RATING_BOUND))


def _advice(numbers: np.ndarray, metric: str) -> str:
    """The option that fits these scores: a raw scale for ratings, points for other scores beyond
    the fraction range, fraction for scores within it."""
    if _rating_like(numbers):
        low, high = float(numbers.min()), float(numbers.max())
        return (
            f"if they are ratings, set scale: {{{metric}: {{raw: [{low:g}, {high:g}]}}}} with "
            "the rating scale's own bounds (shown as given, not as points)"
        )
    if (np.abs(numbers) > FRACTION_BOUND).mean() > FRACTION_OUTSIDE:
        return f"if they are on a 0-100 scale, set scale: {{{metric}: points}}"
    return f"if they are fractions (0-1), set scale: {{{metric}: fraction}} (the default)"


def _count(mask: np.ndarray, numbers: np.ndarray) -> str:
    return f"{int(mask.sum())} of {len(numbers)} scores"


def _listed(numbers: np.ndarray, mask: np.ndarray) -> list[str]:
    """The first SHOWN_VALUES offending values with their lines (line 1 is the header)."""
    return [f"{numbers[r]:g} (line {r + 2})" for r in np.flatnonzero(mask)[:SHOWN_VALUES]]


def _scale_error(
    path: str | Path,
    metric: str,
    problem: str,
    offending: tuple[np.ndarray, np.ndarray],
    advice: str,
) -> InputError:
    """``<file>:<line>: column '<metric>': scores of metric ...; e.g. <values (lines)>; advice``,
    at the first offending line."""
    numbers, mask = offending
    return InputError(
        path,
        f"scores of metric '{metric}': {problem}; e.g. {', '.join(_listed(numbers, mask))}; "
        f"{advice}",
        line=int(np.flatnonzero(mask)[0]) + 2,
        column=metric,
    )


def _check_lookalike_names(raw: pd.DataFrame, path: str | Path, columns: ScoresColumns) -> None:
    """Systems, segments, run-column values and facet levels that only look alike, or whose
    characters mislead (infrepro.io.names), are refused, naming both spellings and their lines;
    each column's distinct values are compared, in order of first appearance. The facet, metric
    and property names (columns of the tables) may not be spreadsheet formulas either."""
    for role, names in (
        ("facet", columns.facets),
        ("metric", columns.metrics),
        ("property", columns.properties),
    ):
        check_names(list(names), path, role, lines=[1] * len(names))
    roles = {columns.system: SYSTEM, columns.segment: "segment"}
    roles |= {f: "level" for f in columns.facets}
    roles |= {c: "value" for c in columns.run if c not in roles}
    for column, what in roles.items():
        first = _text(raw[column]).drop_duplicates()
        lines = [int(i) + 2 for i in first.index]  # line 1 is the header
        formulas = what != "segment"  # segment ids are in no table
        check_names(list(first), path, what, lines=lines, column=column, formulas=formulas)


def _check_look_role(columns: ScoresColumns, path: str | Path) -> None:
    """The look column is no facet, metric, property, segment, system or dev score (it may be
    one of the run columns: a run can be named by its date); no other column may take its
    internal name ``look``."""
    roles = [(o, c) for o, c in columns.named() if o not in ("run", "look")]
    for option, column in roles:
        if column == columns.look:
            raise InputError(
                path,
                f"columns.look names '{column}', which columns.{option} names too; the look "
                "column says in which batch a run arrived and plays no other role",
                column=column,
            )
        if column == LOOK:
            raise InputError(
                path,
                f"columns.{option} names '{LOOK}', the name infrepro gives the look column "
                f"('{columns.look}', columns.look); rename that column",
                column=column,
            )


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
    if columns.look:  # a run arrives in one batch
        _check_constant(frame, path, LOOK, RUN, name=columns.look)
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
