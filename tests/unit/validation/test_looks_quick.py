"""Quick versions of ``benchmarks/sequential_decision.py`` (issue 29): the researcher who reruns
the analysis after every new run per system, on fixed batches of the benchmark's experiments,
each decided through the decision's sequential path (infrepro/validation/looks.py)."""

from __future__ import annotations

from threadpoolctl import threadpool_limits

from infrepro.validation.calibration import clopper_pearson
from infrepro.validation.looks import naive_by_decide, outcome


def test_the_plan_claims_only_where_todays_rule_does_and_stays_at_the_level() -> None:
    """No difference, 16 experiments (today's rule claims in 4): every claim of a plan or of
    the anytime-valid mode is also a claim of today's rule (a look crosses only below α), and
    the plans' false claims are compatible with 0.05 (the lower end of their exact interval at
    most 0.05)."""
    with threadpool_limits(limits=1):
        results = [outcome(3, 10, 1.0, 0.0, 29_000 + i) for i in range(16)]
    naive = {i for i, r in enumerate(results) if r.naive.direction}
    for rule in ("obrien_fleming", "pocock", "anytime"):
        claims = {i for i, r in enumerate(results) if getattr(r, rule).direction}
        assert claims <= naive, rule
        assert clopper_pearson(len(claims), len(results))[0] <= 0.05, rule


def test_a_clear_difference_stops_early_in_the_right_direction() -> None:
    """B better by 3 run-mean SDs: the O'Brien-Fleming-type plan names B in at least 5 of 6
    experiments, never A, and stops before 10 runs per system on average."""
    with threadpool_limits(limits=1):
        results = [outcome(3, 10, 1.0, 3.0, 29_100 + i) for i in range(6)]
    plan = [r.obrien_fleming for r in results]
    assert sum(c.direction > 0 for c in plan) >= 5
    assert not any(c.direction < 0 for c in plan)
    assert sum(c.runs for c in plan) / len(plan) < 10


def test_todays_rule_read_from_the_looks_fits_is_what_decide_says() -> None:
    """The naive researcher's first claim, read from each look's fit of model M, equals
    ``decide`` run on the runs of each look (one experiment that claims, one that does not)."""
    with threadpool_limits(limits=1):
        for effect, seed in ((3.0, 29_100), (0.0, 29_000)):
            assert outcome(3, 10, 1.0, effect, seed).naive == naive_by_decide(
                3, 10, 1.0, effect, seed
            )
