"""Calibration of the decision table (docs/method.md §4c) on simulated experiments.

Every experiment is decided as the ``summary`` analysis decides it (``decide``: model M, REML,
Kenward-Roger df, the family's procedure) and its records and per-system rows are read as the
report reads them. Designs:

- ``k5``, ``k10``: k identical systems (``several_systems``), 3-5 runs each (drawn per
  experiment), run SDs 0.01 to 0.03 across systems, 100 segments;
- ``a``, ``b``: the two-system designs (a) and (b) of the run-aware benchmark
  (``LEVEL_DESIGNS``, the same seeds, so M is the headline model on the same experiments);
- ``rank0.5``, ``rank1``, ``k10-rank0.5``: 5 (10) systems as ``k5`` (``k10``) whose true
  means are spaced by 0.5 and 1 (0.5) SD of a run's mean (``RANK_UNIT``), for the coverage
  of the rank intervals: with identical systems every rank ties, and "the true rank" is the
  whole set 1..k, which every interval meets.

The command-line driver and the report are ``benchmarks/calibration.py decision``; the quick
versions are in tests/unit/validation/test_decision_quick.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import MetricDecision, Settings, decide
from infrepro.core.decisions import BETTER, FAMILY_ALL, FAMILY_BASELINE
from infrepro.core.vocabulary import RUN, SEGMENT, SYSTEM
from infrepro.validation.calibration import ALPHA, LEVEL_DESIGNS, NO_RESAMPLING
from infrepro.validation.simulate import simulate

METRIC = "y"
RUN_SDS = (0.01, 0.03)  # run SDs of the first and the last system, linear in between
SEGMENT_SD, RESIDUAL_SD, N_SEGMENTS = 0.2, 0.05, 100
RUNS = (3, 5)  # runs per system, drawn per experiment
RANK_DESIGNS = ((5, 0.5), (5, 1.0), (10, 0.5))  # (systems, spacing in RANK_UNIT)
RANK_UNIT = math.sqrt(0.02**2 + RESIDUAL_SD**2 / N_SEGMENTS)  # a run mean's SD at run SD 0.02


@dataclass(frozen=True)
class DecisionDesign:
    """A cell of the decision benchmark: k systems (``k`` = 2: a design of LEVEL_DESIGNS) with
    true means ``spacing`` · RANK_UNIT · i for system i, and its seed block."""

    key: str
    title: str
    k: int
    seed: int
    spacing: float = 0.0
    two_system: str = ""  # key of LEVEL_DESIGNS

    def experiment(self, i: int) -> MetricData:
        """Experiment i (seed ``seed + i``)."""
        if self.two_system:
            design = LEVEL_DESIGNS[self.two_system][1]()
            return simulate(design, self.seed + i).metric_data(options=NO_RESAMPLING)
        effects = [self.spacing * RANK_UNIT * j for j in range(self.k)]
        return several_systems(self.k, self.seed + i, effects)


def decision_designs(seed: int = 2031, two_system_seed: int = 13_000) -> dict[str, DecisionDesign]:
    """The benchmark's cells; ``k5``/``k10`` use seeds ``seed + i`` (the seeds of the first
    measurement), ``a``/``b`` the run-aware benchmark's cells (seed 13,000 + 10⁶ × position)."""
    position = {key: n + 1 for n, key in enumerate(LEVEL_DESIGNS)}
    out = [
        DecisionDesign("k5", "5 identical systems", 5, seed),
        DecisionDesign("k10", "10 identical systems", 10, seed),
        *[
            DecisionDesign(
                key, LEVEL_DESIGNS[key][0], 2, two_system_seed + 1_000_000 * position[key], 0.0, key
            )
            for key in ("a", "b")
        ],
        *[
            DecisionDesign(
                f"rank{s:g}" if k == 5 else f"k{k}-rank{s:g}",
                f"{k} systems, true means spaced by {s:g} run-mean SD ({s * RANK_UNIT:.4f})",
                k,
                seed + 1_000_000 * (j + 1),
                s,
            )
            for j, (k, s) in enumerate(RANK_DESIGNS)
        ],
    ]
    return {d.key: d for d in out}


def several_systems(
    k: int,
    seed: int,
    effects: list[float] | None = None,
    run_sds: tuple[float, float] = RUN_SDS,
    runs_per_system: tuple[int, int] = RUNS,
) -> MetricData:
    """k systems S00..S(k-1) (S00 the baseline) on 100 segments (SD 0.2, residual SD 0.05),
    3-5 runs each (``runs_per_system``), run SDs from 0.01 to 0.03 (``run_sds``) across
    systems, true means 0.4 + effects."""
    rng = np.random.default_rng(seed)
    effects = effects or [0.0] * k
    segments = [f"g{j:03d}" for j in range(N_SEGMENTS)]
    seg = rng.normal(0, SEGMENT_SD, N_SEGMENTS)
    frames, runs = [], []
    low, high = runs_per_system
    for i, run_sd in enumerate(np.linspace(*run_sds, k)):
        system = f"S{i:02d}"
        for r in range(int(rng.integers(low, high + 1))):
            run = f"{system}_{r}"
            runs.append({RUN: run, SYSTEM: system})
            y = (
                0.4
                + effects[i]
                + seg
                + rng.normal(0, run_sd)
                + rng.normal(0, RESIDUAL_SD, N_SEGMENTS)
            )
            frames.append(pd.DataFrame({RUN: run, SYSTEM: system, SEGMENT: segments, METRIC: y}))
    return MetricData(
        metric=METRIC,
        better="higher",
        baseline="S00",
        evaluation=pd.concat(frames, ignore_index=True),
        runs=pd.DataFrame(runs),
        facets=[],
        properties=[],
    )


def true_ranks(effects: list[float]) -> list[int]:
    """1 + the number of systems with a larger true mean (higher is better)."""
    return [1 + sum(e > x for e in effects) for x in effects]


def decision_outcomes(
    data: MetricData, truth: list[float], seed: int, adjust: str | None = None
) -> dict[str, object] | None:
    """One experiment decided as the ``summary`` analysis decides it (``decide``: model M, the
    family's procedure ``adjust``, the records of both families) and read by
    ``read_decision``; None if M or a df fails."""
    settings = Settings(alpha=ALPHA, seed=seed, **({"adjust": adjust} if adjust else {}))
    result = decide(data, FitLog(data.metric), settings)
    return read_decision(result, data, truth) if result.records else None


def read_decision(
    result: MetricDecision, data: MetricData, truth: list[float]
) -> dict[str, object]:
    """The records read as a reader reads them, per family (``baseline``, ``all_pairs``):
    ``better_<family>``/``any_<family>``: some competitor claimed better than (in either
    direction from) the baseline; ``fwer_<family>``: any false directional verdict in the
    family (a verdict where the truth is no difference, or the wrong direction);
    ``power_<family>``/``true_<family>``: right directional verdicts among the pairs whose
    true means differ, and how many there are. Then ``split``: the letters have more than one
    group; ``covered``/``compared``: intervals vs the baseline (the named family's) covering
    the true improvement, ``all_covered``: all of them at once; ``agree``: every record's
    interval excludes 0 exactly when its verdict is directional; ``ranks``: the rank
    intervals (``truth``: the true means, baseline first)."""
    systems = data.systems
    index = {s: j for j, s in enumerate(systems)}
    sign = data.sign()

    def true_gain(r) -> float:
        return sign * (truth[index[r.system]] - truth[index[r.reference]])

    out: dict[str, object] = {}
    for family in (FAMILY_BASELINE, FAMILY_ALL):
        records = [r for r in result.records if r.family == family]
        against = [r for r in records if r.reference == data.baseline]
        out[f"better_{family}"] = any(r.verdict == BETTER and true_gain(r) <= 0 for r in against)
        out[f"any_{family}"] = any(r.directional and true_gain(r) == 0 for r in against)
        out[f"fwer_{family}"] = any(
            r.directional and (true_gain(r) == 0 or (r.improvement > 0) != (true_gain(r) > 0))
            for r in records
        )
        differ = [r for r in records if true_gain(r) != 0]
        out[f"power_{family}"] = sum(
            r.directional and (r.improvement > 0) == (true_gain(r) > 0) for r in differ
        )
        out[f"true_{family}"] = len(differ)
    named = [r for r in result.records if r.family == FAMILY_BASELINE]
    hits = [r.lower <= true_gain(r) <= r.upper for r in named]
    out["covered"], out["compared"], out["all_covered"] = sum(hits), len(hits), all(hits)
    out["agree"] = all((r.lower > 0 or r.upper < 0) == r.directional for r in result.records)
    groups = {c for v in result.summary["group"] for c in str(v)}
    out["split"] = len(groups) > 1 and not any(truth)
    rows = result.summary.set_index(SYSTEM)
    out["ranks"] = [
        [int(rows.loc[s, "rank_lower"]), int(rows.loc[s, "rank_upper"])] for s in systems
    ]
    out["min_df"] = round(min(r.df for r in result.records), 3)
    return out


def truth_of(design: DecisionDesign) -> list[float]:
    """True means minus 0.4, in the order of ``MetricData.systems`` (baseline first)."""
    return [design.spacing * RANK_UNIT * j for j in range(design.k)]


def rank_coverage(ranks: list[list[int]], truth: list[float]) -> tuple[int, bool]:
    """(intervals covering their system's true rank, all of them do)."""
    hits = [lo <= t <= hi for (lo, hi), t in zip(ranks, true_ranks(truth), strict=True)]
    return sum(hits), all(hits)
