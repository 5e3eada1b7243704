"""t and F tests of REML fits with small-sample denominator df, as rows of ``tests.csv``.

Kenward-Roger whenever it is available (REML fits, ``LmmResult.kr_feasible``; exact at any size),
Satterthwaite otherwise; every row names its method and model (docs/method.md §4b).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import distinct_count
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.decisions import df_number
from infrepro.core.vocabulary import RUN, SEGMENT
from infrepro.lmm import KENWARD_ROGER, SATTERTHWAITE, ContrastTest, LmmError, LmmResult
from infrepro.stats.pvalues import format_p


def ddf_method(result: LmmResult) -> str:
    """Kenward-Roger where it is available, else Satterthwaite."""
    return KENWARD_ROGER if result.kr_feasible() else SATTERTHWAITE


def contest(
    log: FitLog, result: LmmResult, L: np.ndarray, *, analysis: str, subset: str, prop: str
) -> ContrastTest | None:
    """``result.contest`` with the preferred method; None (recorded) if it fails."""
    try:
        with np.errstate(all="ignore"):
            test = result.contest(L, ddf_method(result))
    except (LmmError, np.linalg.LinAlgError, ValueError) as err:
        log.skip(
            analysis, subset, prop, f"{fitted_but(result)} its small-sample test failed: {err}"
        )
        return None
    return _reported(log, result, test, analysis=analysis, subset=subset, prop=prop)


def contest_rows(
    log: FitLog, result: LmmResult, L: np.ndarray, *, analysis: str, subset: str, prop: str
) -> list[ContrastTest | None]:
    """:func:`contest` of each row of ``L`` (t tests), the same tests and recorded failures in
    the same order, computed together (``LmmResult.contest_rows``: the df's products shared)."""
    try:
        with np.errstate(all="ignore"):
            tests = result.contest_rows(L, ddf_method(result))
    except (LmmError, np.linalg.LinAlgError, ValueError) as err:
        reason = f"{fitted_but(result)} its small-sample test failed: {err}"
        for _ in range(len(L)):
            log.skip(analysis, subset, prop, reason)
        return [None] * len(L)
    return [
        _reported(log, result, test, analysis=analysis, subset=subset, prop=prop) for test in tests
    ]


def _reported(
    log: FitLog, result: LmmResult, test: ContrastTest, *, analysis: str, subset: str, prop: str
) -> ContrastTest | None:
    """The test, or None (recorded) when its df or p is no finite positive number."""
    if not math.isfinite(test.dendf) or test.dendf <= 0 or not math.isfinite(test.log10_p):
        log.skip(analysis, subset, prop, f"{fitted_but(result)} {no_df(test.dendf, result)}")
        return None
    return test


def fitted_but(result: LmmResult) -> str:
    """``the model <formula> was fitted (singular: ...), but``: the start of the diagnostics
    reason of a test that failed on a model that was fitted (its own row says so)."""
    singular = " (singular: a variance is estimated at 0)" if result.singular else ""
    return f"the model {result.formula} was fitted{singular}, but"


def no_df(dendf: float, result: LmmResult) -> str:
    """The end of that reason when the small-sample df are no positive number."""
    return (
        f"its {ddf_method(result)} df for this test are {dendf:.4g}, not a positive number: "
        "the test is not reported"
    )


def method_label(test: ContrastTest) -> str:
    """``t (Kenward-Roger, df 18.87)`` / ``F(2, 14.6) (Satterthwaite)``."""
    if test.numdf == 1:
        return f"t ({test.method}, df {df_number(test.dendf, 4)})"
    return f"F({test.numdf}, {df_number(test.dendf, 4)}) ({test.method})"


def test_row(
    log: FitLog,
    test: ContrastTest,
    result: LmmResult,
    rows: pd.DataFrame,
    *,
    analysis: str,
    hypothesis: str,
    subset: str = "",
    prop: str = "",
    facet: str = "",
    note: str = "",
) -> dict[str, object]:
    """One row of tests.csv."""
    return {
        "metric": log.metric,
        "analysis": analysis,
        "subset": subset,
        "property": prop,
        "facet": facet,
        "hypothesis": hypothesis,
        "model": result.formula,
        "method": test.method,
        "estimate": test.estimate,
        "se": test.se,
        "statistic": test.statistic,
        "numdf": test.numdf,
        "dendf": test.dendf,
        "n_obs": result.nobs,
        "n_segments": distinct_count(rows, SEGMENT),
        "n_runs": distinct_count(rows, RUN),
        "p_value": format_p(test.log10_p),
        "p_holm": format_p(test.log10_p),
        "log10_p": test.log10_p,
        "log10_p_holm": test.log10_p,
        "note": note,
    }


def t_quantile(df: float) -> float:
    """The two-sided 95 % quantile of t with ``df`` degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(0.975, df))
