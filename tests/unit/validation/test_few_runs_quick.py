"""Quick versions of ``benchmarks/few_runs.py`` (issue 28): the decision's test of few runs on
fixed batches of the benchmark's experiments, each read from the record the report shows."""

from __future__ import annotations

import math

from threadpoolctl import threadpool_limits

from infrepro.analyses.decision.pairtests import RunVariance
from infrepro.validation.calibration import clopper_pearson
from infrepro.validation.few_runs import many_experiment, outcome, pair_experiment


def _claims(n_a: int, n_b: int, ratio: float, effect: float, n: int, **runs) -> list[int]:
    with threadpool_limits(limits=1):
        return [
            outcome(pair_experiment(n_a, n_b, ratio, effect, 7_000 + i), RunVariance(**runs)).claim
            for i in range(n)
        ]


def test_ten_against_two_runs_holds_the_level_where_welch_does_not() -> None:
    """10 vs 2 runs, the 2-run system's run SD twice the other's (the band's edge): the
    decision's false claims are compatible with 0.05 (the lower end of their exact interval at
    most 0.05), and the records name the calibrated test."""
    claims = _claims(10, 2, 2.0, 0.0, 40)
    hits = sum(c != 0 for c in claims)
    assert clopper_pearson(hits, 40)[0] <= 0.05, hits


def test_a_clear_difference_is_judged_with_few_runs() -> None:
    """10 vs 2 and 4 vs 2 runs, B better by 4 run-mean SDs: the verdict names B in most
    experiments (the run-count rule named no winner at all)."""
    for design in ((10, 2), (4, 2)):
        claims = _claims(*design, 1.0, 4.0, 12)
        assert sum(c > 0 for c in claims) >= 6, (design, claims)
        assert not any(c < 0 for c in claims)


def test_moderation_borrows_strength_across_twelve_systems() -> None:
    """12 systems of 2 and 3 runs, every competitor 2 run-mean SDs better: the moderated
    marginal tests find more of the 11 differences than the unmoderated ones, in the same
    experiments, with a prior df of at most 4."""
    gained = []
    with threadpool_limits(limits=1):
        for i in range(3):
            data = many_experiment(math.inf, 9_000 + i, effect=2.0)
            moderated, plain = outcome(data), outcome(data, RunVariance(moderate=False))
            assert 0 < moderated.prior_df <= 4.0 and math.isnan(plain.prior_df)
            gained.append(
                sum(m > 0 for m in moderated.marginal) - sum(m > 0 for m in plain.marginal)
            )
    assert sum(gained) > 0, gained
