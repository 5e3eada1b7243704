"""Calibration of the run-aware property tests and the run-aware VCA (docs/method.md §4.3-4.5,
§4b.3): the conditional test with a run variance per system, the metaparam tests of every facet
with Holm, and the retraining SD the run-aware VCA recovers. Each experiment runs through the
analyses' own functions; benchmarks/calibration.py (`run-variance`) drives them and reports."""

from __future__ import annotations

import math

import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import CONDITIONAL, METAPARAM, interaction_only, joint, run_aware
from infrepro.core.vocabulary import SYSTEM as SYSTEM_COLUMN
from infrepro.validation.calibration import (
    ALPHA,
    BASE,
    COMP,
    INTERACTION_SLOPE_SD,
    NO_RESAMPLING,
    shared_facet_design,
    two_systems,
)
from infrepro.validation.simulate import REAL_RUN_SD, Design, Facet, System

RETRAIN = "retrain_sd_points"
METAPARAM_SD = "metaparam_sd_points"
RUN_VARIANCE_SEED_BLOCK = {"cond-b": 1, "meta-null": 1, "vca-run": 2}  # seeds: --seed + 1e6 x block


def run_variance_designs() -> dict[str, tuple[str, Design]]:
    """The cells of the run-variance calibration (200 segments; the property is length, mean 20,
    SD 8)."""
    return {
        "cond-b": (
            "conditional, 18 stable (run SD 0.002) vs 6 variable (run SD 0.02) runs, runs' own "
            "length slopes SD 0.001, common slope 0.002, no system effect, no interaction",
            two_systems(
                (18, 6), (0.002, 0.02), slope_sd=INTERACTION_SLOPE_SD, property_slope=0.002
            ),
        ),
        "meta-null": (
            "metaparam, one system, 3 lambda x 2 noise x 5 seeds without effects, run SD 0.011, "
            "runs' own length slopes SD 0.001, common slope 0.002: a full null",
            Design(
                systems=(System(COMP, run_sd=REAL_RUN_SD, slope_sd=INTERACTION_SLOPE_SD),),
                facets=(Facet("lam", 3), Facet("noise", 2), Facet("seed", 5)),
                property_slope=0.002,
            ),
        ),
        "vca-run": (
            "VCA recovery, design (c): B = 3 lambda (SD 0.02) x 2 noise x 5 seeds, run SD 0.011 "
            "(1.1 points), no shared seed or noise effect; A = 18 seeds, run SD 0.011",
            shared_facet_design(),
        ),
    }


def _tests_of(tests, analysis: str) -> list[dict[str, object]]:
    rows = tests[tests["analysis"] == analysis]
    return [
        {
            "facet": str(r["facet"]),
            "log10_p": float(r["log10_p"]),
            "log10_p_holm": float(r["log10_p_holm"]),
            "df": float(r["dendf"]),
            "method": str(r["method"]),
        }
        for _, r in rows.iterrows()
    ]


def runaware_property_tests(data: MetricData, analysis: str) -> pd.DataFrame:
    """The run-aware joint and interaction tests of the conditional (``analysis`` =
    "conditional") or metaparam analysis as the analyses compute them: the same rows
    (``property_rows``, ``facet_variants``), tested facets (``tested_facets``), fit and tests
    (``run_aware_fit``) and Holm families (``_Tables.frames``); the paper's GLRTs and the
    post-hoc tables, which these tests do not use, are left out (they cost 5x the time)."""
    from infrepro.analyses.conditional import Cell, _Tables, property_rows, run_aware_fit
    from infrepro.analyses.metaparam import facet_variants, tested_facets

    jobs = []
    if analysis == CONDITIONAL:
        for variant, rows, _ in property_rows(data, data.evaluation):
            jobs.append((SYSTEM_COLUMN, "all runs", data.baseline, variant, rows))
    else:
        for system in data.systems:
            for facet in tested_facets(data, system):
                for variant, rows, reference in facet_variants(data, system, facet):
                    jobs.append((facet, system, reference, variant, rows))
    log, tables = FitLog(data.metric), _Tables(data.binned_columns)
    for factor, subset, reference, variant, rows in jobs:
        numeric = data.is_numeric(variant)
        cell = Cell(factor, variant, analysis, subset, reference)
        run_aware_fit(data, log, tables, rows, cell, numeric)
    return tables.frames()["tests"]


def run_variance_experiment(key: str, sim) -> dict[str, object]:
    """One experiment through the analyses' own functions (run-aware tests as
    ``runaware_property_tests``; ``variance_components``), their tables read back."""
    from infrepro.analyses.variance import variance_components

    data = sim.metric_data(options=NO_RESAMPLING)
    if key in ("cond-b", "meta-null"):
        analysis = CONDITIONAL if key == "cond-b" else METAPARAM
        tests = runaware_property_tests(data, analysis)
        names = (joint(run_aware(analysis)), interaction_only(run_aware(analysis)))
        return {name: _tests_of(tests, name) for name in names}
    table = variance_components(data, FitLog(data.metric))["reliability"]
    out: dict[str, object] = {}
    for system in (BASE, COMP):
        truth = sim.truth.spread(system, sim.design.n_segments)
        out[system] = {
            "truth": [truth.retrain, truth.metaparam],
            **{
                str(r["vca"]): [float(r[RETRAIN]), float(r[METAPARAM_SD]), float(r["phi"])]
                for _, r in table[table[SYSTEM_COLUMN] == system].iterrows()
            },
            "phi": sim.truth.phi[system],
        }
    return out


def _family_rejects(rows: list[dict[str, object]], holm: bool = True) -> bool:
    column = "log10_p_holm" if holm else "log10_p"
    return any(float(r[column]) < math.log10(ALPHA) for r in rows)
