"""Quick version of ``benchmarks/band_assumption.py`` (issue 41, acceptance 2): the assumption
mark of a directional verdict, on fixed batches of the benchmark's experiments, each read from
the record the report shows."""

from __future__ import annotations

import dataclasses

from threadpoolctl import threadpool_limits

from infrepro.analyses.decision.pairtests import BAND, BERGER_BOOS
from infrepro.analyses.decision.summary import Settings
from infrepro.validation.band_assumption import experiment, verdict

ANY_RATIO = Settings(runs=dataclasses.replace(Settings().runs, berger_boos=True))


def _pairs(n_a: int, n_b: int, ratio: float, effect: float, n: int, seed: int) -> list:
    """(default verdict, Berger-Boos verdict) of ``n`` experiments, each on the same data."""
    with threadpool_limits(limits=1):
        out = []
        for i in range(n):
            data = experiment(n_a, n_b, ratio, effect, seed + i)
            out.append((verdict(data), verdict(data, ANY_RATIO)))
        return out


def _check_mark(pairs: list) -> None:
    """A directional verdict is unmarked exactly when Berger and Boos' test on the same data
    gives the same verdict; only the band test's verdicts are ever marked; every verdict under
    ``berger_boos: true`` is Berger and Boos' own and carries no mark."""
    for default, any_ratio in pairs:
        assert any_ratio.kind == BERGER_BOOS and not any_ratio.assumption, any_ratio
        assert default.unmarked <= default.directional
        if default.assumption:
            assert default.directional and default.kind == BAND, default
        if default.directional:
            agrees = any_ratio.claim == default.claim
            assert default.unmarked == agrees, (default, any_ratio)


def test_the_mark_is_berger_and_boos_disagreement_under_the_null() -> None:
    """10 v 2 runs, the 2-run system's run SD 4 × the other's (outside the band, where the band
    test's level exceeds α), no difference: every unmarked directional verdict is Berger and
    Boos' verdict too, every marked one is not, and the unmarked verdicts are no more than the
    directional ones."""
    pairs = _pairs(10, 2, 4.0, 0.0, 50, 41_700)
    _check_mark(pairs)
    directional = sum(d.directional for d, _ in pairs)
    unmarked = sum(d.unmarked for d, _ in pairs)
    assert directional > 0, "no directional verdict: the batch does not test the mark"
    assert unmarked <= directional


def test_a_marked_verdict_keeps_the_band_tests_power() -> None:
    """3 v 3 runs, equal run SDs, B better by 3 run-mean SDs: the verdict names B in some
    experiments, some of them marked (the band's power beyond Berger and Boos') and some not,
    and the mark is again exactly Berger and Boos' disagreement."""
    pairs = _pairs(3, 3, 1.0, 3.0, 20, 41_800)
    _check_mark(pairs)
    better = [d for d, _ in pairs if d.claim > 0]
    assert better and not any(d.claim < 0 for d, _ in pairs)
    assert any(d.assumption for d in better) and any(d.unmarked for d in better), better
