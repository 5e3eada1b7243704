"""System comparisons conditional on a data property (paper eq. 6-7, thesis ch. 2).

For each property d: the joint test (system main effect and interaction) and the interaction-only
test; per-system slopes and prediction bands for numeric d; model cell means and within-level
pairwise comparisons (Holm-adjusted) for binned or categorical d.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from infrepro.lmm import LmmResult

from .data import SYSTEM, MetricData, distinct_strings
from .effects import effect_label, effect_size
from .fitlog import FitLog
from .glrt import holm_within, run_glrt
from .pvalues import format_p, normal_log10_two_sided

SLOPE_COLUMNS = [
    "metric",
    "analysis",
    "subset",
    "property",
    "group",
    "slope",
    "se",
    "z",
    "p_value",
    "log10_p",
]
PREDICTION_COLUMNS = [
    "metric",
    "analysis",
    "subset",
    "property",
    "group",
    "x",
    "estimate",
    "se",
    "lower",
    "upper",
]
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
                    "conditional",
                    "all runs",
                    variant,
                    f"{dropped} rows without a value of {variant} left out of its models",
                )
            factor_analysis(
                data,
                log,
                tables,
                rows,
                factor=SYSTEM,
                prop=variant,
                analysis="conditional",
                subset="all runs",
                reference=data.baseline,
            )
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
        log,
        rows,
        models["h1"],
        models["h0_joint"],
        analysis=f"{analysis}_joint",
        subset=subset,
        prop=prop,
        facet=factor if factor != SYSTEM else "",
        reference_levels=levels,
    )
    interaction = run_glrt(
        log,
        rows,
        models["h1"],
        models["h0_interaction"],
        analysis=f"{analysis}_interaction",
        subset=subset,
        prop=prop,
        facet=factor if factor != SYSTEM else "",
        reference_levels=levels,
    )
    for outcome in (joint, interaction):
        if outcome is not None:
            tables.glrt.append(outcome.row)
    if joint is None:
        return
    post = _PostHoc(
        metric=data.metric,
        fitted=joint.h1,
        rows=rows,
        factor=factor,
        prop=prop,
        levels=_levels(rows, factor, reference),
        analysis=analysis,
        subset=subset,
        bin_column=data.bin_column(prop),
    )
    if data.is_numeric(prop) and pd.api.types.is_numeric_dtype(rows[prop]):
        post.slopes(tables)
        post.predictions(tables)
    else:
        post.cells(tables, _ordered_bins(rows, prop, data.bin_order.get(prop, [])))


def _levels(rows: pd.DataFrame, factor: str, reference: str) -> list[str]:
    present = sorted(distinct_strings(rows[factor]))
    return [reference] + [lev for lev in present if lev != reference]


def wald(weights: np.ndarray, fitted: LmmResult) -> tuple[float, float, float, float]:
    """Estimate, SE, z and two-sided log10 p of the linear combination ``weights @ beta``."""
    estimate = float(weights @ fitted.fixed_effects.to_numpy())
    se = float(math.sqrt(weights @ fitted.fixed_cov.to_numpy() @ weights))
    if se <= 0:
        return estimate, se, math.nan, math.nan
    z = estimate / se
    return estimate, se, z, normal_log10_two_sided(z)


@dataclass(frozen=True)
class _PostHoc:
    """Post-hoc tables of one ``factor * prop`` fit: slopes, prediction bands, cell means."""

    metric: str
    fitted: LmmResult
    rows: pd.DataFrame
    factor: str
    prop: str
    levels: list[str]
    analysis: str
    subset: str
    bin_column: str

    def key(self) -> dict[str, object]:
        """The columns every row of these tables starts with."""
        return {
            "metric": self.metric,
            "analysis": self.analysis,
            "subset": self.subset,
            "property": self.prop,
        }

    def slopes(self, tables: _Tables) -> None:
        """The slope of ``prop`` for every level of ``factor`` (reference + interaction)."""
        names = list(self.fitted.fixed_effects.index)
        for level in self.levels:
            weights = np.zeros(len(names))
            weights[names.index(self.prop)] = 1.0
            if level != self.levels[0]:
                weights[names.index(f"{self.factor}{level}:{self.prop}")] = 1.0
            slope, se, z, log10_p = wald(weights, self.fitted)
            tables.slopes.append(
                {
                    **self.key(),
                    "group": level,
                    "slope": slope,
                    "se": se,
                    "z": z,
                    "p_value": format_p(log10_p),
                    "log10_p": log10_p,
                }
            )

    def predictions(self, tables: _Tables) -> None:
        """Prediction lines with 95 % bands over the property's range, and binned raw means."""
        values = self.rows[self.prop].to_numpy(dtype=float)
        grid = np.linspace(*np.quantile(values, [0.01, 0.99]), GRID_POINTS)
        newdata = pd.DataFrame(
            {
                self.factor: np.repeat(self.levels, GRID_POINTS),
                self.prop: np.tile(grid, len(self.levels)),
            }
        )
        predicted = self.fitted.predict(newdata)
        for (level, x), (estimate, se) in zip(
            newdata[[self.factor, self.prop]].itertuples(index=False),
            predicted[["estimate", "se"]].itertuples(index=False),
            strict=True,
        ):
            tables.predictions.append(
                {
                    **self.key(),
                    "group": level,
                    "x": float(x),
                    "estimate": float(estimate),
                    "se": float(se),
                    "lower": float(estimate - Z95 * se),
                    "upper": float(estimate + Z95 * se),
                }
            )
        if self.bin_column not in self.rows:
            return
        observed = self.rows.groupby([self.factor, self.bin_column], sort=False).agg(
            x=(self.prop, "mean"),
            estimate=(self.metric, "mean"),
            sd=(self.metric, "std"),
            n_obs=(self.metric, "size"),
        )
        for (level, bin_name), row in observed.iterrows():
            tables.means.append(
                {
                    **self.key(),
                    "bin": bin_name,
                    "group": level,
                    "kind": "observed",
                    "x": float(row["x"]),
                    "estimate": float(row["estimate"]),
                    "se": float(row["sd"] / math.sqrt(row["n_obs"])),
                    "n_obs": int(row["n_obs"]),
                }
            )

    def cells(self, tables: _Tables, bins: list[str]) -> None:
        """Model cell means and within-bin pairwise comparisons of the factor's levels."""
        counts = self.rows.groupby([self.factor, self.prop]).size()
        present = [(lev, b) for b in bins for lev in self.levels if counts.get((lev, b), 0) > 0]
        cells = pd.DataFrame(present, columns=[self.factor, self.prop])
        x = self.fitted.design_matrix(cells)
        for i, (level, b) in enumerate(present):
            estimate, se, _, _ = wald(x[i], self.fitted)
            tables.means.append(
                {
                    **self.key(),
                    "bin": b,
                    "group": level,
                    "kind": "model",
                    "x": math.nan,
                    "estimate": estimate,
                    "se": se,
                    "n_obs": int(counts.get((level, b), 0)),
                }
            )
        index = {cell: i for i, cell in enumerate(present)}
        for b in bins:
            for first, second in itertools.combinations(self.levels, 2):
                if (first, b) not in index or (second, b) not in index:
                    continue
                weights = x[index[(first, b)]] - x[index[(second, b)]]
                difference, se, _, log10_p = wald(weights, self.fitted)
                d = effect_size(difference, self.fitted.sigma)
                tables.contrasts.append(
                    {
                        **self.key(),
                        "bin": b,
                        "level1": first,
                        "level2": second,
                        "estimate": difference,
                        "se": se,
                        "p_value": format_p(log10_p),
                        "p_holm": "",
                        "log10_p": log10_p,
                        "log10_p_holm": math.nan,
                        "p_method": "Wald z",
                        "effect_size": d,
                        "effect_label": effect_label(d),
                    }
                )


def _ordered_bins(rows: pd.DataFrame, prop: str, order: list[str]) -> list[str]:
    """Levels present in the rows: bins in their defined order, other categories sorted."""
    present = distinct_strings(rows[prop])
    ordered = [b for b in order if b in present]
    return ordered + sorted(present - set(ordered))
