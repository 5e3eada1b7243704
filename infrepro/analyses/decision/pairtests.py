"""The marginal test of each pair in the decision (docs/method.md §4c.4, §4b.11, §4b.12).

A pair of two multi-run systems (``systems``) is tested by Welch's statistic on model M's
contrast, referred to the p-value calibrated over a band of run-mean SD ratios (§4b.11), with
each system's run-mean variance moderated across systems where at least three have two or more
runs (§4b.12; a variance the prior does not support is not shrunk below its own), and by Berger
and Boos' p (valid at any ratio) where the option asks for it or the data put the ratio outside
the band. A multi-run system against a single output is the one-sample t of its run means
(§4c.4); two single outputs keep M's t test with its Kenward-Roger df. Every test knows its
marginal p, its critical value at any marginal level (the interval that agrees with it) and its
power.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from infrepro.analyses.common.data import MetricData, run_means
from infrepro.core.decisions import df_number
from infrepro.core.vocabulary import RUN, SYSTEM, dummy_term
from infrepro.lmm import LmmResult
from infrepro.stats.calibrated import (
    DEFAULT_BAND,
    DEFAULT_BETA,
    DEFAULT_MAX_PRIOR_DF,
    DEFAULT_SUPPORT,
    band_log10_p,
    berger_boos_log10_p,
    critical_t,
    power,
    ratio_interval,
    supported_variances,
)

T_TEST, BAND, BERGER_BOOS, RUN_MEANS = "t", "calibrated", "Berger-Boos", "run means"
MIN_MODERATED = 3  # systems with two or more runs before their run variances borrow strength
RATIO_LEVEL = 0.95  # the interval of the run-SD ratio the records show


@dataclass(frozen=True)
class RunVariance:
    """``analyses.run_variance``: the band of run-mean SD ratios the calibrated test holds its
    level over, Berger-Boos on for every pair (else only where the data leave the band), its
    β, and the moderation across systems with its prior-df cap."""

    band: float = DEFAULT_BAND
    berger_boos: bool = False
    beta: float = DEFAULT_BETA
    moderate: bool = True
    max_prior_df: float = DEFAULT_MAX_PRIOR_DF

    @classmethod
    def of(cls, options: Mapping[str, object]) -> RunVariance:
        return cls(
            band=float(options["band"]),  # type: ignore[arg-type]
            berger_boos=bool(options["berger_boos"]),
            beta=float(options["beta"]),  # type: ignore[arg-type]
            moderate=bool(options["moderate"]),
            max_prior_df=float(options["max_prior_df"]),  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class Variances:
    """The run-mean variances of the systems with two or more runs: v̂_k from model M (run
    variance + residual / segments per run), the ones the tests use (moderated or not), their
    df, the prior df d0 (NaN when not moderated), the sample variance of each system's run
    means (``spread``: what the shown run-SD ratio compares, §4c.5), and the systems whose
    variance the prior does not support (``unsupported``: not shrunk below their own, §4b.12)."""

    observed: dict[str, float]
    used: dict[str, float]
    df: dict[str, float]
    prior_df: float
    spread: dict[str, float]
    unsupported: tuple[str, ...] = ()


def run_term(system: str) -> str:
    """The key of a system's run variance in a fit's reported components."""
    return dummy_term(SYSTEM, system, RUN).removeprefix("(0 + ").removesuffix(")")


def variances(
    fitted: LmmResult, data: MetricData, runs: Mapping[str, int], options: RunVariance
) -> Variances:
    """v̂_k = σ̂²_run,k + σ̂²_res / m_k (m_k: the mean number of segments of k's runs) for every
    system with two or more runs, moderated (limma's fit, prior df capped) when at least
    MIN_MODERATED have them and ``options.moderate``; a variance above the prior's
    DEFAULT_SUPPORT quantile is not shrunk below its own (``supported_variances``)."""
    components = fitted.reported_components
    residual = float(components["Residual"])
    rows = data.evaluation.groupby(SYSTEM, observed=True).size()
    multi = [s for s in data.systems if runs[s] >= 2]
    observed = {
        s: float(components[run_term(s)]) + residual / (float(rows[s]) / runs[s]) for s in multi
    }
    df = {s: float(runs[s] - 1) for s in multi}
    means = run_means(data).groupby(SYSTEM, observed=True)["mean"]
    spread = {s: float(means.get_group(s).var(ddof=1)) for s in multi}
    if not options.moderate or len(multi) < MIN_MODERATED:
        return Variances(observed, dict(observed), df, math.nan, spread)
    moderated, kept = supported_variances(
        np.array([observed[s] for s in multi]),
        np.array([df[s] for s in multi]),
        options.max_prior_df,
        DEFAULT_SUPPORT,
    )
    used = {s: float(v) for s, v in zip(multi, moderated.var_post, strict=True)}
    post = {s: float(f) for s, f in zip(multi, moderated.df_post, strict=True)}
    unsupported = tuple(s for s, k in zip(multi, kept, strict=True) if k)
    return Variances(observed, used, post, float(moderated.d0), spread, unsupported)


@dataclass(frozen=True)
class Ratio:
    """The run-mean SD ratio sqrt(v̂_system / v̂_reference) with its 95 % interval, and whether
    the (1 − β) interval lies outside the band (the data put the ratio outside it)."""

    ratio: float
    lower: float
    upper: float
    outside: bool

    def beyond(self, band: float) -> bool:
        """Whether the 95 % interval lies wholly outside the band (a warning sign short of the
        (1 − β) interval that ``outside`` tests)."""
        return self.upper < 1.0 / band or self.lower > band


def ratio_of(
    a: str, b: str, runs: Mapping[str, int], var: Variances, options: RunVariance
) -> Ratio:
    """The run-mean SD ratio of b to a from the SDs of their run means with their own df
    (runs − 1) and its 95 % F interval; whether the (1 − β) interval of the ratio of M's
    run-mean variances (those the test uses) misses the band altogether (§4c.5). M's variance
    of a system at the boundary is the pooled residual's floor, not its runs' spread: a system
    whose run means are all equal has the ratio 0 (∞ as the reference, NaN when both are)."""
    fa, fb = float(runs[a] - 1), float(runs[b] - 1)
    sa, sb = max(var.spread[a], 0.0), max(var.spread[b], 0.0)
    lo, hi = ratio_interval(sa, fa, sb, fb, 1.0 - RATIO_LEVEL)
    ratio = math.sqrt(sb / sa) if sa > 0 else (math.inf if sb > 0 else math.nan)
    va, vb = max(var.observed[a], 0.0), max(var.observed[b], 0.0)
    wide_lo, wide_hi = ratio_interval(va, fa, vb, fb, options.beta)
    outside = wide_hi < 1.0 / options.band**2 or wide_lo > options.band**2
    return Ratio(ratio, math.sqrt(lo), math.sqrt(hi), outside)


@dataclass(frozen=True)
class PairTest:
    """A pair's marginal test: the statistic t (in the direction of the improvement), the SE
    its interval uses, the two-sided p, and what it needs to invert itself and give its power:
    the kind (``t``, ``calibrated``, ``Berger-Boos``), the df of a t test, the run counts,
    variances and their df, the band and β of a calibrated one, and for a calibrated test
    Berger and Boos' p of the same statistic (``any_ratio_log10_p``: whether its verdict needs
    the band, §4c.5)."""

    name: str
    kind: str
    t: float
    se: float
    log10_p: float
    df: float = math.nan
    n: tuple[int, int] = (0, 0)
    f: tuple[float, float] = (math.nan, math.nan)
    v: tuple[float, float] = (math.nan, math.nan)
    band: float = DEFAULT_BAND
    beta: float = DEFAULT_BETA
    any_ratio_log10_p: float = math.nan  # a calibrated test's Berger-Boos p (valid at any ratio)

    def critical(self, level: float) -> float:
        """The |t| at which the marginal p equals ``level``: the interval estimate ± it · se
        excludes 0 exactly when the test rejects at that level."""
        if self.kind in (T_TEST, RUN_MEANS):
            return float(stats.t.isf(level / 2.0, self.df))
        if self.kind == BAND:
            return critical_t(level, *self.n, self.band, *self.f)
        target = math.log10(level)

        def gap(c: float) -> float:
            return berger_boos_log10_p(c, *self.n, *self.v, self.band, self.beta, *self.f) - target

        upper = critical_t(level, *self.n, math.inf, *self.f) * 2.0 + 1.0
        return float(optimize.brentq(gap, 0.0, upper, xtol=1e-12))

    def power(self, effect: float, level: float) -> float:
        """The probability of a significant result in the direction of a true improvement of
        ``effect`` (stored scale) at marginal ``level``: noncentral t for a t test; the
        calibrated test's own (§4b.11); for Berger-Boos, Hsu's test's (a lower bound: its p is
        at least Hsu's only where β is exceeded)."""
        if not math.isfinite(effect):
            return math.nan
        if self.kind in (T_TEST, RUN_MEANS):
            return float(stats.nct.sf(self.critical(level), self.df, effect / self.se))
        band = self.band if self.kind == BAND else math.inf
        return power(effect, *self.v, *self.n, level, band, *self.f).directional


def t_test(improvement: float, se: float, df: float, method: str) -> PairTest:
    """The t test of a contrast with its Kenward-Roger (or Satterthwaite, ``method``) df."""
    t = improvement / se
    log10_p = (float(stats.t.logsf(abs(t), df)) + math.log(2.0)) / math.log(10.0)
    return PairTest(f"t with {method} df {df_number(df)}", T_TEST, t, se, log10_p, df=df)


def run_means_test(
    improvement: float, multi: str, runs: Mapping[str, int], var: Variances
) -> PairTest:
    """A multi-run system against a single output (§4c.4): Welch's statistic with the single
    side fixed, i.e. the one-sample t of the multi-run system's run means against that output,
    SE² = ṽ / n (its run-mean variance from M, moderated where the systems' are) with ṽ's df
    (runs − 1, or the moderated posterior df). Exact at any size of the run variance for
    normal run means: the df is the runs', never the residual's, even when M's fitted run
    variance is 0 (where M's own df would be the residual's)."""
    n, v, f = int(runs[multi]), var.used[multi], var.df[multi]
    se = math.sqrt(max(v / n, 1e-300))
    t = improvement / se
    log10_p = (float(stats.t.logsf(abs(t), f)) + math.log(2.0)) / math.log(10.0)
    moderated = (
        "" if math.isnan(var.prior_df) else f", moderated (prior df {df_number(var.prior_df)})"
    )
    name = f"t on the run means, df {df_number(f)}{moderated}"
    return PairTest(name, RUN_MEANS, t, se, log10_p, df=f, n=(n, 1), f=(f, math.nan), v=(v, 0.0))


def calibrated_test(
    improvement: float,
    se: float,
    a: str,
    b: str,
    runs: Mapping[str, int],
    var: Variances,
    options: RunVariance,
    outside: bool,
) -> PairTest:
    """Welch's statistic on M's contrast for two multi-run systems a (reference) and b: its SE
    with each system's run-mean variance replaced by the one the tests use (moderated or not),
    referred to the band-calibrated p (§4b.11) with their df, or Berger and Boos' p where
    ``options.berger_boos`` or the data put the ratio ``outside`` the band; Berger and Boos' p
    is kept beside the band's, to tell whether a verdict rests on the band (§4c.5)."""
    n = (int(runs[a]), int(runs[b]))
    shift = sum((var.used[s] - var.observed[s]) / runs[s] for s in (a, b))
    se_used = math.sqrt(max(se**2 + shift, 1e-300))
    t = improvement / se_used
    f = (var.df[a], var.df[b])
    v = (var.used[a], var.used[b])
    prior = df_number(var.prior_df)
    moderated = "" if math.isnan(var.prior_df) else f", moderated (prior df {prior})"
    band = f"run-mean SD ratio ≤ {options.band:g}"
    if options.berger_boos or outside:
        log10_p = berger_boos_log10_p(t, *n, *v, options.band, options.beta, *f)
        name = f"Welch t{moderated}, Berger-Boos (β = {options.beta:g}, any ratio)"
        kind = BERGER_BOOS
        any_ratio = log10_p
    else:
        log10_p = band_log10_p(t, *n, options.band, *f)
        name = f"Welch t{moderated}, calibrated over {band}"
        kind = BAND
        any_ratio = berger_boos_log10_p(t, *n, *v, options.band, options.beta, *f)
    return PairTest(
        name,
        kind,
        t,
        se_used,
        log10_p,
        n=n,
        f=f,
        v=v,
        band=options.band,
        beta=options.beta,
        any_ratio_log10_p=any_ratio,
    )
