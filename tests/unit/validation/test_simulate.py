"""The experiment simulator: deterministic, the promised layout, and its truth is recoverable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.variance import variance_components
from infrepro.core.vocabulary import VCA_RUN_AWARE
from infrepro.validation.simulate import Design, Facet, System, a_vs_a, simulate


def grid_design(**options: object) -> Design:
    """Baseline: 6 seeds; competitor: 3 lambda x 2 noise x 4 seeds, with a dev score."""
    return Design(
        systems=(
            System("baseline", facets=("seed",), levels={"seed": 6}),
            System("competitor", effect=0.02, property_slope=0.002),
        ),
        facets=(
            Facet("lam", 3, sd=0.04),
            Facet("noise", 2, effects=(0.0, 0.01)),
            Facet("seed", 4, sd=0.011),
        ),
        n_segments=50,
        property_slope=0.003,
        dev_sd=0.02,
        **options,  # type: ignore[arg-type]
    )


def test_same_seed_same_experiment_other_seed_other_experiment() -> None:
    design = grid_design(missing_runs=0.2, missing_rows=0.1)
    first, again, other = simulate(design, 11), simulate(design, 11), simulate(design, 12)
    pd.testing.assert_frame_equal(first.evaluation, again.evaluation)
    pd.testing.assert_frame_equal(first.runs, again.runs)
    pd.testing.assert_frame_equal(first.truth.effects, again.truth.effects)
    assert not np.allclose(first.evaluation["score"].iloc[:50], other.evaluation["score"].iloc[:50])


def test_layout_of_the_tables() -> None:
    sim = simulate(grid_design(), 3)
    runs, evaluation = sim.runs, sim.evaluation
    assert list(runs.columns) == ["run_id", "system", "lam", "noise", "seed", "dev_score"]
    assert runs["run_id"].is_unique
    counts = runs["system"].value_counts()
    assert counts["baseline"] == 6 and counts["competitor"] == 3 * 2 * 4
    baseline = runs[runs["system"] == "baseline"]
    assert baseline[["lam", "noise"]].isna().all().all() and baseline["seed"].notna().all()
    assert len(evaluation) == len(runs) * 50
    assert (evaluation.groupby("run_id")["segment_id"].nunique() == 50).all()
    # the property belongs to the segment: identical in every run
    assert (evaluation.groupby("segment_id")["length"].nunique() == 1).all()
    assert sim.truth.system_means["competitor"] == pytest.approx(0.5 + 0.02 + 0.005)


def test_missing_cells_and_rows() -> None:
    sim = simulate(grid_design(missing_runs=0.25, missing_rows=0.1), 5)
    counts = sim.runs["system"].value_counts()
    assert counts["competitor"] == 24 - 6 and counts["baseline"] == 6 - 2
    share_missing = 1 - len(sim.evaluation) / (len(sim.runs) * 50)
    assert 0.06 < share_missing < 0.14
    assert set(sim.evaluation["run_id"]) == set(sim.runs["run_id"])


def test_missing_rows_leave_the_effects_unchanged() -> None:
    full = simulate(grid_design(), 9)
    holes = simulate(grid_design(missing_rows=0.3), 9)
    pd.testing.assert_frame_equal(full.truth.effects, holes.truth.effects)


def test_interaction_run_offsets_are_a_component_of_their_own() -> None:
    design = Design(
        systems=(System("a", run_sd=0.01),),
        facets=(Facet("lam", 3, sd=0.02), Facet("seed", 3, sd=0.01)),
    )
    components = simulate(design, 1).truth.components("a")
    assert components["run_id"] == pytest.approx(1e-4)
    assert components["seed"] == pytest.approx(1e-4)


def test_vca_recovers_the_simulated_components() -> None:
    """On a big design the REML VCA finds the realised facet variances and the residual.

    Given the realised level effects a_i, the estimate differs from their variance s^2 mostly by
    the cross term of a_i and the residual noise of the level means (SD sigma_n): about
    N(0, 4 s^2 sigma_n^2 / (L - 1)). The test allows 4 of those SDs.
    """
    residual_sd, n_segments, levels = 0.068, 400, {"lam": 10, "seed": 8}
    design = Design(
        systems=(System("a"),),
        facets=(Facet("lam", levels["lam"], sd=0.04), Facet("seed", levels["seed"], sd=0.011)),
        n_segments=n_segments,
        residual_sd=residual_sd,
    )
    sim = simulate(design, 2024)
    estimated = variance_components(sim.metric_data(), FitLog("score"))["variance_components"]
    estimated = estimated[estimated["vca"] == VCA_RUN_AWARE].set_index("component")["variance"]
    effects = sim.truth.effects
    n_rows = len(sim.evaluation)
    for facet, n_levels in levels.items():
        realised = effects.loc[effects["facet"] == facet, "value"].var(ddof=1)
        noise_sd = residual_sd / np.sqrt(n_rows / n_levels)
        tolerance = 8 * np.sqrt(realised) * noise_sd / np.sqrt(n_levels - 1) + noise_sd**2
        assert abs(estimated[facet] - realised) < tolerance
    segments = effects.loc[effects["kind"] == "segment", "value"].var(ddof=1)
    assert estimated["segment_id"] == pytest.approx(segments, rel=0.05)
    assert estimated["Residual"] == pytest.approx(residual_sd**2, rel=0.03)  # SE 0.8%
    # the population truth, within the sampling error of 400 segments (SE 7%)
    truth = sim.truth.components("a")
    assert estimated["segment_id"] == pytest.approx(truth["segment_id"], rel=0.28)


def test_a_vs_a_systems_are_identical() -> None:
    design = a_vs_a(n_segments=20, runs_per_system=4)
    sim = simulate(design, 0)
    assert sim.truth.difference("A", "A~") == 0.0
    assert sim.runs.groupby("system").size().to_dict() == {"A": 4, "A~": 4}
    # seeds 1..4 of A and A~ are different runs with different offsets
    runs = sim.truth.effects[sim.truth.effects["kind"] == "facet"]
    assert runs.groupby("system")["value"].apply(tuple).nunique() == 2


def slope_design(slope_sd: float, n_segments: int = 300) -> Design:
    """Two systems with 8 seeds each; the competitor's runs may get their own random slopes."""
    return Design(
        systems=(System("base"), System("comp", slope_sd=slope_sd)),
        facets=(Facet("seed", 8, sd=0.011),),
        n_segments=n_segments,
        property_slope=0.002,
    )


def test_random_run_slopes_leave_every_other_draw_unchanged() -> None:
    plain, sloped = simulate(slope_design(0.0), 5), simulate(slope_design(0.003), 5)
    base = plain.evaluation["system"] == "base"
    pd.testing.assert_frame_equal(plain.evaluation[base], sloped.evaluation[base])
    assert not np.allclose(
        plain.evaluation.loc[~base, "score"], sloped.evaluation.loc[~base, "score"]
    )
    pd.testing.assert_frame_equal(plain.truth.effects, sloped.truth.effects)
    assert (
        sloped.truth.property_slopes
        == plain.truth.property_slopes
        == {"base": 0.002, "comp": 0.002}
    )
    # the runs' slope variation is counted in the competitor's residual component
    extra = sloped.truth.components("comp")["Residual"] - plain.truth.components("comp")["Residual"]
    assert extra == pytest.approx(0.003**2 * 8.0**2)
    assert sloped.truth.components("base").equals(plain.truth.components("base"))


def test_random_run_slopes_have_the_given_sd() -> None:
    """Per-run least-squares slopes: their SD across runs is sqrt(slope_sd^2 + sampling var);
    without slope_sd only the sampling variance (residual SD / (property SD sqrt(n))) is left."""
    n_segments = 400
    sampling = 0.068 / (8.0 * np.sqrt(n_segments))  # 0.00043
    for slope_sd in (0.0, 0.004):
        sim = simulate(
            Design(
                systems=(System("comp", slope_sd=slope_sd),),
                facets=(Facet("seed", 40, sd=0.011),),
                n_segments=n_segments,
            ),
            9,
        )
        slopes = sim.evaluation.groupby("run_id").apply(
            lambda g: np.polyfit(g["length"], g["score"], 1)[0], include_groups=False
        )
        expected = np.sqrt(slope_sd**2 + sampling**2)
        assert slopes.std(ddof=1) == pytest.approx(expected, rel=0.35)  # 40 runs: SE 11 %
