"""Power and runs needed (docs/method.md §4d.1): the strata form of the pair's statistic equals
the engine's REML fit + Kenward-Roger t on balanced data (boundary fits included), the
simulated power of the decision's calibrated test agrees with its quadrature where that is
exact, it holds the level, and the answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.planning import (
    Components,
    PlannedTest,
    PowerRun,
    StrataDraws,
    draw_strata,
    headline_t,
    plan,
    planning_analysis,
    strata_estimates,
)
from infrepro.core.vocabulary import headline_formula
from infrepro.lmm import KENWARD_ROGER, fit
from infrepro.validation.simulate import Design, Facet, System, simulate


def _design(n_a: int, n_b: int, sd_a: float, sd_b: float, segments: int = 60) -> Design:
    return Design(
        systems=(
            System("A", levels={"seed": n_a}, run_sd=sd_a),
            System("B", levels={"seed": n_b}, run_sd=sd_b, effect=0.01),
        ),
        facets=(Facet("seed", max(n_a, n_b)),),
        n_segments=segments,
    )


def _observed_strata(evaluation, n_a: int, n_b: int) -> tuple[StrataDraws, float]:
    """The strata's mean squares of one balanced data set, as 'draws' of a unit model
    (all lambdas 1), and the difference of the system means."""
    y = evaluation.pivot_table(index="run_id", columns="segment_id", values="score")
    system = evaluation.drop_duplicates("run_id").set_index("run_id")["system"].reindex(y.index)
    Y = y.to_numpy()
    runs, segments = Y.shape
    rows, cols, grand = Y.mean(1), Y.mean(0), Y.mean()
    df_res = (runs - 1) * (segments - 1)
    ss_res = ((Y - rows[:, None] - cols[None, :] + grand) ** 2).sum()
    ms = {}
    for k in ("A", "B"):
        r = rows[(system == k).to_numpy()]
        ms[k] = (segments * ((r - r.mean()) ** 2).sum() / (len(r) - 1), r.mean())
    draws = StrataDraws(
        n_a=n_a,
        n_b=n_b,
        segments=segments,
        res=np.array([ss_res / df_res]),
        seg=np.array([runs * ((cols - grand) ** 2).sum() / (segments - 1)]),
        run_a=np.array([ms["A"][0]]),
        run_b=np.array([ms["B"][0]]),
        normal=np.array([0.0]),
    )
    return draws, ms["A"][1] - ms["B"][1]


CASES = [  # (n_a, n_b, run SD A, run SD B, seed): interior and boundary (sigma2_run = 0) fits
    (6, 6, 0.011, 0.011, 1),
    (3, 3, 0.011, 0.011, 2),
    (3, 3, 0.002, 0.011, 3),
    (18, 6, 0.002, 0.02, 4),
    (2, 2, 0.004, 0.004, 5),
    (3, 3, 0.0, 0.0, 6),
    (4, 7, 0.0, 0.03, 7),
]


@pytest.mark.parametrize("case", CASES)
def test_strata_test_equals_the_engine(case):
    n_a, n_b, sd_a, sd_b, seed = case
    unit = Components(segment=0.0, run_a=0.0, run_b=0.0, residual=1.0, segments=60)
    boundary = 0
    for rep in range(3):
        evaluation = simulate(_design(n_a, n_b, sd_a, sd_b), 100 * seed + rep).evaluation
        fitted = fit(
            headline_formula("score", ["A", "B"], False),
            evaluation,
            reml=True,
            reference_levels={"system": "A"},
        )
        engine = fitted.contest(fitted.contrast_matrix({"systemB": -1.0}), KENWARD_ROGER)
        draws, difference = _observed_strata(evaluation, n_a, n_b)
        t = headline_t(unit, difference, draws)
        assert t[0] == pytest.approx(engine.statistic, rel=1e-6)
        boundary += int((fitted.variance_components.iloc[1:3] == 0).any())
    if case[-1] in (2, 6):  # these seeds give boundary fits: the case is exercised
        assert boundary > 0


EXAMPLE = Components(segment=0.0089, run_a=0.00017, run_b=0.0003, residual=0.0045, segments=500)


TEST = PlannedTest(0.05)


def test_simulation_agrees_with_the_quadrature_where_it_is_exact():
    """With 15 runs per system and run variances far above the residual's share (no boundary
    pooling) the simulated power equals the calibrated test's power by quadrature."""
    comp = Components(segment=0.009, run_a=0.0004, run_b=0.0004, residual=0.0045, segments=500)
    result = PowerRun(TEST, 20_000, 3)(comp, 0.012, 15, 15)
    assert 0.3 < result.analytic < 0.8
    assert abs(result.power - result.analytic) < 4 * result.mc_se + 0.005


@pytest.mark.parametrize("runs", [(6, 6), (10, 2), (2, 10), (5, 3)])
def test_the_simulated_test_holds_the_level(runs):
    """δ = 0: rejections at most the level (§4b.11 holds it over the band), including the
    designs the run-count rule refused (10 vs 2); and the check can fail: Welch's df would
    reject more often at 10 vs 2 (rule-of-thumb 0.10)."""
    n_a, n_b = runs
    t = headline_t(EXAMPLE, 0.0, draw_strata(n_a, n_b, 500, 40_000, 9))
    rate = float(np.mean(np.abs(t) > TEST.critical(n_a, n_b)))
    assert rate < 0.05 + 3 * (0.05 * 0.95 / 40_000) ** 0.5
    assert rate > 0.001


def test_plan_answers_are_consistent_and_seeded():
    run = PowerRun(TEST, 1000, 1)
    result = plan(EXAMPLE, 0.02, (5, 5), run)
    powers = [p.power for p in result.curve]
    assert [p.n_a for p in result.curve] == list(range(2, 31))
    assert powers[-1] > powers[0]
    for target in (0.8, 0.9):
        needed = result.needed[target]
        assert needed is not None and needed.power >= target
        assert all(p.power < target for p in result.curve if p.n_a < needed.n_a)
        cheapest = result.cheapest[target]
        assert cheapest is not None and cheapest.power >= target
        assert cheapest.n_a + cheapest.n_b <= 2 * needed.n_a
    assert result.current.n_a == 5 and result.current.power == result.curve[3].power
    assert plan(EXAMPLE, 0.02, (5, 5), run) == result
    assert np.isnan(plan(EXAMPLE, 0.02, (1, 5), run, max_runs=4).current.power)
    # the noisier competitor gets more runs in the cheapest allocation
    uneven = Components(0.0089, 0.00002, 0.0008, 0.0045, 500)
    cheap = plan(uneven, 0.03, (5, 5), run).cheapest[0.8]
    assert cheap is not None and cheap.n_b > cheap.n_a


def test_cheapest_allocations_are_judged_designs():
    """A very quiet baseline makes 2 of its runs nearly free in power: the calibrated test
    holds the level at every allocation, so the cheapest one may be unbalanced, and its
    simulated level is still at most α."""
    quiet = Components(0.0089, 1e-7, 0.0008, 0.0045, 500)
    run = PowerRun(TEST, 1000, 1)
    for target in (0.8, 0.9):
        cheap = plan(quiet, 0.03, (5, 5), run).cheapest[target]
        assert cheap is not None and cheap.power >= target
        t = headline_t(quiet, 0.0, draw_strata(cheap.n_a, cheap.n_b, 500, 20_000, 5))
        assert float(np.mean(np.abs(t) > TEST.critical(cheap.n_a, cheap.n_b))) < 0.056


def test_the_bounded_search_finds_what_the_full_search_finds(monkeypatch):
    """`_cheapest` skips a total when the power at the critical value's floor stays below the
    window: the same answers as evaluating every allocation's calibrated guide."""
    run = PowerRun(TEST, 400, 3)
    cases = [(EXAMPLE, 0.02), (Components(0.0089, 0.00002, 0.0008, 0.0045, 500), 0.03)]
    fast = [plan(comp, delta, (5, 5), run, max_runs=12).cheapest for comp, delta in cases]
    monkeypatch.setattr(PlannedTest, "critical_floor", lambda self, a, b: 0.0)
    full = [plan(comp, delta, (5, 5), run, max_runs=12).cheapest for comp, delta in cases]
    assert fast == full
    assert any(p is not None for answer in fast for p in answer.values())


def test_planning_analysis_table():
    data = simulate(_design(4, 5, 0.01, 0.01, segments=40), 2).metric_data(
        options={"planning": {"draws": 200, "min_effect": 2.0}}
    )
    table = planning_analysis(data, FitLog("score"), alpha=0.05)["planning"]
    assert set(table["effect_source"]) == {"observed (post hoc)", "min_effect"}
    current = table[
        (table["design"] == "current") & (table["effect_source"] == "observed (post hoc)")
    ]
    assert (current["runs_baseline"].iloc[0], current["runs_competitor"].iloc[0]) == (4, 5)
    assert len(table[table["design"] == "equal"]) == 2 * 29
    assert table["mc_se"].dropna().between(0, 0.5).all()


def test_power_agrees_with_lme4_refitted_per_draw():
    """tests/golden/make_golden_power.R refits lme4 + lmerTest on every simulated experiment
    (simr's way); the strata simulation must agree within Monte Carlo error."""
    golden = json.loads(
        (Path(__file__).parents[2] / "golden/fixtures_planning/power.json").read_text()
    )
    comp = Components(
        golden["sd_segment"] ** 2,
        golden["sd_run"] ** 2,
        golden["sd_run"] ** 2,
        golden["sd_residual"] ** 2,
        golden["segments"],
    )
    n = golden["n_runs"]  # lmerTest's test: Welch's df on the strata's estimates
    draws = 50_000
    est = strata_estimates(comp, golden["effect"], draw_strata(n, n, comp.segments, draws, 5))
    nu = (est.v_a + est.v_b) ** 2 / (est.v_a**2 / (n - 1) + est.v_b**2 / (n - 1))
    hits = (2 * stats.t.sf(np.abs(est.t), nu) < 0.05) & (
        np.sign(est.t) == np.sign(golden["effect"])
    )
    power = float(hits.mean())
    tolerance = 3 * np.hypot(golden["mc_se"], np.sqrt(power * (1 - power) / draws))
    assert abs(power - golden["power"]) <= tolerance, (power, golden["power"])
