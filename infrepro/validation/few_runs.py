"""Few runs through the decision (issue 28; docs/method.md §4b.11, §4b.12, §4c.5): simulated
experiments of per-segment scores decided as the ``summary`` analysis decides them (``decide``:
model M, REML, Kenward-Roger, the pair's calibrated or moderated test, the family's adjustment),
read from the record a reader sees (the table's verdict, the badge).

Designs (scores in [0, 1] like a metric's fractions; segment SD 0.2, residual SD 0.1 at 1,000
segments; run SD of the baseline A 0.02, of B 0.02 × the run-SD ratio):

- ``pair``: A with n_A runs against B with n_B; ``effect`` in run-mean SDs of A (B better);
- ``many``: 12 systems of 3 and 2 runs alternately (the baseline with 3), run variances drawn
  from one scaled-inverse-χ² distribution (prior df ``d0``, scale 0.02²), no difference.

The benchmark's command-line driver and report are ``benchmarks/few_runs.py``; quick versions
are in tests/unit/validation/test_few_runs_quick.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.pairtests import RunVariance
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import BETTER, FAMILY_BASELINE, WORSE
from infrepro.core.vocabulary import RUN, SEGMENT, SYSTEM

METRIC = "y"
ALPHA = 0.05
SEGMENTS, SEGMENT_SD, RESIDUAL_SD, RUN_SD = 1000, 0.2, 0.1, 0.02
RUN_MEAN_SD = math.sqrt(RUN_SD**2 + RESIDUAL_SD**2 / SEGMENTS)  # of A's runs: the effect unit
RANK_DRAWS = 10  # the rank intervals are not read here


@dataclass(frozen=True)
class Outcome:
    """What the decision says of B against A (``claim``: +1 B better, -1 A better, 0 none)
    and, for the moderation cells, of each competitor's marginal test (``marginal``: +1 / -1 /
    0 per comparison, at α unadjusted) with the prior df."""

    claim: int
    marginal: tuple[int, ...]
    prior_df: float
    welch: int  # Welch's t on run means in the same experiment (the reference)


def _frame(
    systems: list[tuple[str, int, float, float]],
    rng: np.random.Generator,
    segments: int = SEGMENTS,
) -> MetricData:
    """Per-segment scores of (name, runs, run SD, true mean) systems on shared segments."""
    segment_ids = np.array([f"g{j:04d}" for j in range(segments)])
    seg = rng.normal(0.0, SEGMENT_SD, segments)
    frames, runs = [], []
    for name, n, run_sd, mean in systems:
        for r in range(n):
            run = f"{name}_{r}"
            runs.append({RUN: run, SYSTEM: name})
            y = mean + seg + rng.normal(0.0, run_sd) + rng.normal(0.0, RESIDUAL_SD, segments)
            frames.append(pd.DataFrame({RUN: run, SYSTEM: name, SEGMENT: segment_ids, METRIC: y}))
    return MetricData(
        metric=METRIC,
        better="higher",
        baseline=systems[0][0],
        evaluation=pd.concat(frames, ignore_index=True),
        runs=pd.DataFrame(runs),
        facets=[],
        properties=[],
    )


def pair_experiment(
    n_a: int, n_b: int, ratio: float, effect: float, seed: int, segments: int = SEGMENTS
) -> MetricData:
    """A (n_a runs, run SD 0.02) against B (n_b runs, run SD 0.02 × ``ratio``), B better by
    ``effect`` run-mean SDs of A (at ``segments`` segments)."""
    rng = np.random.default_rng(seed)
    unit = math.sqrt(RUN_SD**2 + RESIDUAL_SD**2 / segments)
    systems = [("A", n_a, RUN_SD, 0.5), ("B", n_b, RUN_SD * ratio, 0.5 + effect * unit)]
    return _frame(systems, rng, segments)


def many_experiment(d0: float, seed: int, effect: float = 0.0, k: int = 12) -> MetricData:
    """k systems with 3 and 2 runs alternately, run variances σ² ~ d0 0.02² / χ²_d0 (all 0.02²
    when d0 is infinite); every competitor better than the baseline by ``effect`` run-mean SDs
    of the scale 0.02."""
    rng = np.random.default_rng(seed)
    systems = []
    for i in range(k):
        var = RUN_SD**2 if math.isinf(d0) else d0 * RUN_SD**2 / rng.chisquare(d0)
        mean = 0.5 + (effect * RUN_MEAN_SD if i else 0.0)
        systems.append((f"S{i:02d}", 3 if i % 2 == 0 else 2, math.sqrt(var), mean))
    return _frame(systems, rng)


def _welch(data: MetricData, a: str, b: str) -> int:
    from scipy import stats

    means = data.evaluation.groupby([SYSTEM, RUN], observed=True)[METRIC].mean()
    result = stats.ttest_ind(means[b], means[a], equal_var=False)
    return int(np.sign(result.statistic)) if result.pvalue < ALPHA else 0


def outcome(data: MetricData, runs: RunVariance | None = None) -> Outcome:
    """The decision of one experiment, as the record says it."""
    settings = Settings(alpha=ALPHA, draws=RANK_DRAWS, runs=runs or RunVariance())
    records = [
        r for r in decide(data, FitLog(METRIC), settings).records if r.family == FAMILY_BASELINE
    ]
    claim_of = {BETTER: 1, WORSE: -1}
    first = records[0]
    marginal = tuple(
        (1 if r.improvement > 0 else -1) if r.log10_p < math.log10(ALPHA) else 0 for r in records
    )
    return Outcome(
        claim=claim_of.get(first.verdict, 0),
        marginal=marginal,
        prior_df=first.prior_df,
        welch=_welch(data, first.reference, first.system),
    )
