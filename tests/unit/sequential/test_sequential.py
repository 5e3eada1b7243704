"""Sequential looks (docs/method.md §4e): the recursion against Monte Carlo of correlated
normals and the bivariate normal, the spending identities, conditional power against its closed
form and Monte Carlo, the confidence sequence's coverage, and the decisions of a plan."""

from __future__ import annotations

import datetime
import math

import numpy as np
import pytest
from scipy import stats

from infrepro.io.looks import look_numbers
from infrepro.stats.anytime import (
    confidence_sequence,
    paired_differences,
    t_boundary,
)
from infrepro.stats.group_sequential import (
    LOOK_ALPHA_FACTOR,
    alpha_spent,
    conditional_power,
    conditional_power_at,
    crossing_probabilities,
    efficacy_boundaries,
    final_boundary,
    information_fraction,
    look_z,
)
from infrepro.stats.sequential_plan import (
    WELCH,
    LookData,
    SequentialPlan,
    analyse_looks,
    design_characteristics,
    futility_band,
    plan_alpha,
    plan_sequential,
    welch_look,
)


def brownian_z(fractions, drift: float, n: int, seed: int, start=None) -> np.ndarray:
    """Z(t_k) = S(t_k)/√t_k for a Brownian motion S with drift η (from S(t_0) = z_0 √t_0)."""
    rng = np.random.default_rng(seed)
    t0, z0 = start if start else (0.0, 0.0)
    t = np.concatenate([[t0], fractions])
    steps = rng.normal(drift * np.diff(t), np.sqrt(np.diff(t)), size=(n, len(fractions)))
    s = z0 * math.sqrt(t0) + np.cumsum(steps, axis=1)
    return s / np.sqrt(np.asarray(fractions))


def first_exits(z: np.ndarray, upper, lower, inner=None):
    """Per look, the share of paths that first leave there: above, below, in the inner band."""
    k = z.shape[1]
    inner = np.zeros(k) if inner is None else np.asarray(inner)
    up = z >= np.asarray(upper)
    low = z <= np.asarray(lower)
    mid = (np.abs(z) < inner) & ~up & ~low
    stop = up | low | mid
    first = np.where(stop.any(1), stop.argmax(1), k)
    rows = np.arange(z.shape[0])
    out = []
    for hit in (up, low, mid):
        out.append(
            np.array(
                [np.mean((first == j) & hit[rows, np.minimum(first, k - 1)]) for j in range(k)]
            )
        )
    return out


N_MC = 400_000


@pytest.mark.parametrize(
    ("fractions", "upper", "lower", "inner", "drift"),
    [
        ([0.25, 0.5, 0.8, 1.0], [3.0, 2.6, 2.3, 2.0], [-3.0, -2.6, -2.3, -2.0], None, 0.0),
        ([0.25, 0.5, 0.8, 1.0], [3.0, 2.6, 2.3, 2.0], [-3.0, -2.6, -2.3, -2.0], None, 2.5),
        ([0.3, 0.55, 1.0], [2.8, 2.4, 2.0], [0.0, 0.5, -np.inf], None, 1.5),
        (
            [0.2, 0.5, 0.7, 1.2],
            [3.5, 2.7, 2.4, 2.1],
            [-3.5, -2.7, -2.4, -2.1],
            [0.0, 0.4, 0.9, 0.0],
            1.0,
        ),
    ],
    ids=["null-two-sided", "drift-two-sided", "one-sided-futility", "inner-band-overrun"],
)
def test_crossing_probabilities_equal_monte_carlo_of_correlated_normals(
    fractions, upper, lower, inner, drift
) -> None:
    ours = crossing_probabilities(fractions, upper, lower, drift, inner)
    z = brownian_z(fractions, drift, N_MC, seed=11)
    mc_up, mc_low, mc_in = first_exits(z, upper, lower, inner)
    for got, mc in ((ours.upper, mc_up), (ours.lower, mc_low), (ours.inner, mc_in)):
        se = np.sqrt(np.maximum(mc * (1 - mc), 1e-6) / N_MC)
        assert np.all(np.abs(got - mc) <= 4.5 * se), (got, mc)
    total = ours.upper.sum() + ours.lower.sum() + ours.inner.sum() + ours.continued
    assert total == pytest.approx(1.0, abs=1e-7)


def test_two_looks_equal_the_bivariate_normal() -> None:
    """K = 2: P(|Z1| ≥ c1) + P(|Z1| < c1, |Z2| ≥ c2) = α with Corr = √(t1/t2), by scipy's
    bivariate normal CDF (an integration independent of the recursion)."""
    b = efficacy_boundaries([0.45, 1.0], 0.05, "pocock", 2, final=True)
    c1, c2 = b.critical
    rho = math.sqrt(0.45)
    mvn = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]])
    inside_both = mvn.cdf([c1, c2]) - mvn.cdf([-c1, c2]) - mvn.cdf([c1, -c2]) + mvn.cdf([-c1, -c2])
    first = 2 * stats.norm.sf(c1)
    second = (1 - first) - inside_both
    assert first == pytest.approx(b.alpha_cumulative[0], abs=1e-9)
    assert first + second == pytest.approx(0.05, abs=2e-6)


@pytest.mark.parametrize("spending", ["obrien_fleming", "pocock", "none"])
@pytest.mark.parametrize("sided", [1, 2])
def test_spending_identities(spending: str, sided: int) -> None:
    alpha = 0.05 if sided == 2 else 0.025
    t = np.linspace(0, 1, 101)
    spent = alpha_spent(t, alpha, spending, sided)
    assert spent[0] == 0.0 and spent[-1] == pytest.approx(alpha, rel=1e-12)
    assert np.all(np.diff(spent) >= 0)
    assert alpha_spent(1.7, alpha, spending, sided) == pytest.approx(alpha)  # capped at t = 1
    fractions = [0.2, 0.35, 0.6, 0.8, 1.0]
    b = efficacy_boundaries(fractions, alpha, spending, sided, final=True)
    lower = -b.critical if sided == 2 else np.full(5, -np.inf)
    c = crossing_probabilities(fractions, b.critical, lower, 0.0)
    per_look = c.upper + c.lower
    np.testing.assert_allclose(np.cumsum(per_look), b.alpha_cumulative, atol=1e-9)
    np.testing.assert_allclose(b.nominal, sided * stats.norm.sf(b.critical))


def test_obrien_fleming_two_sided_is_twice_one_sided_at_half_alpha() -> None:
    t = np.array([0.1, 0.4, 0.77, 1.0])
    np.testing.assert_allclose(
        alpha_spent(t, 0.05, "obrien_fleming", 2),
        2 * alpha_spent(t, 0.025, "obrien_fleming", 1),
    )
    np.testing.assert_allclose(
        alpha_spent(t, 0.05, "pocock", 2), 0.05 * np.log(1 + (math.e - 1) * t)
    )


def test_a_single_look_and_no_early_spending_give_the_fixed_critical_value() -> None:
    z = stats.norm.isf(0.025)
    assert efficacy_boundaries([1.0], 0.05, "obrien_fleming", 2, True).critical[0] == (
        pytest.approx(z, abs=1e-9)
    )
    b = efficacy_boundaries([0.3, 0.6, 1.0], 0.05, "none", 2, True)
    assert np.all(np.isinf(b.critical[:2]))
    assert b.critical[-1] == pytest.approx(z, abs=1e-6)  # through two looks of the grid


def test_the_last_look_spends_what_is_left_when_stopped_early_or_overrun() -> None:
    for fractions in ([0.3, 0.55, 0.8], [0.4, 0.7, 1.25]):
        b = efficacy_boundaries(fractions, 0.05, "obrien_fleming", 2, final=True)
        c = crossing_probabilities(fractions, b.critical, -b.critical, 0.0)
        assert (c.upper + c.lower).sum() == pytest.approx(0.05, abs=1e-9)
    interim = efficacy_boundaries([0.3, 0.55, 0.8], 0.05, "obrien_fleming", 2, final=False)
    assert interim.alpha_cumulative[-1] == pytest.approx(
        float(alpha_spent(0.8, 0.05, "obrien_fleming", 2))
    )
    with pytest.raises(ValueError, match="only the last look"):
        efficacy_boundaries([0.5, 1.0, 1.2], 0.05, "pocock", 2, final=True)
    with pytest.raises(ValueError, match="increasing"):
        efficacy_boundaries([0.5, 0.5], 0.05, "pocock", 2, final=True)


def test_conditional_power_is_its_closed_form_and_the_recursion_started_at_the_look() -> None:
    t, z, t_final, c, eta = 0.4, 1.3, 1.0, 2.1, 2.2
    closed = stats.norm.sf(
        (c * math.sqrt(t_final) - z * math.sqrt(t) - eta * (t_final - t)) / math.sqrt(t_final - t)
    )
    assert conditional_power(z, t, t_final, c, eta) == pytest.approx(closed, rel=1e-12)
    rec = crossing_probabilities([t_final], [c], [-np.inf], eta, start=(t, z))
    assert rec.upper[0] == pytest.approx(closed, abs=1e-10)


def test_conditional_power_over_several_looks_equals_monte_carlo() -> None:
    """From Z(0.3) = 1.1, looks at 0.6 and 1.0 with boundaries: the started recursion against
    paths simulated from the same point."""
    start, fractions, upper = (0.3, 1.1), [0.6, 1.0], [2.6, 2.0]
    ours = crossing_probabilities(fractions, upper, [-np.inf, -np.inf], 1.8, start=start)
    z = brownian_z(fractions, 1.8, N_MC, seed=5, start=start)
    mc = first_exits(z, upper, [-np.inf, -np.inf])[0]
    se = np.sqrt(mc * (1 - mc) / N_MC)
    assert np.all(np.abs(ours.upper - mc) <= 4.5 * se)


def test_final_boundary_spends_what_is_left_and_cp_uses_it() -> None:
    b = efficacy_boundaries([0.3, 0.5], 0.05 * LOOK_ALPHA_FACTOR, "obrien_fleming", 2, False)
    c_final = final_boundary(b, 1.0)
    full = efficacy_boundaries([0.3, 0.5, 1.0], 0.05 * LOOK_ALPHA_FACTOR, "obrien_fleming", 2, True)
    assert c_final == pytest.approx(full.critical[-1], abs=1e-9)
    cp = conditional_power_at(b, -1.2, 2.0, 1.0)
    assert cp == pytest.approx(conditional_power(1.2, 0.5, 1.0, c_final, 2.0), rel=1e-12)


def test_look_z_has_the_looks_p() -> None:
    assert look_z(0.05, -0.3) == pytest.approx(-stats.norm.isf(0.025))
    assert math.isfinite(look_z(0.0, 1.0))


def test_information_fraction_from_run_counts() -> None:
    assert information_fraction(5, 5, 10, 10) == pytest.approx(0.5)
    assert information_fraction(3, 6, 10, 10) == pytest.approx((1 / (1 / 3 + 1 / 6)) / 5)


def test_welch_look_is_scipys_welch_test() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(0, 1, 5), rng.normal(0.5, 2, 7)
    look = welch_look(a, b)
    ref = stats.ttest_ind(b, a, equal_var=False)
    assert look.t == pytest.approx(ref.statistic, rel=1e-12)
    assert WELCH.p_value(look) == pytest.approx(ref.pvalue, rel=1e-10)
    q = WELCH.critical(0.01, look)
    assert WELCH.p_value(LookData(q * look.se, look.se, look.df, 5, 7)) == pytest.approx(0.01)


def test_look_numbers() -> None:
    assert look_numbers([3, 1, 3, 7]) == [2, 1, 2, 3]
    assert look_numbers(["2025-03-01", "2024-12-31", datetime.date(2025, 3, 1)]) == [
        2,
        1,
        2,
    ]
    times = ["2025-03-01T09:00", "2025-03-01T17:30", datetime.date(2025, 2, 1)]
    assert look_numbers(times) == [2, 3, 1]
    with pytest.raises(ValueError, match="mix"):
        look_numbers([1, "2025-01-01"])
    with pytest.raises(ValueError, match="every run"):
        look_numbers([1, None])


def _plan(**kw) -> SequentialPlan:
    base = dict(
        max_runs_a=10,
        max_runs_b=10,
        alpha=0.05,
        spending="obrien_fleming",
        min_effect=None,
        futility=None,
        target_power=0.8,
    )
    base.update(kw)
    return SequentialPlan(**base)


def _look(estimate: float, se: float, n: int, df: float = 8.0) -> LookData:
    return LookData(estimate, se, df, n, n)


def test_a_look_that_crosses_stops_with_its_direction_and_its_ci_excludes_zero() -> None:
    looks = [_look(0.5, 1.0, 3), _look(-4.0, 0.5, 5), _look(-4.0, 0.5, 6)]
    res = analyse_looks(looks, _plan(), WELCH, final=False)
    crossed = [r.crossed for r in res.looks]
    assert crossed == [False, True, True]
    assert res.decision.action == "stop: significant" and res.decision.look == 2
    assert res.decision.direction == -1
    assert res.decision.sentence("base", "new") == (
        "stop: base better (look 2, 5 of 10 runs per system)"
    )
    for r in res.looks:
        assert (r.ci_upper < 0 or r.ci_lower > 0) == r.crossed
        assert r.p_value == pytest.approx(2 * stats.t.sf(abs(r.estimate / r.se), r.df))


def test_the_final_look_without_a_crossing_ends_the_plan_and_later_looks_are_beyond() -> None:
    looks = [_look(0.1, 1.0, 3), _look(0.1, 1.0, 10), _look(0.1, 1.0, 12)]
    res = analyse_looks(looks, _plan(min_effect=1.0), WELCH, final=False)
    assert res.decision.action == "stop: maximum reached"
    assert res.beyond_plan == 1 and len(res.looks) == 2
    assert res.boundaries.alpha_cumulative[-1] == pytest.approx(0.05 * LOOK_ALPHA_FACTOR)


def test_continue_gives_the_runs_for_the_target_conditional_power() -> None:
    looks = [_look(0.3, 0.5, 3), _look(0.35, 0.42, 4)]
    plan = _plan(min_effect=1.0, futility=0.05)
    res = analyse_looks(looks, plan, WELCH, final=False)
    d = res.decision
    assert d.action == "continue" and d.more_runs is not None
    assert "more runs per system for 80% conditional power" in d.sentence("A", "B")
    # the answer: the first m whose final look at 4 + m runs reaches 80 %, by the definitions
    z = look_z(res.looks[-1].p_value, 0.35)
    drift = 1.0 / (0.42 * math.sqrt(0.4))

    def cp(m: int) -> float:
        return conditional_power_at(res.boundaries, z, drift, (4 + m) / 10)

    assert cp(d.more_runs) >= 0.8 > cp(d.more_runs - 1)
    assert d.conditional_power == pytest.approx(cp(6))


def test_futility_is_advised_below_the_threshold() -> None:
    looks = [_look(-0.01, 0.5, 3), _look(-0.02, 0.3, 8)]
    res = analyse_looks(looks, _plan(min_effect=0.2, futility=0.2), WELCH, final=False)
    assert res.decision.action == "stop: futility"
    assert res.decision.conditional_power < 0.2
    assert res.decision.sentence("A", "B").startswith("stop for futility (look 2, 8 of 10")


def test_a_look_must_add_runs() -> None:
    with pytest.raises(ValueError, match="add runs"):
        analyse_looks([_look(0, 1, 4), _look(0, 1, 4)], _plan(), WELCH, final=False)


def test_plan_alpha_applies_kappa_only_to_several_tests() -> None:
    assert plan_alpha(0.05, "obrien_fleming", 4, False) == pytest.approx(0.0425)
    assert plan_alpha(0.05, "obrien_fleming", 1, True) == 0.05
    assert plan_alpha(0.05, "none", 5, True) == 0.05


def test_design_characteristics_expected_runs_equal_monte_carlo() -> None:
    """Expected runs and power of a plan with futility, against simulated z paths stopped by
    the same boundaries and futility band."""
    runs = [3, 5, 7, 10]
    design = design_characteristics(runs, 1.0, 1.2, 1.0, 0.05, "obrien_fleming", 0.1)
    fractions = np.array(runs) / 10
    upper = design.boundaries.critical
    for drift, expected in (
        (design.drift, design.expected_runs_effect),
        (0.0, design.expected_runs_null),
    ):
        z = brownian_z(fractions, drift, N_MC, seed=3)
        up, low, mid = first_exits(z, upper, -upper, design.futility)
        stop = up + low + mid
        mc = (np.array(runs[:-1]) * stop[:-1]).sum() + 10 * (1 - stop[:-1].sum())
        assert expected == pytest.approx(mc, abs=0.02)
        if drift:
            assert design.power == pytest.approx(up.sum(), abs=0.004)


def test_futility_band_is_where_conditional_power_is_below_the_threshold() -> None:
    b = efficacy_boundaries([0.3, 0.6, 1.0], 0.0425, "obrien_fleming", 2, True)
    band = futility_band(b, 2.5, 0.1)
    for k in (0, 1):
        if 0 < band[k] < b.critical[k]:
            cp = conditional_power(band[k], b.fractions[k], 1.0, b.critical[-1], 2.5)
            assert cp == pytest.approx(0.1, abs=1e-9)
    assert band[-1] == 0


def test_plan_sequential_reaches_the_power_and_beats_the_fixed_design_on_average() -> None:
    design = plan_sequential(0.02, 0.02, 0.03, 0.05, "obrien_fleming", 0.8, 3, 1, None)
    ch = design.characteristics
    assert ch.power >= 0.8
    smaller = design_characteristics(
        list(range(3, ch.runs[-1])), 0.02, 0.02, 0.03, 0.05, "obrien_fleming", None
    )
    assert smaller.power < 0.8
    n = design.fixed_runs
    z = stats.norm.isf(0.025)
    assert stats.norm.sf(z - 0.03 / math.sqrt(0.0008 / n)) >= 0.8
    assert stats.norm.sf(z - 0.03 / math.sqrt(0.0008 / (n - 1))) < 0.8
    assert ch.expected_runs_effect < n <= ch.runs[-1]


def test_t_boundary_is_where_the_mixture_e_value_reaches_one_over_alpha() -> None:
    assert math.isinf(float(t_boundary(3, 0.05, 1.5)))  # (a/α²)^(1/3) ≥ a: no t reaches 1/α
    for n in (4, 5, 12, 40):
        t = float(t_boundary(n, 0.05, 1.5))
        nu, a = n - 1, 1 + n * 1.5**2
        e = a**-0.5 * ((1 + t**2 / nu) / (1 + t**2 / (a * nu))) ** (n / 2)
        assert e == pytest.approx(20.0, rel=1e-9)
    assert math.isinf(float(t_boundary(2, 0.05, 0.1)))  # small n, small c: nothing excluded


def test_confidence_sequence_covers_the_mean_at_every_n() -> None:
    """2,000 sequences of 40 normal differences (σ varies by sequence): the running
    intersection misses the true mean at some n in at most α + 3 SE of them."""
    rng = np.random.default_rng(8)
    misses = 0
    sequences = 2000
    for _ in range(sequences):
        sigma = rng.uniform(0.01, 3.0)
        d = rng.normal(0.7, sigma, 40)
        cs = confidence_sequence(d, 0.1, 1.0)
        misses += bool(np.any((cs.lower > 0.7) | (cs.upper < 0.7)))
    rate = misses / sequences
    assert rate <= 0.1 + 3 * math.sqrt(0.09 / sequences)


def test_confidence_sequence_running_intersection_and_pairs() -> None:
    d = np.array([0.3, 0.1, 0.5, 0.2, 0.4, 0.35])
    cs = confidence_sequence(d, 0.05, 1.5)
    assert cs.n.tolist() == [2, 3, 4, 5, 6]
    assert cs.mean[-1] == pytest.approx(d.mean())
    sd = np.array([d[:n].std(ddof=1) for n in cs.n])
    half = t_boundary(cs.n, 0.05, 1.5) * sd / np.sqrt(cs.n)
    finite = np.isfinite(half)
    assert np.all(cs.lower[1:] >= cs.lower[:-1]) and np.all(cs.upper[1:] <= cs.upper[:-1])
    assert np.all(cs.lower[finite] >= (cs.mean - half)[finite] - 1e-15)
    assert np.all(cs.upper[finite] <= (cs.mean + half)[finite] + 1e-15)
    assert paired_differences([1.0, 2.0, 3.0], [1.5, 2.5]).tolist() == [0.5, 0.5]


def test_confidence_sequence_leaves_zero_on_the_better_side() -> None:
    rng = np.random.default_rng(4)
    a = rng.normal(0.0, 0.02, 12)
    b = a[::-1] + 0.2  # B clearly better once the pairs can exclude anything
    better = confidence_sequence(paired_differences(a, b), 0.05, 1.5)
    assert better.lower[-1] > 0 and np.isinf(better.lower[0])
    worse = confidence_sequence(paired_differences(b, a), 0.05, 1.5)
    assert worse.upper[-1] < 0
    assert np.argmax(worse.upper < 0) == np.argmax(better.lower > 0)
    none = confidence_sequence(paired_differences(a[:3], a[3:6]), 0.05, 1.5)
    assert np.all(np.isinf(none.lower)) and np.all(np.isinf(none.upper))  # 3 pairs: no claim
