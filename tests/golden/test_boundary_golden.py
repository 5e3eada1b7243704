"""Boundary, degenerate and refused fits against R lme4 1.1-31 (docs/method.md §4.6.1).

Fixtures: tests/golden/fixtures_boundary/*.json, made by tests/golden/make_golden_boundary.R on
tests/golden/data/boundary.csv, the REML VCA ``score ~ 1 + (1|segment_id) + (1|seed)`` of one
system per case: runs identical on every segment, runs at the boundary (seed variance 0), a
constant metric and a single segment. Tolerances: variance components 1e-4 relative (a
component at lme4's 0 is exactly 0 in our tables), REML log-likelihood 1e-6 relative; for
identical runs, where the criterion has no minimum and lme4 stops at a finite theta on the way
to the limit, the segment component 1e-3.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from infrepro.analyses import MetricData, run_analysis
from infrepro.core.vocabulary import NOT_CONVERGED, RESIDUAL, SEGMENT, SYSTEM, VCA_RUN_AWARE
from infrepro.lmm import LmmError, fit

GOLDEN = Path(__file__).parent
VC_REL = 1e-4
LL_REL = 1e-6
LIMIT_REL = 1e-3


@cache
def fixture(case: str) -> dict:
    return json.loads((GOLDEN / "fixtures_boundary" / f"{case}.json").read_text())


@cache
def rows(case: str) -> pd.DataFrame:
    frame = pd.read_csv(
        GOLDEN / "data" / "boundary.csv", dtype={"seed": str, "segment_id": str, "run_id": str}
    )
    return frame[frame[SYSTEM] == case].reset_index(drop=True)


def experiment(*systems: str) -> MetricData:
    """The cases as systems of one experiment (the first the baseline), facet ``seed``."""
    evaluation = pd.concat([rows(s) for s in systems], ignore_index=True)
    return MetricData(
        metric="score",
        better="higher",
        baseline=systems[0],
        evaluation=evaluation,
        runs=evaluation[["run_id", SYSTEM, "seed"]].drop_duplicates().reset_index(drop=True),
        facets=["seed"],
        properties=[],
    )


@cache
def variance_tables() -> dict[str, pd.DataFrame]:
    return run_analysis("variance", experiment("identical", "boundary"))


def run_aware(table: str, system: str) -> pd.DataFrame:
    frame = variance_tables()[table]
    return frame[(frame[SYSTEM] == system) & (frame["vca"] == VCA_RUN_AWARE)].set_index(
        "component" if table == "variance_components" else SYSTEM
    )


def test_boundary_fit_matches_lme4_with_the_seed_variance_reported_as_exactly_zero() -> None:
    fx = fixture("boundary")
    assert fx["singular"] and fx["lme4_converged"] and fx["variance_components"]["seed"] == 0
    ours = fit(fx["formula"], rows("boundary"), reml=True)
    assert ours.converged and ours.singular
    assert ours.loglik == pytest.approx(fx["loglik"], rel=LL_REL)
    for name in (SEGMENT, RESIDUAL):
        assert ours.variance_components[name] == pytest.approx(
            fx["variance_components"][name], rel=VC_REL
        )
    assert ours.reported_components["seed"] == 0.0
    table = run_aware("variance_components", "boundary")
    assert table.loc["seed", "variance"] == 0.0 and table.loc["seed", "percent"] == 0.0
    assert bool(table["converged"].all())
    for name in (SEGMENT, RESIDUAL):
        assert table.loc[name, "variance"] == pytest.approx(
            fx["variance_components"][name], rel=VC_REL
        )


def test_phi_and_retraining_sd_follow_from_the_zero_boundary_component() -> None:
    fx = fixture("boundary")["variance_components"]
    segment, residual = fx[SEGMENT], fx[RESIDUAL]
    row = run_aware("reliability", "boundary").loc["boundary"]
    assert row["phi"] == pytest.approx(segment / (segment + residual), rel=VC_REL)
    n_segments = rows("boundary")[SEGMENT].nunique()
    assert row["retrain_sd_points"] == pytest.approx(
        100 * math.sqrt(residual / n_segments), rel=VC_REL
    )
    assert bool(row["converged"])


def test_identical_runs_report_zero_run_variance_and_no_phi_claim() -> None:
    fx = fixture("identical")
    # lme4 ends on the boundary with a residual variance of ~1e-16: the degenerate limit
    assert fx["variance_components"]["seed"] == 0
    assert fx["variance_components"][RESIDUAL] < 1e-12 * fx["variance_components"][SEGMENT]
    table = run_aware("variance_components", "identical")
    assert table.loc["seed", "variance"] == 0.0 and table.loc[RESIDUAL, "variance"] == 0.0
    assert table.loc[SEGMENT, "variance"] == pytest.approx(
        fx["variance_components"][SEGMENT], rel=LIMIT_REL
    )
    assert not table["converged"].any() and table["percent"].isna().all()
    row = run_aware("reliability", "identical").loc["identical"]
    assert math.isnan(row["phi"]) and row["label"] == NOT_CONVERGED
    assert row["retrain_sd_points"] == 0.0 and row["metaparam_sd_points"] == 0.0
    assert "identical" not in set(variance_tables()["dstudy"][SYSTEM])
    notes = variance_tables()["diagnostics"]
    assert (
        notes[(notes["subset"] == "identical") & (notes["status"] == "note")]["reason"]
        .str.contains("identical on every segment")
        .any()
    )


def test_degenerate_fit_of_identical_runs_is_not_called_converged() -> None:
    fx = fixture("identical")
    ours = fit(fx["formula"], rows("identical"), reml=True)
    assert not ours.converged
    assert any("degenerate" in m for m in ours.messages)


def test_constant_metric_is_refused_where_lme4_reaches_minus_infinity() -> None:
    fx = fixture("constant")
    assert fx["deviance_criterion"] is None and not fx["lme4_converged"]  # -Inf, written null
    with pytest.raises(LmmError, match="constant"):
        fit(fx["formula"], rows("constant"), reml=True)
    tables = run_analysis("variance", experiment("boundary", "constant"))
    assert "constant" not in set(tables["variance_components"][SYSTEM])
    skipped = tables["diagnostics"][tables["diagnostics"]["status"] == "skipped"]
    assert skipped[skipped["subset"] == "constant"]["reason"].str.contains("constant").any()


def test_one_segment_design_is_refused_as_lme4_refuses_it() -> None:
    fx = fixture("one_segment")
    assert fx["outcome"] == "error" and "> 1 sampled level" in fx["error"]
    with pytest.raises(LmmError, match="1 level"):
        fit(fx["formula"], rows("one_segment"), reml=True)
