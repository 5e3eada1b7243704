"""Generalized likelihood ratio test of nested mixed models (docs/method.md §4)."""

from __future__ import annotations

from dataclasses import dataclass

from infrepro.lmm.errors import LmmError
from infrepro.lmm.result import LmmResult

NOISE_TOL = 1e-6  # relative size of a negative LR statistic still treated as numerical noise


@dataclass(frozen=True)
class LrtResult:
    """LR = 2 (logLik1 - logLik0), df = difference in fixed-effect parameters, chi-square p."""

    lr_stat: float
    df: int
    p_value: float


def lrt(m0: LmmResult, m1: LmmResult) -> LrtResult:
    """GLRT of the smaller model m0 against the larger m1 (same data, same random part).

    Refuses: different numbers of observations or responses, REML fits whose fixed parts
    differ (REML likelihoods of different fixed parts are not comparable), different random
    terms (df would then have to count variance parameters), and m1 not larger than m0.
    """
    if m0.nobs != m1.nobs:
        raise LmmError(f"models were fitted to different numbers of rows ({m0.nobs} vs {m1.nobs})")
    if m0.response_digest and m1.response_digest and m0.response_digest != m1.response_digest:
        raise LmmError("models were fitted to different responses")
    same_fixed = list(m0.fixed_effects.index) == list(m1.fixed_effects.index)
    if m0.reml != m1.reml:
        raise LmmError("cannot compare an ML fit with a REML fit; refit both with reml=False")
    if (m0.reml or m1.reml) and not same_fixed:
        raise LmmError(
            "REML fits with different fixed effects are not comparable; refit with reml=False"
        )
    if tuple(m0.theta_names) != tuple(m1.theta_names):
        raise LmmError(
            f"random terms differ ({list(m0.theta_names)} vs {list(m1.theta_names)}); "
            "this test counts fixed-effect parameters only"
        )
    df = m1.n_fixed - m0.n_fixed
    if df <= 0:
        raise LmmError(
            f"m1 must have more fixed effects than m0 (got {m1.n_fixed} vs {m0.n_fixed})"
        )
    from scipy import stats  # deferred: scipy.stats is slow to import

    lr = 2.0 * (m1.loglik - m0.loglik)
    if lr < 0:
        if -lr > NOISE_TOL * max(1.0, abs(m1.loglik)):
            raise LmmError(
                f"log-likelihood of the larger model is lower by {-lr / 2:.3g}: "
                "the models are not nested or a fit did not converge"
            )
        lr = 0.0
    return LrtResult(lr_stat=float(lr), df=int(df), p_value=float(stats.chi2.sf(lr, df)))
