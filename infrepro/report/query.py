"""Small lookups on the report tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from infrepro.plumbing.memo import FrameMemo


def select(frame: pd.DataFrame, **equals: object) -> pd.DataFrame:
    """Rows whose columns equal the given values, compared as text (labels are read as text, so
    empty cells are ``''``)."""
    if frame.empty:
        return frame
    mask = np.ones(len(frame), dtype=bool)
    for column, value in equals.items():
        if column not in frame:
            return frame.iloc[0:0]
        hit = np.zeros(len(frame), dtype=bool)
        hit[_positions(frame, column).get(str(value), _NONE)] = True
        mask &= hit
    return frame[mask]


_NONE = np.zeros(0, dtype=np.intp)
# per table: column -> text value -> row positions (a report looks up the same big tables
# thousands of times, a card, panel or row at a time, each a full scan before)
_POSITIONS = FrameMemo()


def _positions(frame: pd.DataFrame, column: str) -> dict[str, np.ndarray]:
    """Where each text value of ``column`` occurs (values compared as ``select`` compares
    them: non-text columns as their text, text columns by equality with the string)."""
    columns = _POSITIONS.of(frame)
    if column not in columns:
        series = frame[column]
        if not (pd.api.types.is_string_dtype(series) or series.dtype == object):
            series = series.astype(str)
        codes, uniques = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=True)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
        columns[column] = {
            u: order[bounds[i] : bounds[i + 1]] for i, u in enumerate(uniques) if isinstance(u, str)
        }
    return columns[column]


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
