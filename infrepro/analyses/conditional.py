"""System comparisons conditional on a data property (paper eq. 6-7, thesis ch. 2).

For each property d: the joint test (system main effect and interaction) and the interaction-only
test; per-system slopes and prediction bands for numeric d; model cell means and within-level
pairwise comparisons (Holm-adjusted) for binned or categorical d.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from infrepro.lmm import LmmResult

from .data import SYSTEM, MetricData
from .effects import effect_label, effect_size
from .fitlog import FitLog
from .glrt import holm_within, run_glrt
from .pvalues import format_p, normal_log10_two_sided

SLOPE_COLUMNS = [
    "metric", "analysis", "subset", "property", "group", "slope", "se", "z", "p_value", "log10_p",
]  # fmt: skip
PREDICTION_COLUMNS = [
    "metric", "analysis", "subset", "property", "group", "x", "estimate", "se", "lower", "upper",
]  # fmt: skip
GRID_POINTS = 25
Z95 = 1.959963984540054


def property_formulas(metric: str, factor: str, prop: str) -> dict[str, str]:
    """H1 and the two H0s of the conditional tests for a factor (system or a facet)."""
    return {
        "h1": f"{metric} ~ {factor} * {prop} + (1|segment_id)",
        "h0_joint": f"{metric} ~ {prop} + (1|segment_id)",
        "h0_interaction": f"{metric} ~ {factor} + {prop} + (1|segment_id)",
    }


def conditional_analyses(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """All conditional tests of one metric over every property (all runs)."""
    tables = _Tables()
    if len(data.systems) < 2:
        log.skip("conditional", "", "", "only one system: nothing to compare")
        return tables.frames()
    for prop in data.properties:
        for variant in data.property_variants(prop):
            rows = data.evaluation.dropna(subset=[variant])
            dropped = len(data.evaluation) - len(rows)
            if dropped:
                log.skip(
                    "conditional", "all runs", variant,
                    f"{dropped} rows without a value of {variant} left out of its models",
                )  # fmt: skip
            factor_analysis(
                data, log, tables, rows, factor=SYSTEM, prop=variant,
                analysis="conditional", subset="all runs", reference=data.baseline,
            )  # fmt: skip
    return tables.frames()


class _Tables:
    """Row collectors for the tables a conditional analysis writes."""

    def __init__(self) -> None:
        self.glrt: list[dict[str, object]] = []
        self.means: list[dict[str, object]] = []
        self.contrasts: list[dict[str, object]] = []
        self.slopes: list[dict[str, object]] = []
        self.predictions: list[dict[str, object]] = []

    def frames(self) -> dict[str, pd.DataFrame]:
        contrasts = pd.DataFrame(self.contrasts)
        if not contrasts.empty:
            contrasts = holm_within(contrasts, ["metric", "analysis", "subset", "property"])
        return {
            "glrt": pd.DataFrame(self.glrt),
            "means": pd.DataFrame(self.means),
            "contrasts": contrasts,
            "slopes": pd.DataFrame(self.slopes, columns=SLOPE_COLUMNS),
            "predictions": pd.DataFrame(self.predictions, columns=PREDICTION_COLUMNS),
        }


def factor_analysis(
    data: MetricData,
    log: FitLog,
    tables: _Tables,
    rows: pd.DataFrame,
    *,
    factor: str,
    prop: str,
    analysis: str,
    subset: str,
    reference: str,
) -> None:
    """Joint and interaction tests of ``factor`` x ``prop`` and the post-hoc tables."""
    if rows[factor].nunique() < 2:
        log.skip(analysis, subset, prop, f"{factor} has fewer than two levels in these rows")
        return
    if rows[prop].nunique() < 2:
        log.skip(analysis, subset, prop, f"{prop} is constant in these rows")
        return
    models = property_formulas(data.metric, factor, prop)
    levels = {factor: reference}
    joint = run_glrt(
        log, rows, models["h1"], models["h0_joint"], analysis=f"{analysis}_joint",
        subset=subset, prop=prop, facet=factor if factor != SYSTEM else "",
        reference_levels=levels,
    )  # fmt: skip
    interaction = run_glrt(
        log, rows, models["h1"], models["h0_interaction"], analysis=f"{analysis}_interaction",
        subset=subset, prop=prop, facet=factor if factor != SYSTEM else "",
        reference_levels=levels,
    )  # fmt: skip
    for outcome in (joint, interaction):
        if outcome is not None:
            tables.glrt.append(outcome.row)
    if joint is None:
        return
    fitted = joint.h1
    group_levels = _levels(rows, factor, reference)
    if data.is_numeric(prop) and pd.api.types.is_numeric_dtype(rows[prop]):
        _slopes(data, tables, fitted, factor, prop, group_levels, analysis, subset)
        _predictions(data, tables, fitted, rows, factor, prop, group_levels, analysis, subset)
    else:
        _cells(data, tables, fitted, rows, factor, prop, group_levels, analysis, subset)


def _levels(rows: pd.DataFrame, factor: str, reference: str) -> list[str]:
    present = sorted(set(map(str, rows[factor])))
    return [reference] + [lev for lev in present if lev != reference]


def _slopes(
    data: MetricData,
    tables: _Tables,
    fitted: LmmResult,
    factor: str,
    prop: str,
    levels: list[str],
    analysis: str,
    subset: str,
) -> None:
    names = list(fitted.fixed_effects.index)
    beta = fitted.fixed_effects.to_numpy()
    cov = fitted.fixed_cov.to_numpy()
    for level in levels:
        weights = np.zeros(len(names))
        weights[names.index(prop)] = 1.0
        interaction = f"{factor}{level}:{prop}"
        if level != levels[0]:
            weights[names.index(interaction)] = 1.0
        slope = float(weights @ beta)
        se = float(math.sqrt(weights @ cov @ weights))
        z = slope / se if se > 0 else math.nan
        log10_p = normal_log10_two_sided(z) if se > 0 else math.nan
        tables.slopes.append(
            {
                "metric": data.metric, "analysis": analysis, "subset": subset, "property": prop,
                "group": level, "slope": slope, "se": se, "z": z,
                "p_value": format_p(log10_p), "log10_p": log10_p,
            }
        )  # fmt: skip


def _predictions(
    data: MetricData,
    tables: _Tables,
    fitted: LmmResult,
    rows: pd.DataFrame,
    factor: str,
    prop: str,
    levels: list[str],
    analysis: str,
    subset: str,
) -> None:
    low, high = np.quantile(rows[prop].to_numpy(dtype=float), [0.01, 0.99])
    grid = np.linspace(low, high, GRID_POINTS)
    newdata = pd.DataFrame(
        {factor: np.repeat(levels, GRID_POINTS), prop: np.tile(grid, len(levels))}
    )
    predicted = fitted.predict(newdata)
    for (level, x), (estimate, se) in zip(
        newdata[[factor, prop]].itertuples(index=False),
        predicted[["estimate", "se"]].itertuples(index=False),
        strict=True,
    ):
        tables.predictions.append(
            {
                "metric": data.metric, "analysis": analysis, "subset": subset, "property": prop,
                "group": level, "x": float(x), "estimate": float(estimate), "se": float(se),
                "lower": float(estimate - Z95 * se), "upper": float(estimate + Z95 * se),
            }
        )  # fmt: skip
    bin_column = prop + "_bin"
    if bin_column in rows:
        observed = rows.groupby([factor, bin_column], sort=False).agg(
            x=(prop, "mean"), estimate=(data.metric, "mean"), sd=(data.metric, "std"),
            n_obs=(data.metric, "size"),
        )  # fmt: skip
        for (level, bin_name), values in observed.iterrows():
            tables.means.append(
                {
                    "metric": data.metric, "analysis": analysis, "subset": subset,
                    "property": prop, "bin": bin_name, "group": level, "kind": "observed",
                    "x": float(values["x"]), "estimate": float(values["estimate"]),
                    "se": float(values["sd"] / math.sqrt(values["n_obs"])),
                    "n_obs": int(values["n_obs"]),
                }
            )  # fmt: skip


def _cells(
    data: MetricData,
    tables: _Tables,
    fitted: LmmResult,
    rows: pd.DataFrame,
    factor: str,
    prop: str,
    levels: list[str],
    analysis: str,
    subset: str,
) -> None:
    bins = _ordered_bins(rows, prop, data.bin_order.get(prop, []))
    counts = rows.groupby([factor, prop]).size()
    cells = pd.DataFrame(
        [(level, b) for b in bins for level in levels if counts.get((level, b), 0) > 0],
        columns=[factor, prop],
    )
    x = fitted.design_matrix(cells)
    beta = fitted.fixed_effects.to_numpy()
    cov = fitted.fixed_cov.to_numpy()
    estimates = x @ beta
    for i, (level, b) in enumerate(cells.itertuples(index=False)):
        tables.means.append(
            {
                "metric": data.metric, "analysis": analysis, "subset": subset, "property": prop,
                "bin": b, "group": level, "kind": "model", "x": float("nan"),
                "estimate": float(estimates[i]), "se": float(math.sqrt(x[i] @ cov @ x[i])),
                "n_obs": int(counts.get((level, b), 0)),
            }
        )  # fmt: skip
    index = {(level, b): i for i, (level, b) in enumerate(cells.itertuples(index=False))}
    for b in bins:
        for first, second in itertools.combinations(levels, 2):
            if (first, b) not in index or (second, b) not in index:
                continue
            weights = x[index[(first, b)]] - x[index[(second, b)]]
            difference = float(weights @ beta)
            se = float(math.sqrt(weights @ cov @ weights))
            z = difference / se if se > 0 else math.nan
            log10_p = normal_log10_two_sided(z) if se > 0 else math.nan
            d = effect_size(difference, fitted.sigma)
            tables.contrasts.append(
                {
                    "metric": data.metric, "analysis": analysis, "subset": subset,
                    "property": prop, "bin": b, "level1": first, "level2": second,
                    "estimate": difference, "se": se, "p_value": format_p(log10_p),
                    "p_holm": "", "log10_p": log10_p, "log10_p_holm": math.nan,
                    "p_method": "Wald z", "effect_size": d, "effect_label": effect_label(d),
                }
            )  # fmt: skip


def _ordered_bins(rows: pd.DataFrame, prop: str, order: list[str]) -> list[str]:
    """Levels present in the rows: bins in their defined order, other categories sorted."""
    present = set(map(str, rows[prop]))
    ordered = [b for b in order if b in present]
    return ordered + sorted(present - set(ordered))
