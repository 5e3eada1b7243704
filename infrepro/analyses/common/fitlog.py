"""Fit models while recording diagnostics of every fit and the reason of every skipped analysis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import distinct_count
from infrepro.core.vocabulary import RUN, SEGMENT, columns, qq_cell, qq_probabilities
from infrepro.lmm import FEW_LEVELS, FitCache, LmmError, LmmResult, fit, parse_formula
from infrepro.lmm.formula import unquoted


@dataclass
class FitLog:
    """Diagnostics of one metric's fits (docs/method.md §4.6).

    A model fitted again to the very same rows (the same DataFrame object, as the joint and the
    interaction GLRT of one property share their H1) is not refitted: the earlier result, and
    its residual quantiles, are reused (a fit is a deterministic function of formula, rows,
    criterion and reference levels); other models fitted to those rows share the engine's data
    preparation (a FitCache). Only the fits of the latest DataFrame and property are kept (the
    codes of the frame's columns for as long as fits use the frame). The analyses never modify
    a frame in place once fitted to (they derive new frames).
    """

    metric: str
    rows: list[dict[str, object]] = field(default_factory=list)
    qq: list[dict[str, object]] = field(default_factory=list)
    _frame: pd.DataFrame | None = field(default=None, repr=False)
    _fits: dict[tuple[object, ...], LmmResult] = field(default_factory=dict, repr=False)
    _quantiles: dict[int, str] = field(default_factory=dict, repr=False)
    _cache: FitCache = field(default_factory=FitCache, repr=False)
    _prop: str = field(default="", repr=False)

    def fit(
        self,
        formula: str,
        data: pd.DataFrame,
        *,
        reml: bool,
        analysis: str,
        subset: str = "",
        prop: str = "",
        reference_levels: Mapping[str, str] | None = None,
        qq: bool = True,
    ) -> LmmResult | None:
        """Fit ``formula``; on an engine error record it as skipped and return None. With
        ``qq``, its residual quantiles are a row of qq.csv (not for a GLRT's null model: §4.6)."""
        try:
            result = self._fit(formula, data, reml, reference_levels, prop)
        except LmmError as err:
            self.skip(analysis, subset, prop, f"model {formula} could not be fitted: {err}")
            return None
        few = sorted(
            (g for g, n in result.ngroups.items() if g != SEGMENT and n < FEW_LEVELS), key=unquoted
        )
        self.rows.append(
            {
                "metric": self.metric,
                "analysis": analysis,
                "subset": subset,
                "property": prop,
                "model": formula,
                "reml": reml,
                "status": "fitted",
                "reason": "",
                "converged": result.converged,
                "singular": result.singular,
                "n_obs": result.nobs,
                "n_segments": _nunique(data, SEGMENT),
                "n_runs": _nunique(data, RUN),
                "facets_lt5": ";".join(few),
                "loglik": result.loglik,
                "messages": " | ".join(result.messages),
            }
        )
        if qq:
            self._add_qq(result, analysis, subset, prop, formula)
        return result

    def _fit(
        self,
        formula: str,
        data: pd.DataFrame,
        reml: bool,
        reference_levels: Mapping[str, str] | None,
        prop: str,
    ) -> LmmResult:
        """``fit``, or the result of the same fit to the same DataFrame object."""
        fixed = set(parse_formula(formula).fixed_variables)
        levels = {k: v for k, v in (reference_levels or {}).items() if k in fixed}
        if data is not self._frame:
            self._frame, self._fits, self._quantiles = data, {}, {}
            self._cache = FitCache()
        elif prop != self._prop:  # another property's models: its matrices are not these
            self._fits, self._quantiles = {}, {}
            self._cache.release()
        self._prop = prop
        key = (formula, reml, tuple(sorted(levels.items())))
        if key not in self._fits:
            self._fits[key] = fit(
                formula, data, reml=reml, reference_levels=levels, cache=self._cache
            )
        return self._fits[key]

    def skip(self, analysis: str, subset: str, prop: str, reason: str) -> None:
        """Record an analysis that was not run, and why."""
        self._record(analysis, subset, prop, reason, "skipped")

    def note(self, analysis: str, subset: str, reason: str, prop: str = "") -> None:
        """Record something about the data the reader must know (status ``note``): the
        analysis ran."""
        self._record(analysis, subset, prop, reason, "note")

    def _record(self, analysis: str, subset: str, prop: str, reason: str, status: str) -> None:
        row = dict.fromkeys(columns("diagnostics"), "")
        row.update(
            metric=self.metric,
            analysis=analysis,
            subset=subset,
            property=prop,
            status=status,
            reason=reason,
        )
        self.rows.append(row)

    def _add_qq(
        self, result: LmmResult, analysis: str, subset: str, prop: str, formula: str
    ) -> None:
        residuals = np.asarray(result.residuals, dtype="float64")
        if residuals.size < 2 or result.sigma <= 0:
            return
        sample = self._quantiles.get(id(result))
        if sample is None:
            sample = qq_cell(sample_quantiles(residuals / result.sigma, qq_probabilities()))
            self._quantiles[id(result)] = sample
        self.qq.append(  # one row per fit: 50 rows each made qq.csv most of the tables' bytes
            {
                "metric": self.metric,
                "analysis": analysis,
                "subset": subset,
                "property": prop,
                "model": formula,
                "sample": sample,
            }
        )

    def diagnostics(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=columns("diagnostics"))

    def qq_table(self) -> pd.DataFrame:
        return pd.DataFrame(self.qq, columns=columns("qq"))


BUCKETS = 4096  # value buckets of sample_quantiles: each holds a few hundred of 500,000 values
SELECT_FROM = 20_000  # below this many values np.quantile's own selection is as fast


def sample_quantiles(values: np.ndarray, probabilities: Sequence[float]) -> np.ndarray:
    """``np.quantile(values, probabilities)`` (its default "linear" method), bit for bit, for
    many finite values: np.quantile partitions the whole array around each of the order
    statistics it needs (100 for qq.csv's 50 quantiles), a fifth of a conditional job's
    fits' time at paper scale. Here the values go into equal-width value buckets in one pass
    (a bucket is a monotone function of the value, so buckets are ranges of the sorted order);
    only the buckets holding a needed rank are sorted. The interpolation is numpy's
    (``_get_indexes``, ``_get_gamma``, ``_lerp`` of numpy/lib/_function_base_impl.py), so the
    result equals np.quantile's; NaN, infinities, signed zeros (whose order a sort leaves
    open) and small arrays go to np.quantile itself."""
    x = np.asarray(values, dtype=np.float64).ravel()
    q = np.asarray(probabilities, dtype=np.float64)
    n = x.size
    if n < SELECT_FROM or not np.isfinite(x).all() or bool((x == 0).any()):
        return np.quantile(x, q)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    previous[virtual < 0] = 0
    following[virtual < 0] = 0
    before, after = previous.astype(np.intp), following.astype(np.intp)
    ranks = np.unique(np.concatenate([before % n, after % n]))
    values = _order_statistics(x, ranks)
    low = values[np.searchsorted(ranks, before % n)]
    high = values[np.searchsorted(ranks, after % n)]
    gamma = np.asarray(virtual - before, dtype=np.float64)
    difference = high - low
    return np.where(gamma >= 0.5, high - difference * (1 - gamma), low + difference * gamma)


def _order_statistics(x: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The values of the given (sorted, distinct) ranks in ``x`` sorted ascending, exactly."""
    low, high = float(x.min()), float(x.max())
    if high == low:
        return np.full(len(ranks), low)
    scale = BUCKETS / (high - low)
    if not (np.isfinite(high - low) and np.isfinite(scale)):  # a range past the float range
        return np.sort(x)[ranks]
    bucket = ((x - low) * scale).astype(np.intp)  # monotone in x: rounding is
    np.minimum(bucket, BUCKETS - 1, out=bucket)
    counts = np.bincount(bucket, minlength=BUCKETS)
    ends = np.cumsum(counts)  # values in buckets up to each one
    home = np.searchsorted(ends, ranks, side="right")  # the bucket of each rank
    needed = np.zeros(BUCKETS, dtype=bool)
    needed[home] = True
    chosen = np.sort(x[needed[bucket]])  # the needed buckets' values, in order
    kept = np.where(needed, counts, 0)
    first_in_chosen = np.cumsum(kept) - kept
    return chosen[first_in_chosen[home] + ranks - (ends - counts)[home]]


def _nunique(data: pd.DataFrame, column: str) -> int:
    return distinct_count(data, column) if column in data else 0
