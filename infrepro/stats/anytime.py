"""Anytime-valid looks (docs/method.md §4e.7): a t confidence sequence (Lai 1976) on differences
of runs paired in arrival order, valid however often the analysis is rerun. Pure functions on
numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


# -- anytime-valid mode: a t confidence sequence (§4e.7) ----------------------------------------
@dataclass(frozen=True)
class ConfidenceSequence:
    """Per number of pairs n = 2 ... m: the mean difference and the running intersection of
    the intervals so far (``lower``, ``upper``; infinite while the mixture cannot exclude
    anything yet), valid simultaneously over n at level 1 − α."""

    n: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def t_boundary(n: np.ndarray | int, alpha: float, scale: float) -> np.ndarray:
    """The |t| (on n − 1 df) above which the scale-invariant mixture e-value of n observations
    reaches 1/α (Lai 1976; Wang & Ramdas 2023).

    With ν = n − 1, a = 1 + n c² (c = ``scale``: the prior SD of the standardized effect μ/σ)
    the e-value is E_n(t) = a^{−1/2} [(1 + t²/ν) / (1 + t²/(a ν))]^{n/2}, the Bayes factor of
    N(0, c²) on μ/σ against μ = 0 with the right-Haar prior on σ: a likelihood ratio of the
    scale-maximal invariant, hence a nonnegative martingale under μ = 0 whatever σ, and
    P(∃ n: E_n ≥ 1/α) ≤ α (Ville). E_n = 1/α at t²/ν = (q − 1)/(1 − q/a), q = (a/α²)^{1/n};
    inf when q ≥ a (no t reaches 1/α)."""
    n = np.asarray(n, dtype=float)
    a = 1.0 + n * scale**2
    q = np.exp((np.log(a) - 2.0 * np.log(alpha)) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(q < a, (q - 1.0) / (1.0 - q / a), np.inf)
    return np.sqrt((n - 1.0) * x)


def pairs_for_a_bound(alpha: float, scale: float, most: int = 100_000) -> int:
    """The fewest pairs n at which ``t_boundary`` is finite, i.e. q < a, equivalently
    (n − 1) log(1 + n c²) > −2 log α (increasing in n): below it the sequence is (−∞, ∞)
    however large the difference (with c = 1.5: 4 pairs at α = 0.05, 5 at 0.0125)."""
    n = 2
    while n < most and (n - 1) * np.log1p(n * scale**2) <= -2.0 * np.log(alpha):
        n += 1
    return n


def log_t_evalue(t: np.ndarray | float, n: np.ndarray | int, scale: float) -> np.ndarray:
    """log E_n(t) of ``t_boundary``'s mixture: −½ log a + (n/2) [log(1 + t²/ν) −
    log(1 + t²/(a ν))], ν = n − 1, a = 1 + n c² (+inf at |t| = inf)."""
    t, n = np.asarray(t, dtype=float), np.asarray(n, dtype=float)
    a, nu = 1.0 + n * scale**2, n - 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        x = t**2 / nu
        inner = np.where(np.isinf(x), np.log(a), np.log1p(x) - np.log1p(x / a))
    return -0.5 * np.log(a) + 0.5 * n * inner


def anytime_p(differences: Sequence[float], scale: float) -> np.ndarray:
    """The anytime-valid p of Δ = 0 after n = 2 ... m differences: min(1, 1 / max_{i ≤ n}
    E_i(t_i)), t_i the t of 0 after i (Ville: P(∃ n: p_n ≤ α) ≤ α under Δ = 0). It is at most
    α exactly when the running intersection of ``confidence_sequence`` at level 1 − α excludes
    0 (every CS_i is {Δ: E_i < 1/α})."""
    d = np.asarray(differences, dtype=float)
    n = np.arange(2, d.size + 1)
    if n.size == 0:
        return np.empty(0)
    mean = np.cumsum(d)[1:] / n
    sd = np.sqrt(np.maximum(np.cumsum(d**2)[1:] - n * mean**2, 0.0) / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / (sd / np.sqrt(n)), np.where(mean == 0, 0.0, np.inf))
    best = np.maximum.accumulate(log_t_evalue(t, n, scale))
    return np.minimum(1.0, np.exp(-best))


def paired_differences(runs_a: Sequence[float], runs_b: Sequence[float]) -> np.ndarray:
    """B − A differences of runs paired in arrival order (the i-th run of B with the i-th of
    A); the longer system's surplus runs wait for their partners. With exchangeable runs the
    pairs are independent N(δ, v_A + v_B), whatever the two run variances."""
    m = min(len(runs_a), len(runs_b))
    return np.asarray(runs_b[:m], dtype=float) - np.asarray(runs_a[:m], dtype=float)


def confidence_sequence(
    differences: Sequence[float], alpha: float, scale: float
) -> ConfidenceSequence:
    """The t confidence sequence for the mean of i.i.d. normal differences (unknown variance):
    CS_n = d̄_n ± t*_n s_n / √n with t*_n = ``t_boundary(n, α, c)``, and its running
    intersection, which keeps the coverage (1 − α simultaneously over n)."""
    d = np.asarray(differences, dtype=float)
    n = np.arange(2, d.size + 1)
    if n.size == 0:
        empty = np.empty(0)
        return ConfidenceSequence(n, empty, empty, empty)
    csum = np.cumsum(d)[1:]
    mean = csum / n
    sq = np.cumsum(d**2)[1:]
    sd = np.sqrt(np.maximum(sq - n * mean**2, 0.0) / (n - 1))
    half = t_boundary(n, alpha, scale) * sd / np.sqrt(n)
    with np.errstate(invalid="ignore"):
        lower = np.maximum.accumulate(np.where(np.isfinite(half), mean - half, -np.inf))
        upper = np.minimum.accumulate(np.where(np.isfinite(half), mean + half, np.inf))
    return ConfidenceSequence(n, mean, lower, upper)
