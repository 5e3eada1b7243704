"""User data properties (a test-set column in raw mode, a scores-file column in scores mode) as
the models see them: numbers when every present cell is one, text otherwise.

A missing cell (empty, ``NA``, ``NaN``) of a numeric property is a missing value: its segment
drops out of that property's models, and the analyses count it in their diagnostics. It never
turns the property into a categorical one. A number that is not finite, or too large to fit in
double precision with its squares, is refused naming the file, the column and the line (or the
segment), before any job runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from infrepro.io.errors import InputError

MISSING_CELLS = frozenset({"", "NA", "NaN", "nan"})
MAX_PROPERTY_MAGNITUDE = 1e12  # as for scores: squares and sums stay exact enough


def _cells(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if v is None else str(v)).reset_index(drop=True)


def property_values(
    values: pd.Series,
    categorical: bool = False,
    *,
    path: str | Path | None = None,
    column: str = "",
    lines: Sequence[int] | None = None,
    segments: Sequence[str] | None = None,
) -> pd.Series:
    """Float64 (NaN where a cell is missing) when some cell and every present cell is a number
    and the property is not declared ``categorical``; else the cells as text. Raises InputError
    for a number that is not finite or beyond MAX_PROPERTY_MAGNITUDE (``lines`` or ``segments``
    locate it)."""
    text = _cells(values)
    if categorical:
        return text.astype(object)
    missing = text.str.strip().isin(MISSING_CELLS)
    numbers = pd.to_numeric(text.where(~missing, None), errors="coerce")
    if missing.all() or numbers[~missing].isna().any():
        return text.astype(object)
    too_large = ~missing & ~(numbers.abs() <= MAX_PROPERTY_MAGNITUDE)
    if too_large.any():
        row = int(np.flatnonzero(too_large.to_numpy())[0])
        where = f" (segment '{segments[row]}')" if segments is not None else ""
        raise InputError(
            path,
            f"property value '{text[row]}'{where} is not a finite number of magnitude at most "
            f"{MAX_PROPERTY_MAGNITUDE:g}; list the column under property_options.categorical "
            "if it is a label",
            line=None if lines is None else int(lines[row]),
            column=column,
        )
    return numbers.astype("float64")
