"""The tidy output tables of the analyses (``results/tables/*.csv``) and their columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from infrepro.vocabulary import TABLE_SPECS, TABLES


def conform(name: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """A table with exactly its declared columns, in order (empty if ``frame`` is None); a
    table with experiment-dependent columns (``extra``) as it is."""
    spec = TABLE_SPECS[name]
    columns = None if spec.extra else list(spec.names)
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
