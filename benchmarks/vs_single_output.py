"""A multi-run system against a single output (issue 41; docs/method.md §4c.4): the level and
power of the pair's test through the decision's own code path.

Each experiment: system A has one run (the single output), B has n runs, on S = 60 segments;
y = 0.4 + a segment effect (SD 0.2) + B's run offset (SD ``run_sd``) + noise (SD 0.05), so a
run mean's residual part has SD 0.05/sqrt(60) = 0.0065. The estimand fixes A's output (§4c.4):
under the null, B's mean over retraining equals A's output mean on these segments (B is shifted
by A's mean noise). Power: B ahead by 3 run-mean SDs, sqrt(run_sd² + 0.05²/60).

Tests, on M fitted by ``fit_decision_model`` and its pairs given their tests by ``calibrate``:
- M's t: the contrast's t with M's Kenward-Roger df (the test before issue 41);
- capped: the same t with df min(KR, n − 1);
- run means: the decision's test (``pairtests.run_means_test``).
A false claim: p < 0.05 in either direction; power: p < 0.05 with B ahead.

Usage: nice python benchmarks/vs_single_output.py [--n 400] [--out FILE]
Seeded (cell by cell): the same arguments give the same table.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.model import calibrate, fit_decision_model
from infrepro.analyses.decision.pairtests import RunVariance

SEGMENTS, RESIDUAL_SD = 60, 0.05
RUNS = (2, 3, 5)
RUN_SDS = (0.0, 0.01, 0.05)
EFFECT = 3.0  # in run-mean SDs


def experiment(rng: np.random.Generator, runs: int, run_sd: float, shift: float) -> MetricData:
    """One experiment: A's single output and B's ``runs`` runs (B ahead by ``shift``)."""
    segment = rng.normal(0.0, 0.2, SEGMENTS)
    noise_a = rng.normal(0.0, RESIDUAL_SD, SEGMENTS)
    rows = [("A_0", "A", f"s{i}", v) for i, v in enumerate(0.4 + segment + noise_a)]
    for r in range(runs):
        y = 0.4 + noise_a.mean() + shift + segment + rng.normal(0.0, run_sd)
        y = y + rng.normal(0.0, RESIDUAL_SD, SEGMENTS)
        rows += [(f"B_{r}", "B", f"s{i}", v) for i, v in enumerate(y)]
    evaluation = pd.DataFrame(rows, columns=["run_id", "system", "segment_id", "y"])
    run_table = evaluation[["run_id", "system"]].drop_duplicates().reset_index(drop=True)
    return MetricData("y", "higher", "A", evaluation, run_table, [], [], {})


def rejections(runs: int, run_sd: float, effect: float, n: int, seed: int) -> np.ndarray:
    """Counts of (M's t, capped, run means) rejecting at 0.05 (with B ahead when effect > 0)."""
    rng = np.random.default_rng(seed)
    shift = effect * math.sqrt(run_sd**2 + RESIDUAL_SD**2 / SEGMENTS)
    count = np.zeros(3)
    for _ in range(n):
        data = experiment(rng, runs, run_sd, shift)
        model = fit_decision_model(data, FitLog("y"))
        assert model is not None
        delta = model.pairs[0].delta
        calibrate(model, data, RunVariance())
        test = model.pairs[0].test
        t = delta.estimate / delta.se
        p = (
            2.0 * stats.t.sf(abs(t), delta.df),
            2.0 * stats.t.sf(abs(t), min(delta.df, runs - 1.0)),
            10.0**test.log10_p,
        )
        ahead = (t > 0, t > 0, test.t > 0) if effect > 0 else (True, True, True)
        count += [q < 0.05 and a for q, a in zip(p, ahead, strict=True)]
    return count


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact 95 % interval of a proportion k / n."""
    lo = float(stats.beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    hi = float(stats.beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return lo, hi


def table(n: int) -> list[str]:
    """The markdown table: each cell's false-claim rate and power, with the level's 95 % CI."""
    lines = [
        "| runs of B | run SD | level: M's t | capped | run means | power: M's t | capped | "
        "run means |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k, runs in enumerate(RUNS):
        for j, run_sd in enumerate(RUN_SDS):
            seed = 1000 * k + 10 * j
            level = rejections(runs, run_sd, 0.0, n, seed) / n
            power = rejections(runs, run_sd, EFFECT, n, seed + 1) / n
            lo, hi = clopper_pearson(round(level[2] * n), n)
            cells = [f"{v:.3f}" for v in level] + [f"{v:.3f}" for v in power]
            cells[2] += f" [{lo:.3f}, {hi:.3f}]"
            lines.append(f"| {runs} | {run_sd:g} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    text = "\n".join(
        [
            "# A multi-run system against a single output (docs/method.md §4c.4)",
            "",
            f"`nice python benchmarks/vs_single_output.py --n {args.n}`: {args.n} experiments "
            f"per cell, {SEGMENTS} segments, residual SD {RESIDUAL_SD}, α = 0.05; power at "
            f"{EFFECT:g} run-mean SDs. Level's 95 % CI (Clopper-Pearson) beside the run-means "
            "test's.",
            "",
            *table(args.n),
            "",
        ]
    )
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
