"""Krippendorff's alpha beside phi (docs/method.md §4d.3; thesis §3.3.1), by the maintained
``krippendorff`` package.

Units are segments, coders a system's runs (rating passes), values the metric:

    alpha = 1 - D_o / D_e,
    D_o = (1/n) sum_{c,k} o_ck delta2_ck,   D_e = 1/(n(n-1)) sum_{c,k} n_c n_k delta2_ck,

with o_ck the coincidence matrix (pairs of values within a unit, each unit weighted by
1/(m_u - 1)), n_c its margins, n the pairable values; delta2 is [c != k] (nominal), (c - k)^2
(interval) or the ordinal distance of the package.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd

from infrepro.core.vocabulary import RUN, SEGMENT

LEVELS = ("nominal", "ordinal", "interval", "ratio")
# The package builds a V x V coincidence matrix over the V distinct values (and more: 1.6 GiB for
# 1,800 values of the bundled example, 5 GiB for 1,900); continuous scores have thousands. Above
# this many, interval alpha uses its O(N) form (equal to the package's: a test).
PACKAGE_MAX_VALUES = 200


def reliability_matrix(rows: pd.DataFrame, value: str) -> np.ndarray:
    """Coders (runs) x units (segments), NaN where a run did not score a segment; rows and
    columns in sorted order (alpha does not depend on it)."""
    table = rows.pivot_table(index=RUN, columns=SEGMENT, values=value, aggfunc="first")
    return table.sort_index().sort_index(axis=1).to_numpy(dtype=float)


def krippendorff_alpha(matrix: np.ndarray, level: str = "interval") -> float:
    """alpha of a coders x units matrix at a level of measurement; NaN when it is undefined
    (fewer than two distinct values, or no unit with two values: D_e = 0)."""
    if level not in LEVELS:
        raise ValueError(f"level of measurement '{level}': choose from {', '.join(LEVELS)}")
    values = np.asarray(matrix, dtype=float)
    pairable = np.sum(~np.isnan(values), axis=0) >= 2
    observed = values[:, pairable]
    distinct = np.unique(observed[~np.isnan(observed)]).size
    if distinct < 2:
        return float("nan")
    if level == "interval" and distinct > PACKAGE_MAX_VALUES:
        return interval_alpha(observed)
    return float(krippendorff.alpha(reliability_data=observed, level_of_measurement=level))


def _pair_squares(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """sum over ordered pairs i != j of (v_i - v_j)^2 = 2 m sum v^2 - 2 (sum v)^2 (NaN skipped)."""
    m = np.sum(~np.isnan(values), axis=axis)
    return 2.0 * m * np.nansum(values**2, axis=axis) - 2.0 * np.nansum(values, axis=axis) ** 2


def interval_alpha(matrix: np.ndarray) -> float:
    """Interval alpha without the coincidence matrix (units with >= 2 values):
    D_o = (1/n) sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1),
    D_e = 1/(n(n-1)) sum_{i != j} (v_i - v_j)^2 over all pairable values."""
    values = np.asarray(matrix, dtype=float)
    m = np.sum(~np.isnan(values), axis=0)
    values = values[:, m >= 2]
    m = m[m >= 2]
    n = float(m.sum())
    observed = float(np.sum(_pair_squares(values, axis=0) / (m - 1))) / n
    expected = float(_pair_squares(values[~np.isnan(values)])) / (n * (n - 1))
    return 1.0 - observed / expected
