"""Calibration benchmark (issue 4): rejection rates of the system GLRTs in A-vs-A experiments.

Seed 002 (Reimers & Gurevych, section 4) compares an approach A against itself: A and A~ run the
same code and differ only in their random seeds, so every "significant" difference is a false
positive and a valid test at alpha = 0.05 rejects in at most 5% of such experiments.

Each simulated experiment (``infrepro.simulate.a_vs_a``) has ``--segments`` test segments and
``--runs`` runs per system. Every run gets its own random offset (SD ``--run-sd``, default 0.011:
the random-seed component of thesis Table 4.4, BART+R3F Rouge-1, beside segment SD 0.096 and
residual SD 0.068). Both systems are identical. On all runs it applies the two GLRTs of
docs/method.md §4.1 exactly as ``compare_systems`` does (same ``formulas`` and ``run_glrt``; the
best-vs-best comparison is left out here, it is in benchmarks/validity.py):

- the paper's model: ``score ~ system + (1|segment_id)`` vs ``score ~ 1 + (1|segment_id)``;
- the run-aware model: both with ``+ (1|run_id)``.

It reports the rejection rates with exact 95% Clopper-Pearson intervals, and two references:

- "Welch t on run means": ``classical_tests``' Welch t-test on the run-level mean scores of the
  same experiments (seed 002's Evaluation 3). Its level is 0.05 up to its own small-sample
  approximation, so it shows how far this particular set of experiments strays by chance (a
  Monte Carlo control: 500 experiments have a standard error of about 0.01).
- "theory": the level the run-aware GLRT has in a balanced design. There the run-mean stratum
  carries the system contrast, and the GLRT is, to a very good approximation, the ML
  likelihood ratio of a one-way model on the N = 2 x runs run means,
  LR = (N - 1) log(1 + F/(N - 2)) with F ~ F(1, N - 2). Its level is therefore
  P(F > (N - 2)(exp(c/(N - 1)) - 1)), c the chi-square(1) critical value: 0.068 for 6 runs per
  system, 0.055 for 20. The chi-square reference is exact only as the number of runs grows;
  with few runs the run-aware GLRT is liberal.

Usage: python benchmarks/calibration.py [--n 500] [--runs 6,20] [--segments 200] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

from scipy import stats

from infrepro.analyses.classical import classical_tests
from infrepro.analyses.fitlog import FitLog
from infrepro.analyses.glrt import run_glrt
from infrepro.simulate import REAL_RUN_SD, a_vs_a, simulate
from infrepro.vocabulary import comparison_formulas as formulas

ALPHA = 0.05
LEVEL_BOUND = 0.065
VARIANTS = {"paper": False, "run_aware": True}
WELCH = "Welch t (run means)"
NO_RESAMPLING = {"bootstrap": {"samples": 1}, "randomization": {"samples": 1}}


@dataclass
class Rates:
    """Rejections of each test over the experiments that could be fitted."""

    runs_per_system: int
    n_segments: int
    experiments: int
    rejections: dict[str, int]
    failed: int = 0

    def rate(self, variant: str) -> float:
        return self.rejections[variant] / self.experiments if self.experiments else math.nan


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial confidence interval for k successes in n trials."""
    if n == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    low = float(stats.beta.ppf(tail, k, n - k + 1)) if k > 0 else 0.0
    high = float(stats.beta.ppf(1.0 - tail, k + 1, n - k)) if k < n else 1.0
    return low, high


def rate_cell(k: int, n: int) -> str:
    """'0.052 [0.035, 0.074]': a rejection rate and its 95% interval."""
    if n == 0:
        return "NA"
    low, high = clopper_pearson(k, n)
    return f"{k / n:.3f} [{low:.3f}, {high:.3f}]"


def run_means_level(total_runs: int, alpha: float = ALPHA) -> float:
    """Level of the run-aware GLRT in a balanced design with ``total_runs`` runs (see above)."""
    n = total_runs
    if n <= 2:
        return math.nan
    critical = float(stats.chi2.isf(alpha, 1))
    threshold = (n - 2) * math.expm1(critical / (n - 1))
    return float(stats.f.sf(threshold, 1, n - 2))


def rejects(row: dict[str, object], alpha: float = ALPHA) -> bool:
    """Does a glrt row reject at ``alpha``? (log10 p, so tiny p-values never underflow)."""
    return float(row["log10_p"]) < math.log10(alpha)  # type: ignore[arg-type]


def a_vs_a_rates(
    runs_per_system: int,
    n_segments: int,
    n_experiments: int,
    seed: int,
    run_sd: float = REAL_RUN_SD,
    progress: bool = False,
) -> Rates:
    """Simulate ``n_experiments`` A-vs-A experiments and count the GLRTs' rejections."""
    design = a_vs_a(n_segments=n_segments, runs_per_system=runs_per_system, run_sd=run_sd)
    counts = dict.fromkeys([*VARIANTS, WELCH], 0)
    done = failed = 0
    for i in range(n_experiments):
        sim = simulate(design, seed + i)
        data = sim.metric_data(options=NO_RESAMPLING)  # only the Welch test is used
        log = FitLog(data.metric)
        rows = {}
        for name, run_aware in VARIANTS.items():
            h1, h0 = formulas(data.metric, run_aware)
            outcome = run_glrt(
                log, data.evaluation, h1, h0, analysis=name, reference_levels=data.reference_levels
            )
            if outcome is not None:
                rows[name] = outcome.row
        if len(rows) < len(VARIANTS):
            failed += 1
            continue
        done += 1
        for name, row in rows.items():
            counts[name] += rejects(row)
        classical = classical_tests(data, log)["classical"].set_index("test")
        counts[WELCH] += float(classical.loc[WELCH, "log10_p"]) < math.log10(ALPHA)
        if progress and (i + 1) % 50 == 0:
            print(f"  runs/system {runs_per_system}: {i + 1}/{n_experiments}", file=sys.stderr)
    return Rates(runs_per_system, n_segments, done, counts, failed)


def markdown(results: list[Rates], alpha: float = ALPHA) -> str:
    """The README table."""
    lines = [
        "| runs per system | segments | experiments | paper GLRT (runs fixed) "
        "| run-aware GLRT (+ (1\\|run_id)) | Welch t on run means (control) "
        "| run-aware, theory | run-aware <= 0.065 |",
        "|---:|---:|---:|---|---|---|---:|---|",
    ]
    for r in results:
        aware = r.rate("run_aware")
        lines.append(
            f"| {r.runs_per_system} | {r.n_segments} | {r.experiments} "
            f"| {rate_cell(r.rejections['paper'], r.experiments)} "
            f"| {rate_cell(r.rejections['run_aware'], r.experiments)} "
            f"| {rate_cell(r.rejections[WELCH], r.experiments)} "
            f"| {run_means_level(2 * r.runs_per_system, alpha):.3f} "
            f"| {'yes' if aware <= LEVEL_BOUND else 'no'} |"
        )
    failed = sum(r.failed for r in results)
    if failed:
        lines.append(f"\n{failed} experiment(s) left out because a fit failed.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="experiments per design")
    parser.add_argument("--runs", default="6,20", help="runs per system, comma-separated")
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--run-sd", type=float, default=REAL_RUN_SD)
    parser.add_argument("--seed", type=int, default=20240)
    parser.add_argument("--quick", action="store_true", help="60 experiments, 100 segments")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.segments, args.runs = 60, 100, "6"
    start, cpu = time.perf_counter(), time.process_time()
    results = [
        a_vs_a_rates(
            int(m),
            args.segments,
            args.n,
            args.seed + 100_000 * int(m),
            args.run_sd,
            progress=args.progress,
        )
        for m in args.runs.split(",")
    ]
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"A-vs-A experiments: 2 identical systems, run SD {args.run_sd}, segment SD 0.096, "
        f"residual SD 0.068 (thesis Table 4.4); rejection rate at alpha = {ALPHA} "
        "with 95% Clopper-Pearson intervals.\n"
    )
    print(markdown(results))
    print(f"\nWall time: {seconds:.0f} s (CPU time of this process: {cpu_seconds:.0f} s)")


if __name__ == "__main__":
    main()
