"""The tidy output tables of the analyses (``results/tables/*.csv``) and their columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from .classical import CLASSICAL_COLUMNS, SUMMARY_COLUMNS
from .conditional import PREDICTION_COLUMNS, SLOPE_COLUMNS
from .effects import CONTRAST_COLUMNS, MEANS_COLUMNS
from .fitlog import DIAGNOSTIC_COLUMNS, QQ_COLUMNS
from .glrt import GLRT_COLUMNS
from .metaparam import IMPORTANCE_COLUMNS
from .smalltests import TEST_COLUMNS
from .variance import DSTUDY_COLUMNS, RELIABILITY_COLUMNS, VC_COLUMNS

TABLE_COLUMNS: dict[str, list[str] | None] = {
    "glrt": GLRT_COLUMNS,
    "tests": TEST_COLUMNS,
    "means": MEANS_COLUMNS,
    "contrasts": CONTRAST_COLUMNS,
    "slopes": SLOPE_COLUMNS,
    "predictions": PREDICTION_COLUMNS,
    "variance_components": VC_COLUMNS,
    "reliability": RELIABILITY_COLUMNS,
    "dstudy": DSTUDY_COLUMNS,
    "importance": IMPORTANCE_COLUMNS,
    "classical": CLASSICAL_COLUMNS,
    "run_summary": SUMMARY_COLUMNS,
    "run_means": None,  # its facet columns depend on the experiment
    "diagnostics": DIAGNOSTIC_COLUMNS,
    "qq": QQ_COLUMNS,
}
TABLES = tuple(TABLE_COLUMNS)


def conform(name: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """A table with exactly its documented columns, in order (empty if ``frame`` is None)."""
    columns = TABLE_COLUMNS[name]
    if frame is None or frame.empty:
        return pd.DataFrame(columns=columns if columns is not None else ["metric"])
    if columns is None:
        return frame.reset_index(drop=True)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"table {name} lacks columns {missing}")
    return frame[columns].reset_index(drop=True)


def combine(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate the per-job parts of one table (skipping empty parts)."""
    frames = [p for p in parts if not p.empty]
    if not frames:
        return next(iter(parts), pd.DataFrame())
    return pd.concat(frames, ignore_index=True)


def complete(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table name with a conforming frame, empty where an analysis writes nothing."""
    return {name: conform(name, tables.get(name)) for name in TABLES}
