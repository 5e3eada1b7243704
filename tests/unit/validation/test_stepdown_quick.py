"""Quick versions of ``benchmarks/stepdown.py`` (issue 43, acceptance 3): ten systems with true
differences of graded size, decided by the default step-down; it names at least as many
directional verdicts as Holm over the same marginal p and every interval agrees with its
verdict. Fixed seeds: each case is one experiment of the benchmark's kind."""

from __future__ import annotations

import math

import pytest
from threadpoolctl import threadpool_limits

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import FAMILIES, FAMILY_BASELINE
from infrepro.report.paper import spent_text
from infrepro.stats.pvalues import holm_log10
from infrepro.validation.calibration import ALPHA
from infrepro.validation.decision import RANK_UNIT, several_systems

GRADED = [0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0]  # run-mean SDs above the baseline


@pytest.mark.parametrize(("runs", "seed"), [((3, 5), 11), ((3, 5), 12), ((1, 1), 13)])
def test_graded_differences_at_least_holm_and_every_interval_agrees(
    runs: tuple[int, int], seed: int
) -> None:
    effects = [g * RANK_UNIT for g in GRADED]
    run_sd = 0.0 if runs == (1, 1) else 0.02  # a single output's claim is about the output
    data = several_systems(10, seed, effects, (run_sd, run_sd), runs)
    with threadpool_limits(limits=1):
        result = decide(data, FitLog(data.metric), Settings())
    truth = dict(zip(data.systems, effects, strict=True))
    for family in FAMILIES:
        records = [r for r in result.records if r.family == family]
        holm = holm_log10([r.log10_p for r in records]) < math.log10(ALPHA)
        said = [r.directional for r in records]
        assert all(s or not h for s, h in zip(said, holm, strict=True)), family
        for r in records:
            assert r.adjust == "step-down" and r.interval == "step-down 95 %"
            assert (r.lower > 0 or r.upper < 0) == r.directional, r
            assert (r.log10_p_adjusted < math.log10(ALPHA)) == r.directional, r
            if r.directional:  # graded truths this far apart: no claim the wrong way
                assert (r.improvement > 0) == (truth[r.system] > truth[r.reference]), r
        assert 0 < sum(said) < len(records), family
    named = [r for r in result.records if r.family == FAMILY_BASELINE]
    text = spent_text(named, ALPHA)
    assert "not simultaneous" in text and "at α = 0.05 on 10 identical systems" in text
    assert ("one run each" in text) == (runs == (1, 1))
