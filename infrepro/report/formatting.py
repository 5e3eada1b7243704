"""Number formatting for the report: means in points, variances in scientific notation.

Scores are stored as fractions; the report shows them in points (x 100) as the papers do, and
variance components on the stored scale (docs/method.md §2). p-values are shown exactly as the
tables give them (text that never reads 0).
"""

from __future__ import annotations

import math

import numpy as np

MINUS = "\u2212"
POINTS = 100.0


def is_missing(value: object) -> bool:
    """True for None, NaN and empty strings."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() in ("", "nan", "NaN", "NA")
    try:
        return math.isnan(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def log10_value(value: object) -> float:
    """A table cell as a float; NaN when missing or not a number."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def is_significant(log10_p: object, alpha: float) -> bool:
    """The report's one significance rule: log10 p < log10 alpha. A missing p (None, NaN, empty,
    not a number) is never significant; p = 0 (log10 p = -inf) is."""
    value = log10_value(log10_p)
    return not math.isnan(value) and value < math.log10(alpha)


def _signed(text: str) -> str:
    return MINUS + text[1:] if text.startswith("-") else text


def flag(value: object) -> bool | None:
    """A boolean cell as a bool (Python's or numpy's), None for anything else (missing)."""
    return bool(value) if isinstance(value, bool | np.bool_) else None


def yes_no(value: object) -> str:
    """``yes``/``no`` for a boolean cell, empty otherwise."""
    return {True: "yes", False: "no", None: ""}[flag(value)]


def fixed(value: object, digits: int = 2, *, sign: bool = False) -> str:
    """A number with fixed decimals, a true minus sign, optionally an explicit plus."""
    if is_missing(value):
        return "–"
    number = float(value)  # type: ignore[arg-type]
    if math.isinf(number):  # an interval with no bound yet (an early look, §4e.7)
        return MINUS + "∞" if number < 0 else ("+∞" if sign else "∞")
    if number == 0:
        number = 0.0  # no negative zero
    text = f"{number:+.{digits}f}" if sign else f"{number:.{digits}f}"
    if float(text) == 0 and sign:
        text = f"{0:.{digits}f}"
    return _signed(text)


def points(value: object, digits: int = 2, *, sign: bool = False) -> str:
    """A score stored as a fraction, shown in points (x 100)."""
    if is_missing(value):
        return "–"
    return fixed(float(value) * POINTS, digits, sign=sign)  # type: ignore[arg-type]


def scientific(value: object, digits: int = 3) -> str:
    """Scientific notation, e.g. ``2.020e-02``, for variance components."""
    if is_missing(value):
        return "–"
    return _signed(f"{float(value):.{digits}e}")  # type: ignore[arg-type]


def significant(value: object, digits: int = 3) -> str:
    """A number with a few significant digits (slopes, property values, statistics)."""
    if is_missing(value):
        return "–"
    return _signed(f"{float(value):.{digits}g}")  # type: ignore[arg-type]


def integer(value: object) -> str:
    """A count."""
    if is_missing(value):
        return "–"
    return f"{int(float(value)):d}"  # type: ignore[arg-type]


def p_text(value: object) -> str:
    """A p-value as the table gives it (already formatted, never 0)."""
    if is_missing(value):
        return "–"
    return str(value).strip()


def sort_value(value: object) -> float | None:
    """The numeric value used to sort a table column (None when missing or not a number)."""
    if is_missing(value):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
