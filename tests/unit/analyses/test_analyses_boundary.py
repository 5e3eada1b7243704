"""Fits that did not converge are flagged and never read for a share, phi, a plan or a verdict
(docs/method.md §4.6.1); the engine's fits are marked non-converged here by a FitLog wrapper."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses import MetricData, run_analysis
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.metaparam import facet_importance
from infrepro.core.registry import COMPARISON, EFFECT_SCALE, PLANNING, SUMMARY, VARIANCE
from infrepro.core.vocabulary import NOT_CONVERGED, SYSTEM, VCA_RUN_AWARE, columns


def experiment(n_segments: int = 30) -> MetricData:
    """Two systems, four seeds each, a run SD of 2 points."""
    rng = np.random.default_rng(7)
    segment = rng.normal(0, 0.2, n_segments)
    rows = []
    for system, shift in (("base", 0.0), ("comp", 0.03)):
        for seed in range(4):
            offset = rng.normal(0, 0.02)
            for s in range(n_segments):
                rows.append(
                    {
                        "run_id": f"{system}_{seed}",
                        SYSTEM: system,
                        "seed": str(seed),
                        "segment_id": f"s{s:02d}",
                        "ter": 0.5 + shift + segment[s] + offset + rng.normal(0, 0.05),
                    }
                )
    evaluation = pd.DataFrame(rows)
    return MetricData(
        metric="ter",
        better="lower",
        baseline="base",
        evaluation=evaluation,
        runs=evaluation[["run_id", SYSTEM, "seed"]].drop_duplicates().reset_index(drop=True),
        facets=["seed"],
        properties=[],
    )


@pytest.fixture
def not_converging(monkeypatch: pytest.MonkeyPatch):
    """Make the fits of the given analyses come back with ``converged`` False."""

    def patch(*analyses: str) -> None:
        original = FitLog.fit

        def fit(self, formula, data, **kwargs):
            result = original(self, formula, data, **kwargs)
            if result is not None and kwargs["analysis"] in analyses:
                result = dataclasses.replace(result, converged=False)
                self.rows[-1]["converged"] = False
            return result

        monkeypatch.setattr(FitLog, "fit", fit)

    return patch


def test_non_converged_vca_is_flagged_and_gives_no_share_phi_sd_or_dstudy(not_converging) -> None:
    not_converging(VARIANCE)
    tables = run_analysis(VARIANCE, experiment())
    components = tables["variance_components"]
    assert not components["converged"].any() and components["percent"].isna().all()
    assert (components["variance"] > 0).all()  # the estimates stay, marked, for inspection
    reliability = tables["reliability"]
    assert reliability["phi"].isna().all() and set(reliability["label"]) == {NOT_CONVERGED}
    assert reliability[["retrain_sd_points", "metaparam_sd_points"]].isna().all().all()
    assert tables["dstudy"].empty
    notes = tables["diagnostics"][tables["diagnostics"]["status"] == "note"]
    assert set(notes["subset"]) == {"base", "comp"}
    assert notes["reason"].str.contains("did not converge").all()


def test_converged_vca_rows_say_so() -> None:
    tables = run_analysis(VARIANCE, experiment())
    assert tables["variance_components"]["converged"].all()
    assert tables["reliability"]["converged"].all()
    assert tables["reliability"]["phi"].notna().all()


def test_importance_ranks_no_facet_of_a_system_whose_vca_did_not_converge() -> None:
    data = experiment()
    components = run_analysis(VARIANCE, data)["variance_components"]
    components.loc[components[SYSTEM] == "base", "converged"] = False
    log = FitLog("ter")
    importance = facet_importance(data, log, components)
    assert list(importance[SYSTEM]) == ["comp"]
    notes = log.diagnostics()
    assert notes.loc[notes["subset"] == "base", "reason"].str.contains(NOT_CONVERGED).any()


def test_planning_makes_no_plan_from_a_non_converged_headline_fit(not_converging) -> None:
    not_converging(PLANNING)
    none = pd.DataFrame(columns=columns("decisions"))  # no records: the test at α
    tables = run_analysis(PLANNING, experiment(), {"decisions": none})
    assert tables["planning"].empty
    skipped = tables["diagnostics"][tables["diagnostics"]["status"] == "skipped"]
    assert skipped["reason"].str.contains("did not converge").any()


def test_decision_table_reads_no_verdict_from_a_non_converged_model(not_converging) -> None:
    not_converging(SUMMARY)
    tables = run_analysis(SUMMARY, experiment())
    decisions = tables["decisions"]
    assert len(decisions) and (decisions["verdict"] == NOT_CONVERGED).all()
    assert decisions["note"].str.contains("did not converge").all()
    assert tables["summary"]["note"].str.contains("did not converge").all()


def test_run_aware_rows_of_a_boundary_fit_report_the_run_variance_as_zero() -> None:
    data = experiment()
    flat = data.evaluation.copy()
    means = flat.groupby("run_id")["ter"].transform("mean")
    system_means = flat.groupby(SYSTEM)["ter"].transform("mean")
    flat["ter"] = flat["ter"] - means + system_means  # every run has its system's mean
    tables = run_analysis(VARIANCE, dataclasses.replace(data, evaluation=flat))
    vc = tables["variance_components"]
    seed = vc[(vc["vca"] == VCA_RUN_AWARE) & (vc["component"] == "seed")]
    assert (seed["variance"] == 0.0).all() and seed["converged"].all()
    assert tables["reliability"]["phi"].notna().all()


def test_effect_sizes_are_not_read_from_a_non_converged_effect_scale_fit(not_converging) -> None:
    not_converging(EFFECT_SCALE)
    tables = run_analysis(COMPARISON, experiment())
    assert tables["contrasts"]["effect_size"].isna().all()
    notes = tables["diagnostics"][tables["diagnostics"]["status"] == "note"]
    assert notes["reason"].str.contains("no effect sizes").any()
