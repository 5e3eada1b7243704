"""Small lookups on the report tables."""

from __future__ import annotations

import numpy as np
import pandas as pd


def select(frame: pd.DataFrame, **equals: object) -> pd.DataFrame:
    """Rows whose columns equal the given values, compared as text (labels are read as text, so
    empty cells are ``''``)."""
    if frame.empty:
        return frame
    mask = np.ones(len(frame), dtype=bool)
    for column, value in equals.items():
        if column not in frame:
            return frame.iloc[0:0]
        series = frame[column]
        if not (pd.api.types.is_string_dtype(series) or series.dtype == object):
            series = series.astype(str)
        mask &= (series == str(value)).to_numpy(dtype=bool)
    return frame[mask]


def first(frame: pd.DataFrame, **equals: object) -> pd.Series | None:
    """The first matching row, or None."""
    found = select(frame, **equals)
    return None if found.empty else found.iloc[0]


def pair(baseline: str, other: str) -> str:
    """The ``subset`` label of a pairwise system comparison."""
    return f"{baseline} vs {other}"


def ordered(values: list[str], order: list[str]) -> list[str]:
    """``values`` in the given order first, the rest sorted (numerically where possible)."""
    known = [v for v in order if v in values]
    rest = sorted(set(values) - set(known), key=_natural)
    return known + rest


def _natural(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
