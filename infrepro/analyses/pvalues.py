"""p-values that never print as 0: chi-square tails and Holm adjustment in log10 space."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special, stats

LN10 = math.log(10.0)


def chi2_log10_sf(statistic: float, df: int) -> float:
    """log10 of the chi-square survival function, accurate far below the float range."""
    if df <= 0:
        return 0.0
    value = float(stats.chi2.logsf(max(statistic, 0.0), df))
    if math.isfinite(value):
        return value / LN10
    return _log_upper_gamma_tail(df / 2.0, statistic / 2.0) / LN10


def _log_upper_gamma_tail(s: float, x: float) -> float:
    """log Q(s, x) for large x by the asymptotic series of the upper incomplete gamma function."""
    total, term = 1.0, 1.0
    for n in range(1, 60):
        term *= (s - n) / x
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
    return (s - 1.0) * math.log(x) - x + math.log(total) - float(special.gammaln(s))


def normal_log10_two_sided(z: float) -> float:
    """log10 of the two-sided normal p-value of a z statistic."""
    return (float(stats.norm.logsf(abs(z))) + math.log(2.0)) / LN10


def format_p(log10_p: float) -> str:
    """A p-value as text with 4 significant digits, e.g. ``3.959e-08`` or ``1.2e-1089``."""
    if math.isnan(log10_p):
        return "NA"
    if log10_p == -math.inf:
        return "<1e-300"
    if log10_p >= -300:
        return f"{10**log10_p:.4g}"
    exponent = math.floor(log10_p)
    mantissa = 10 ** (log10_p - exponent)
    if mantissa >= 9.9995:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.4g}e{exponent:d}"


def holm_log10(log10_p: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (log10), identical to statsmodels' ``multipletests(method="holm")``.

    Computed in log space so that adjusted values of astronomically small p-values stay non-zero.
    """
    values = np.asarray(log10_p, dtype="float64")
    m = values.size
    if m == 0:
        return values
    order = np.argsort(values, kind="stable")
    adjusted = np.empty(m)
    running = -np.inf
    for rank, index in enumerate(order):
        candidate = min(0.0, values[index] + math.log10(m - rank))
        running = max(running, candidate)
        adjusted[index] = running
    return adjusted
