"""Group-sequential boundaries, spending and design characteristics against rpact.

Fixtures: tests/golden/fixtures_sequential/*.json, made by
tests/golden/make_golden_sequential.R (rpact 3.3.4 ``getDesignGroupSequential``,
``getDesignCharacteristics``, ``getPowerMeans`` with the normal approximation). Tolerances: z
boundaries 1e-4 (the brief's; measured agreement is about 1e-6), cumulative α spent and rpact's
stage levels 1e-6 absolute (rpact stops its search at a tolerance of 1e-8 and spends
0.02499999 of 0.025), probabilities 1e-4, expected information 1e-4 relative.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from infrepro.stats.group_sequential import alpha_spent, crossing_probabilities, efficacy_boundaries

GOLDEN = Path(__file__).parent
CASES = sorted((GOLDEN / "fixtures_sequential").glob("*.json"), key=lambda p: p.name)
SPENDING = {"asOF": "obrien_fleming", "asP": "pocock"}


def _case(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _ours(case: dict):
    spending = SPENDING[case.get("spending", case["type_of_design"])]
    fractions = case.get("observed_fractions", case["information_rates"])
    return efficacy_boundaries(fractions, case["alpha"], spending, case["sided"], final=True)


def test_the_fixtures_are_there() -> None:
    assert len(CASES) == 42


def test_five_equal_looks_obrien_fleming_one_sided_as_the_brief_quotes() -> None:
    ours = efficacy_boundaries(np.arange(1, 6) / 5, 0.025, "obrien_fleming", 1, final=True)
    np.testing.assert_allclose(ours.critical, [4.877, 3.357, 2.680, 2.290, 2.031], atol=5e-4)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_boundaries_and_alpha_spent_equal_rpacts(path: Path) -> None:
    case = _case(path)
    ours = _ours(case)
    np.testing.assert_allclose(ours.critical, case["critical_values"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(ours.alpha_cumulative, case["alpha_spent"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        ours.nominal / case["sided"], case["stage_levels"], rtol=1e-4, atol=1e-9
    )


@pytest.mark.parametrize(
    "path", [p for p in CASES if "observed_fractions" not in _case(p)], ids=lambda p: p.stem
)
def test_spending_function_equals_rpacts_at_interim_looks(path: Path) -> None:
    """rpact's alphaSpent at the interim looks is its spending function's value (its last
    look spends α up to rpact's search tolerance)."""
    case = _case(path)
    spent = alpha_spent(
        case["information_rates"][:-1],
        case["alpha"],
        SPENDING[case["type_of_design"]],
        case["sided"],
    )
    np.testing.assert_allclose(spent, case["alpha_spent"][:-1], rtol=1e-6, atol=1e-12)


def _stops(case: dict, drift: float):
    """Our per-look probabilities at drift η with rpact's bounds: rejection in the direction
    of η (upper), rejection the other way (two-sided: below −c_k) and futility (one-sided:
    below the futility bound)."""
    upper = np.asarray(case["critical_values"])
    k = upper.size
    if case["sided"] == 2:
        lower = -upper
    elif case["futility_bounds"] is not None:
        lower = np.append(case["futility_bounds"], -np.inf)
    else:
        lower = np.full(k, -np.inf)
    c = crossing_probabilities(case["information_rates"], upper, lower, drift)
    other = c.lower if case["sided"] == 2 else np.zeros(k)
    futility = c.lower[:-1] if case["sided"] == 1 else np.zeros(k - 1)
    return c.upper, other, futility


def _expected_fraction(case: dict, drift: float) -> float:
    """E[t at the stop]: any rejection or futility stop before the last look."""
    upper, other, futility = _stops(case, drift)
    stop = (upper + other)[:-1] + futility
    t = np.asarray(case["information_rates"])
    return float((t[:-1] * stop).sum() + t[-1] * (1.0 - stop.sum()))


@pytest.mark.parametrize(
    "path", [p for p in CASES if "characteristics" in _case(p)], ids=lambda p: p.stem
)
def test_design_characteristics_equal_rpacts(path: Path) -> None:
    """At rpact's drift for 80 % power (η = √shift) our recursion gives its per-look rejection
    probabilities in η's direction (rpact's power is directional here) and futility
    probabilities and its average sample numbers (E[t at stop] × inflation) under
    H1, halfway and H0."""
    case = _case(path)
    ch = case["characteristics"]
    drift = math.sqrt(ch["shift"])
    upper, _, futility = _stops(case, drift)
    np.testing.assert_allclose(upper, ch["rejection_probabilities"], atol=1e-4)
    np.testing.assert_allclose(np.cumsum(upper), ch["power"], atol=1e-4)
    np.testing.assert_allclose(futility, ch["futility_probabilities"], atol=1e-4)
    for key, eta in (
        ("average_sample_number1", drift),
        ("average_sample_number01", drift / 2),
        ("average_sample_number0", 0.0),
    ):
        ours = _expected_fraction(case, eta) * ch["inflation_factor"]
        assert ours == pytest.approx(ch[key], rel=1e-4), key


@pytest.mark.parametrize(
    "path", [p for p in CASES if "power_means" in _case(p)], ids=lambda p: p.stem
)
def test_power_and_expected_subjects_equal_rpacts_power_means(path: Path) -> None:
    """getPowerMeans (two groups of N/2, normal approximation): η = δ / (σ √(4/N)); overall
    rejection (either direction, as getPowerMeans counts it), rejection and futility per stage,
    expected subjects N · E[t at stop]."""
    case = _case(path)
    pm = case["power_means"]
    n = pm["max_number_of_subjects"]
    drift = pm["alternative"] / (pm["st_dev"] * math.sqrt(4.0 / n))
    upper, other, futility = _stops(case, drift)
    rejection = upper + other
    np.testing.assert_allclose(rejection, pm["reject_per_stage"], atol=1e-4)
    assert rejection.sum() == pytest.approx(pm["overall_reject"], abs=1e-4)
    if pm["futility_per_stage"] is not None and None not in pm["futility_per_stage"]:
        np.testing.assert_allclose(futility, pm["futility_per_stage"], atol=1e-4)
    expected = n * _expected_fraction(case, drift)
    assert expected == pytest.approx(pm["expected_number_of_subjects"], rel=1e-4)
