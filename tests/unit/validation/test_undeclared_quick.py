"""Quick version of benchmarks/undeclared_looks.py (issue 41, acceptance 1): the user who
declares nothing, one experiment at a time through the ledger and the decision. A first-look
verdict that rests on the band is no claim made without an assumption; the user reruns on and
the anytime-valid sequence decides."""

from __future__ import annotations

from infrepro.validation.undeclared import user_outcome

SEED = 41_000  # benchmarks/undeclared_looks.py's base seed; cells 100,000 apart
NULL_RATIO_4, POWER = 1, 2  # their cells' indices


def test_a_marked_first_look_verdict_on_a_null_pair_is_no_claim() -> None:
    """Null, run-SD ratio 4: the 3 vs 3 band verdict is directional but Berger and Boos' test
    does not reach it, so it names its assumption and the user's claim with no assumption
    comes from the sequence alone (none here)."""
    outcome = user_outcome(4.0, 0.0, SEED + 100_000 * NULL_RATIO_4)
    assert outcome.first_look != 0 and outcome.first_assumes
    assert outcome.claim == outcome.first_look
    assert outcome.unmarked_claim == outcome.sequential == 0
    assert outcome.named  # the record names the undeclared sequence


def test_a_real_difference_marked_at_the_first_look_is_claimed_later() -> None:
    """B better by 3 run-mean SDs: the first look's verdict rests on the band; the anytime-valid
    sequence, valid at any ratio, claims it at a later look."""
    outcome = user_outcome(1.0, 3.0, SEED + 100_000 * POWER + 1)
    assert outcome.first_look == 1 and outcome.first_assumes
    assert outcome.unmarked_claim == outcome.sequential == 1 and outcome.claimed_at > 1
