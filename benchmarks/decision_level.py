"""Level of the decision table (docs/method.md §4c) on identical systems.

k identical systems, 3 to 5 runs each (drawn per experiment), run SDs from 0.01 to 0.03 across
systems (unequal run variances), segment SD 0.2, residual SD 0.05, 100 segments; model M fitted
as the ``summary`` analysis fits it (``fit_decision_model``), then:

- false "better than the baseline": any competitor with adjusted p < 0.05 and a positive
  improvement, in the family ``baseline`` (Holm over k − 1) and ``all_pairs`` (Holm over
  k(k − 1)/2);
- false group split: the letters (Holm over all pairs) have more than one group;
- coverage of the 95 % CI of every Δ against the baseline (the truth is 0).

Rates with exact 95 % Clopper-Pearson intervals. Experiment i uses seed ``--seed`` + i.

Usage: python benchmarks/decision_level.py [--systems 5] [--n 1000] [--seed 2031]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
from scipy import stats

from infrepro.analyses.data import MetricData
from infrepro.analyses.fitlog import FitLog
from infrepro.analyses.summary import fit_decision_model, group_letters, holm_pairs

ALPHA = 0.05


def experiment(k: int, seed: int, segments: int = 100) -> MetricData:
    """One experiment of k identical systems (system S00 is the baseline)."""
    rng = np.random.default_rng(seed)
    seg = rng.normal(0, 0.2, segments)
    frames, runs = [], []
    for i, run_sd in enumerate(np.linspace(0.01, 0.03, k)):
        system = f"S{i:02d}"
        for r in range(int(rng.integers(3, 6))):
            run = f"{system}_{r}"
            runs.append({"run_id": run, "system": system})
            y = 0.4 + seg + rng.normal(0, run_sd) + rng.normal(0, 0.05, segments)
            ids = [f"g{j:03d}" for j in range(segments)]
            frames.append(
                pd.DataFrame({"run_id": run, "system": system, "segment_id": ids, "y": y})
            )
    return MetricData(
        metric="y",
        better="higher",
        baseline="S00",
        evaluation=pd.concat(frames, ignore_index=True),
        runs=pd.DataFrame(runs),
        facets=[],
        properties=[],
    )


def outcomes(data: MetricData) -> tuple[bool, bool, bool, list[bool]]:
    """(false claim, baseline family), (false claim, all pairs), group split, Δ CI covers 0."""
    model = fit_decision_model(data, FitLog("y"))
    assert model is not None
    against = [p for p in model.pairs if p.first == data.baseline]
    cut = math.log10(ALPHA)
    claims = []
    for family in (against, model.pairs):
        adjusted = holm_pairs(family)
        claims.append(
            any(adjusted[(p.first, p.second)] < cut and p.delta.estimate < 0 for p in against)
        )
    letters = group_letters(model.systems, model.means, model.pairs, 1, ALPHA)
    split = len({c for v in letters.values() for c in v}) > 1
    covered = [p.delta.interval[0] <= 0 <= p.delta.interval[1] for p in against]
    return claims[0], claims[1], split, covered


def rate(hits: int, n: int) -> str:
    """``0.040 [0.029, 0.054]``: the rate and its exact 95 % Clopper-Pearson interval."""
    low = stats.beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    high = stats.beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return f"{hits / n:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2031)
    args = parser.parse_args()
    base = pairs = splits = 0
    covered: list[bool] = []
    for i in range(args.n):
        b, a, s, c = outcomes(experiment(args.systems, args.seed + i))
        base, pairs, splits = base + b, pairs + a, splits + s
        covered += c
    print(
        f"| {args.systems} | {args.n} | {rate(base, args.n)} | {rate(pairs, args.n)} | "
        f"{rate(splits, args.n)} | {rate(sum(covered), len(covered))} |"
    )


if __name__ == "__main__":
    main()
