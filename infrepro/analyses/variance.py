"""Variance component analysis per system (REML), reliability phi, the SDs of a system's mean
score across retraining and across meta-parameter settings, and the D-study (docs/method.md
§4.3, §4.4).

Two VCA models per system: the run-aware one, with the run term ``(1|run_id)`` (the
highest-order crossing of the facets), from which phi, the D-study and the SDs are read; and the
thesis' main-effects model (eq. 3.13), kept as the reproduction of the thesis' tables. Every row
names its model in the ``vca`` column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from infrepro.lmm import LmmResult
from infrepro.registry import VARIANCE
from infrepro.vocabulary import (
    RESIDUAL,
    RUN,
    SEGMENT,
    SYSTEM,
    VARIANCE_COLUMN,
    VCA_COLUMN,
    VCA_MAIN_EFFECTS,
    VCA_RUN_AWARE,
    columns,
    vca_formula,
)

from .agreement import krippendorff_alpha, reliability_matrix
from .data import MetricData
from .fitlog import FitLog

KOO_LI = ((0.5, "poor"), (0.75, "moderate"), (0.9, "good"), (math.inf, "excellent"))
PHI_TARGET = 0.8

__all__ = ["dstudy_phi", "spread_sds", "variance_components", "vca_formula"]


def koo_li_label(phi: float) -> str:
    """Koo & Li (2016): < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, >= 0.9 excellent."""
    for bound, label in KOO_LI:
        if phi < bound:
            return label
    return "excellent"


def dstudy_phi(components: pd.Series, facets: Sequence[str], n: int) -> float:
    """phi when scores are averaged over n levels of every facet (thesis eq. 3.9).

    A component is divided by n to the number of facets it involves; the residual and the run
    term by n to the number of facets (a fully crossed average over n^k runs); the segment
    variance stays.
    """
    segment = float(components.get(SEGMENT, 0.0))
    error = 0.0
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        involved = len(facets) if name in (RESIDUAL, RUN) else _facets_in(name, facets)
        error += float(variance) / n ** max(involved, 1)
    total = segment + error
    return segment / total if total > 0 else math.nan


@dataclass(frozen=True)
class Spread:
    """SDs of a run's mean test score in points (docs/method.md §4.4): retraining the same
    recipe (``retrain``), choosing the setting (``metaparam``), and the retraining components."""

    retrain: float
    metaparam: float
    retrain_components: str


def spread_sds(
    components: pd.Series,
    n_segments: int,
    retraining: Sequence[str],
    run_component: str = RUN,
) -> Spread:
    """Split the variance of a run's mean over ``n_segments`` segments into retraining and
    setting parts: retraining is the run term (``run_component``), the residual and every
    component involving a facet of ``retraining``; the other components are the setting.
    Per-segment components (the residual, ``segment_id:f``) are divided by ``n_segments``; the
    segment variance does not enter (the test set stays the same)."""
    retrain = setting = 0.0
    names = []
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        pieces = _parts(str(name))
        per_segment = name == RESIDUAL or SEGMENT in pieces
        redrawn = name in (RESIDUAL, run_component) or any(p in retraining for p in pieces)
        share = float(variance) / (n_segments if per_segment else 1)
        if redrawn:
            retrain += share
        else:
            setting += share
        if redrawn:
            names.append(f"{name}/N" if per_segment else str(name))
    return Spread(100.0 * math.sqrt(retrain), 100.0 * math.sqrt(setting), ", ".join(names))


def _facets_in(term: str, facets: Sequence[str]) -> int:
    return max(1, sum(part in facets for part in _parts(term)))


def _parts(term: str) -> list[str]:
    return term.replace("/", ":").split(":")


def run_grouping(rows: pd.DataFrame, facets: Sequence[str], terms: Sequence[str]) -> str | None:
    """The model term whose levels are the runs (a facet with one run per level, or a crossing
    such as ``rater:occasion`` that identifies them), if there is one: then it is the run term
    and ``(1|run_id)`` would duplicate it."""
    n_runs = rows[RUN].nunique()
    candidates = [[f] for f in facets] + [_parts(t) for t in terms if SEGMENT not in _parts(t)]
    for parts in candidates:
        pairs = rows[[RUN, *parts]].drop_duplicates()
        if len(pairs) == n_runs and len(pairs[parts].drop_duplicates()) == n_runs:
            return ":".join(parts)
    return None


@dataclass(frozen=True)
class _Vca:
    """One fitted VCA model of one system."""

    label: str
    formula: str
    result: LmmResult
    run_component: str


def _fits(data: MetricData, log: FitLog, system: str, rows: pd.DataFrame) -> list[_Vca]:
    """The run-aware and the main-effects VCA of one system (one fit when they coincide)."""
    facets = data.facets_of(system)
    extra = list(data.options["vca_interactions"])
    terms = [t for t in extra if all(p in [SEGMENT, *facets] for p in _parts(t))]
    main = vca_formula(data.metric, facets, terms)
    grouping = run_grouping(rows, facets, terms)
    aware = main if grouping is not None else vca_formula(data.metric, facets, terms, True)
    out: list[_Vca] = []
    for label, formula in ((VCA_RUN_AWARE, aware), (VCA_MAIN_EFFECTS, main)):
        previous = next((v for v in out if v.formula == formula), None)
        if previous is not None:
            out.append(_Vca(label, formula, previous.result, previous.run_component))
            continue
        result = log.fit(formula, rows, reml=True, analysis=VARIANCE, subset=system)
        if result is None:
            continue
        out.append(_Vca(label, formula, result, grouping if grouping is not None else RUN))
    return out


def variance_components(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """VCA (both models), reliability and D-study (run-aware model) of every system with two
    or more runs."""
    vc_rows: list[dict[str, object]] = []
    reliability: list[dict[str, object]] = []
    dstudy: list[dict[str, object]] = []
    for system in data.systems:
        rows = data.evaluation[data.evaluation[SYSTEM] == system]
        if rows[RUN].nunique() < 2:
            log.skip(
                VARIANCE,
                system,
                "",
                "a single run: segment and residual variance cannot be separated",
            )
            continue
        if runs_identical(rows, data.metric):
            log.skip(VARIANCE, system, "", _IDENTICAL.format(runs=rows[RUN].nunique()))
            continue
        facets = data.facets_of(system)
        agreement = krippendorff_alpha(reliability_matrix(rows, data.metric))
        for vca in _fits(data, log, system, rows):
            key = {"metric": data.metric, SYSTEM: system, VCA_COLUMN: vca.label}
            vc_rows += _component_rows(key, vca.result)
            reliability.append(_reliability_row(data, key, vca, facets, rows, agreement))
            if vca.label == VCA_RUN_AWARE:
                dstudy += _dstudy_rows(data, system, vca.result.variance_components, facets)
    return {
        "variance_components": pd.DataFrame(vc_rows, columns=columns("variance_components")),
        "reliability": pd.DataFrame(reliability, columns=columns("reliability")),
        "dstudy": pd.DataFrame(dstudy, columns=columns("dstudy")),
    }


_IDENTICAL = (
    "all {runs} runs are identical on every segment: the run, facet and residual variances are "
    "0 (retraining changes no score; phi = 1), a boundary no REML fit converges to, so no "
    "components, shares or phi are reported"
)


def runs_identical(rows: pd.DataFrame, metric: str) -> bool:
    """Whether every segment has the same score in every run (to 1e-12 of the scores' size):
    then the likelihood has no finite optimum (residual 0) and a fit's shares are noise."""
    spread = rows.groupby(SEGMENT, sort=False)[metric].agg(lambda v: v.max() - v.min())
    return bool(spread.max() <= 1e-12 * max(1.0, float(rows[metric].abs().max())))


def _component_rows(key: dict[str, object], result: LmmResult) -> list[dict[str, object]]:
    components = result.variance_components
    total = float(components.sum())
    return [
        {
            **key,
            "component": name,
            VARIANCE_COLUMN: float(variance),
            "percent": 100.0 * float(variance) / total if total > 0 else math.nan,
            "n_levels": result.ngroups.get(name, result.nobs) if name != RESIDUAL else result.nobs,
        }
        for name, variance in components.items()
    ]


def _reliability_row(
    data: MetricData,
    key: dict[str, object],
    vca: _Vca,
    facets: Sequence[str],
    rows: pd.DataFrame,
    agreement: float,
) -> dict[str, object]:
    """One row of reliability.csv; ``agreement``: Krippendorff's alpha of the system's runs as
    coders (the same for both VCA models: it does not depend on the model)."""
    components = vca.result.variance_components
    phi = dstudy_phi(components, facets, 1)
    needed = _needed_n(components, facets, int(data.options["dstudy_max_n"]))
    spread = spread_sds(
        components,
        int(rows[SEGMENT].nunique()),
        list(data.options["retraining_facets"]),
        vca.run_component,
    )
    return {
        **key,
        "phi": phi,
        "label": koo_li_label(phi),
        "n_per_facet_for_phi_08": needed if needed is not None else math.nan,
        "runs_for_phi_08": needed ** max(len(facets), 1) if needed is not None else math.nan,
        "n_facets": len(facets),
        "retrain_sd_points": spread.retrain,
        "metaparam_sd_points": spread.metaparam,
        "retrain_components": spread.retrain_components,
        "model": vca.formula,
        "krippendorff_alpha": agreement,
    }


def _dstudy_rows(
    data: MetricData, system: str, components: pd.Series, facets: Sequence[str]
) -> list[dict[str, object]]:
    return [
        {
            "metric": data.metric,
            SYSTEM: system,
            "n_per_facet": n,
            "runs_averaged": n ** max(len(facets), 1),
            "phi": dstudy_phi(components, facets, n),
        }
        for n in range(1, int(data.options["dstudy_max_n"]) + 1)
    ]


def _needed_n(components: pd.Series, facets: Sequence[str], max_n: int) -> int | None:
    """The smallest n with phi(n) >= 0.8: in the tabulated range, else searched beyond it."""
    for n in range(1, max_n + 1):
        if dstudy_phi(components, facets, n) >= PHI_TARGET:
            return n
    return _solve_n(components, facets, max_n)


def _solve_n(components: pd.Series, facets: Sequence[str], start: int) -> int | None:
    """The smallest n beyond the tabulated range that reaches phi >= 0.8 (None if unreachable)."""
    if float(components.get(SEGMENT, 0.0)) <= 0:
        return None
    n = start
    while n < 1_000_000:
        n *= 2
        if dstudy_phi(components, facets, n) >= PHI_TARGET:
            low, high = n // 2, n
            while high - low > 1:
                middle = (low + high) // 2
                if dstudy_phi(components, facets, middle) >= PHI_TARGET:
                    high = middle
                else:
                    low = middle
            return high
    return None
