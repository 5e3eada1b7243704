"""Calibration of the decision table (docs/method.md §4c) on simulated experiments.

Every experiment is fitted as the ``summary`` analysis fits it (``fit_decision_model``: model
M, REML, Kenward-Roger df) and read with its own functions (``holm_pairs``, ``group_letters``,
``rank_intervals``). Designs:

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

from infrepro.analyses.data import MetricData
from infrepro.analyses.fitlog import FitLog
from infrepro.analyses.summary import (
    RANK_DRAWS,
    DecisionModel,
    fit_decision_model,
    group_letters,
    holm_pairs,
    rank_intervals,
)
from infrepro.vocabulary import RUN, SEGMENT, SYSTEM

from .calibration import ALPHA, LEVEL_DESIGNS, NO_RESAMPLING
from .simulate import simulate

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


def several_systems(k: int, seed: int, effects: list[float] | None = None) -> MetricData:
    """k systems S00..S(k-1) (S00 the baseline) on 100 segments (SD 0.2, residual SD 0.05),
    3-5 runs each, run SDs from 0.01 to 0.03 across systems, true means 0.4 + effects."""
    rng = np.random.default_rng(seed)
    effects = effects or [0.0] * k
    segments = [f"g{j:03d}" for j in range(N_SEGMENTS)]
    seg = rng.normal(0, SEGMENT_SD, N_SEGMENTS)
    frames, runs = [], []
    for i, run_sd in enumerate(np.linspace(*RUN_SDS, k)):
        system = f"S{i:02d}"
        for r in range(int(rng.integers(RUNS[0], RUNS[1] + 1))):
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


def decision_outcomes(data: MetricData, truth: list[float], seed: int) -> dict[str, object] | None:
    """One experiment fitted as the ``summary`` analysis fits it and read by ``read_model``;
    None if M or a df fails."""
    model = fit_decision_model(data, FitLog(data.metric))
    return None if model is None else read_model(model, data, truth, seed)


def read_model(
    model: DecisionModel, data: MetricData, truth: list[float], seed: int
) -> dict[str, object]:
    """A fit of M read as the decision table reads it: ``better_<family>``/``any_<family>``:
    some competitor claimed better than (in either direction from) the baseline, Holm over the
    family ``baseline`` or ``all_pairs``; ``split``: the letters have more than one group;
    ``covered``/``compared``: Δ CIs vs the baseline covering the true Δ (``truth``: the true
    means, baseline first); ``ranks``: the rank intervals (RANK_DRAWS draws, seeded ``seed``)."""
    base = data.baseline
    against = [p for p in model.pairs if p.first == base]
    cut = math.log10(ALPHA)
    out: dict[str, object] = {}
    for name, family in (("baseline", against), ("all_pairs", model.pairs)):
        adjusted = holm_pairs(family)
        significant = [p for p in against if adjusted[(p.first, p.second)] < cut]
        out[f"better_{name}"] = any(p.delta.estimate < 0 for p in significant)
        out[f"any_{name}"] = bool(significant)
    letters = group_letters(model.systems, model.means, model.pairs, data.sign(), ALPHA)
    out["split"] = len({c for v in letters.values() for c in v}) > 1
    index = {s: j for j, s in enumerate(model.systems)}
    hits = [_covers(p.delta.interval, truth[0] - truth[index[p.second]]) for p in against]
    out["covered"], out["compared"] = sum(hits), len(hits)
    out["ranks"] = _rank_list(model, data.sign(), seed)
    out["min_df"] = round(min(p.delta.df for p in model.pairs), 3)
    return out


def _covers(interval: tuple[float, float], truth: float) -> bool:
    return interval[0] <= truth <= interval[1]


def _rank_list(model: DecisionModel, sign: int, seed: int) -> list[list[int]]:
    ranks = rank_intervals(model, sign, RANK_DRAWS, seed)
    return [list(ranks[s]) for s in model.systems]


def truth_of(design: DecisionDesign) -> list[float]:
    """True means minus 0.4, in the order of ``MetricData.systems`` (baseline first)."""
    return [design.spacing * RANK_UNIT * j for j in range(design.k)]


def rank_coverage(ranks: list[list[int]], truth: list[float]) -> tuple[int, bool]:
    """(intervals covering their system's true rank, all of them do)."""
    hits = [lo <= t <= hi for (lo, hi), t in zip(ranks, true_ranks(truth), strict=True)]
    return sum(hits), all(hits)
