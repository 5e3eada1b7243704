"""p-values that never print as 0: chi-square and t tails and Holm adjustment in log10 space."""

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
    """log10 of the two-sided normal p-value of a z statistic. ``log_ndtr(-|z|)`` is what
    ``stats.norm.logsf(|z|)`` computes, without its argument handling (a tenth of a
    millisecond per call; a meta-parameter job makes thousands)."""
    return (float(special.log_ndtr(-abs(z))) + math.log(2.0)) / LN10


def t_log10_two_sided(t: float, df: float) -> float:
    """log10 of the two-sided t p-value 2 P(T_df > |t|), never -inf.

    Where scipy's log tail underflows: p = I_x(a, b), the regularized incomplete beta with
    x = ν / (ν + t²), a = ν/2, b = 1/2, by its hypergeometric series
    I_x(a, b) = x^a (1 − x)^b / (a B(a, b)) · Σ_k (a + b)_k / (a + 1)_k x^k (every term ratio
    below x < 1), in logs."""
    t = abs(t)
    nu = df
    log_sf = float(stats.t.logsf(t, nu))
    if math.isfinite(log_sf):
        return (log_sf + math.log(2.0)) / LN10
    a, b = nu / 2.0, 0.5
    x = nu / (nu + t * t)
    total, term, k = 1.0, 1.0, 0
    while term > 1e-17 * total and k < 100_000:
        term *= (a + b + k) / (a + 1.0 + k) * x
        total += term
        k += 1
    log_1mx = math.log(t * t) - math.log(nu + t * t)
    log_p = a * math.log(x) + b * log_1mx - math.log(a) - float(special.betaln(a, b))
    return (log_p + math.log(total)) / LN10


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
