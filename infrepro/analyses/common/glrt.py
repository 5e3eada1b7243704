"""Generalized likelihood ratio tests of nested ML fits, as rows of ``glrt.csv``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from infrepro.analyses.common.data import distinct_count
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.vocabulary import RUN, SEGMENT
from infrepro.lmm import LmmError, LmmResult, lrt
from infrepro.stats.pvalues import chi2_log10_sf, format_p, holm_log10


@dataclass
class GlrtOutcome:
    """A GLRT's table row and the two fits (the H1 fit feeds means and effect sizes)."""

    row: dict[str, object]
    h1: LmmResult
    h0: LmmResult


def run_glrt(
    log: FitLog,
    data: pd.DataFrame,
    h1: str,
    h0: str,
    *,
    analysis: str,
    subset: str = "",
    prop: str = "",
    facet: str = "",
    note: str = "",
    reference_levels: Mapping[str, str] | None = None,
) -> GlrtOutcome | None:
    """Fit H1 and H0 by ML and test them; None (recorded in diagnostics) if either fails."""
    fits = []
    for index, formula in enumerate((h1, h0)):
        result = log.fit(
            formula,
            data,
            reml=False,
            analysis=analysis,
            subset=subset,
            prop=prop,
            reference_levels=reference_levels,
            qq=index == 0,  # H0's residuals are not checked (§4.6)
        )
        if result is None:
            return None
        fits.append(result)
    try:
        test = lrt(fits[1], fits[0])
    except LmmError as err:
        reason = f"both models were fitted, but the GLRT {h1} vs {h0} failed: {err}"
        log.skip(analysis, subset, prop, reason)
        return None
    log10_p = chi2_log10_sf(test.lr_stat, test.df)
    row = {
        "metric": log.metric,
        "analysis": analysis,
        "property": prop,
        "subset": subset,
        "facet": facet,
        "h1": h1,
        "h0": h0,
        "n_obs": fits[0].nobs,
        "n_segments": distinct_count(data, SEGMENT),
        "n_runs": distinct_count(data, RUN),
        "loglik_h1": fits[0].loglik,
        "loglik_h0": fits[1].loglik,
        "lr_stat": test.lr_stat,
        "df": test.df,
        "p_value": format_p(log10_p),
        "p_holm": format_p(log10_p),
        "log10_p": log10_p,
        "log10_p_holm": log10_p,
        "note": note,
    }
    return GlrtOutcome(row, fits[0], fits[1])


def holm_within(table: pd.DataFrame, family: list[str], p: str = "log10_p") -> pd.DataFrame:
    """Holm-adjust ``p`` within each family of rows (rows sharing the ``family`` columns)."""
    if table.empty:
        return table
    out = table.copy()
    adjusted = pd.Series(index=out.index, dtype="float64")
    for _, group in out.groupby(family, sort=False, dropna=False):
        adjusted.loc[group.index] = holm_log10(group[p].astype(float).to_numpy())
    out[p + "_holm"] = adjusted
    target = "p_holm"
    out[target] = [format_p(v) for v in adjusted]
    return out
