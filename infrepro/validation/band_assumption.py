"""The assumption a verdict rests on (issue 41, acceptance 2; docs/method.md §4c.5): simulated
experiments of two multi-run systems decided as the ``summary`` analysis decides them
(``decide`` with the default ``Settings()``: model M, REML, Kenward-Roger, the band-calibrated
test or Berger and Boos' where the data put the ratio outside the band), read from the record a
reader sees: its verdict and its ``assumption`` mark.

A directional verdict of the band-calibrated test is marked "run-mean SDs within a factor of 2"
when Berger and Boos' test of the same statistic (valid at any ratio of run variances) does not
reach α. So directional verdicts that carry no mark should be false at most at rate α at every
run-SD ratio, while the verdicts themselves keep the band test's power.

Design: A (n_A runs, run SD 0.02) against B (n_B runs, run SD 0.02 × the ratio ``r``) on
``SEGMENTS`` = 100 shared segments (segment SD 0.2, residual SD 0.1: the experiments of
``infrepro.validation.few_runs.pair_experiment`` at 100 segments, for speed); B better by
``effect`` run-mean SDs of A, ``RUN_MEAN_SD`` = sqrt(0.02² + 0.1² / 100).

The benchmark's command-line driver and report are ``benchmarks/band_assumption.py``; a quick
version is in tests/unit/validation/test_band_assumption_quick.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.pairtests import BAND, BERGER_BOOS, RUN_MEANS, T_TEST
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import BETTER, FAMILY_BASELINE, WORSE
from infrepro.validation.few_runs import METRIC, RESIDUAL_SD, RUN_SD, pair_experiment

SEGMENTS = 100
RUN_MEAN_SD = math.sqrt(RUN_SD**2 + RESIDUAL_SD**2 / SEGMENTS)  # of A's runs: the effect unit
CLAIM = {BETTER: 1, WORSE: -1}


@dataclass(frozen=True)
class Verdict:
    """What the record says of B against A: ``claim`` +1 (B better), −1 (A better), 0 (none);
    ``directional`` whether it names a winner; ``unmarked`` whether it names one and carries no
    assumption; the record's ``assumption`` text, its test (``test``: the name the record
    shows; ``kind``: the calibrated test, Berger-Boos, a t test), its adjusted log10 p, and the
    shown run-SD ratio (B's run-mean SD over A's)."""

    claim: int
    directional: bool
    unmarked: bool
    assumption: str
    test: str
    kind: str
    log10_p: float
    run_sd_ratio: float


def test_kind(name: str) -> str:
    """The kind of a record's test (``pairtests.BAND``, ``BERGER_BOOS``, ``RUN_MEANS`` or
    ``T_TEST``) from the name the record shows."""
    if "Berger-Boos" in name:
        return BERGER_BOOS
    if "calibrated" in name:
        return BAND
    return RUN_MEANS if "run means" in name else T_TEST


def experiment(n_a: int, n_b: int, ratio: float, effect: float, seed: int) -> MetricData:
    """The scores of one experiment: A (n_a runs, run SD 0.02) against B (n_b runs, run SD
    0.02 × ``ratio``), B better by ``effect`` run-mean SDs of A, at ``SEGMENTS`` segments."""
    return pair_experiment(n_a, n_b, ratio, effect, seed, segments=SEGMENTS)


def verdict(data: MetricData, settings: Settings | None = None) -> Verdict:
    """The decision of B against A (``settings``: default ``Settings()``), as its record says."""
    records = decide(data, FitLog(METRIC), settings or Settings()).records
    record = next(r for r in records if r.family == FAMILY_BASELINE)
    claim = CLAIM.get(record.verdict, 0)
    return Verdict(
        claim=claim,
        directional=record.directional,
        unmarked=record.directional and not record.assumption,
        assumption=record.assumption,
        test=record.test,
        kind=test_kind(record.test),
        log10_p=record.log10_p_adjusted,
        run_sd_ratio=record.run_sd_ratio,
    )


def simulate(
    n_a: int, n_b: int, ratio: float, effect: float, seed: int, settings: Settings | None = None
) -> Verdict:
    """One experiment (``effect`` 0: the null), decided with ``settings`` (default
    ``Settings()``)."""
    return verdict(experiment(n_a, n_b, ratio, effect, seed), settings)
