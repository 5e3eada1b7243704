"""Calibration benchmark (issue 4): rejection rates of the system GLRTs in A-vs-A experiments.

Seed 002 (Reimers & Gurevych, section 4) compares an approach A against itself: A and A~ run the
same code and differ only in their random seeds, so every "significant" difference is a false
positive and a valid test at alpha = 0.05 rejects in at most 5% of such experiments.

Each simulated experiment (``infrepro.validation.simulate.a_vs_a``) has ``--segments`` test
segments and ``--runs`` runs per system. Every run gets its own random offset (SD ``--run-sd``,
default 0.011: the random-seed component of thesis Table 4.4, BART+R3F Rouge-1, beside segment SD
0.096 and residual SD 0.068). Both systems are identical. On all runs it applies the two GLRTs of
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

Run-aware tests (issue 13): ``python benchmarks/calibration.py run-aware [--suites
level,interaction,power] [--n 1000] [--n-interaction 1000] [--n-power 500] [--designs a,c]
[--records FILE] [--out FILE] [--report-only] [--progress]`` measures, on seeded simulated
experiments (experiment i of a cell uses seed cell seed + i), with every test fitted as the
analyses fit it (same formulas from ``infrepro/core/vocabulary.py``, ``FitLog.fit``, ``run_glrt``,
``smalltests.contest``, ``classical_tests``; the tables nobody reads here are skipped):

- level at alpha = 0.05 (band [0.035, 0.065]) of the headline test ``all_runs_per_system``
  (REML, a run variance per system, t with Kenward-Roger df), beside the shared-run ML GLRT, the
  paper GLRT and Welch's t on run means, in designs (a) 6 vs 6 runs, run SD 0.011; (b) 18 stable
  (run SD 0.002) vs 6 variable (0.02) runs; (c) 18 seeds vs a 3 lambda x 2 noise x 5 seed grid
  whose lambda levels get random offsets (SD 0.02) in every experiment, where the facet-aware
  model ``all_runs_facet_aware`` is fitted too; (d) 3 vs 3 runs; 200 segments each;
- the verdict's false directional claims (headline significant in either direction);
- level of the conditional interaction tests (``conditional_runaware_interaction``, F with KR
  df, and the paper's ``conditional_interaction`` GLRT) when runs have their own random slopes
  on the property and there is no system x property interaction (cell i), beside the same
  test with the property centred (i-centred, same experiments) and a design whose runs have no
  slopes of their own (i0);
- power of the headline test against Welch's t in designs (a) and (b) at 4 differences (Welch
  power about 0.2, 0.5, 0.8, 0.95), on the same experiments.

What the report claims (issue 23): ``run-aware --suites level --designs e200,e1250`` (10 vs 2
runs at 200 and 1,250 segments) and ``run-aware --suites claims`` (both systems 2 lambda x 3
seeds, B better by 0-3 run-mean SDs) record the experiments; ``python benchmarks/calibration.py
claims [--level-records F] [--claims-records F]`` puts them through the report's wording
(``infrepro.validation.claims``) and appends its section to calibration.md.

The decision (issues 20, 27): ``python benchmarks/calibration.py decision [--designs
k5,k10,a,b,rank0.5,rank1] [--n 1000] [--n-rank 400] [--records FILE] [--out FILE]
[--report-only] [--progress]`` decides every experiment as the ``summary`` analysis does
(``infrepro.validation.decision``), once with the default adjustment (single-step max-t, or
single-step Bonferroni where a family holds a calibrated test: docs/method.md §4c.10) and once with
Holm's, and measures the family-wise false directional claims of both families with 5 and 10
identical systems, the power of both on systems with distinct true means, whether every
interval excludes 0 exactly when its verdict is directional, the coverage of the intervals
(also in designs (a) and (b)) and of the rank intervals; report
benchmarks/results/decision_level.md, records decision_adjust.jsonl (not committed).

Every experiment is appended to ``--records`` (JSON lines; default
benchmarks/results/calibration_records.jsonl), so a run can be stopped and resumed, and raised
to more experiments later with the same seeds; the report (``--out``, default
benchmarks/results/calibration.md) is rebuilt from all records, with the command lines, times
and machine load of every run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from bench import RESULTS
from threadpoolctl import threadpool_limits

from infrepro.analyses.decision.summary import RANK_DRAWS
from infrepro.validation.calibration import (
    ALPHA,
    BAND,
    BASE,
    COMP,
    LEVEL_BOUND,
    NO_RESAMPLING,
    POWER_MARGIN,
    SEGMENTS,
    TESTS,
    WELCH,
    Rates,
    Scenario,
    a_vs_a_rates,
    clopper_pearson,
    comparison_experiment,
    interaction_experiment,
    rate_cell,
    result_rejects,
    run_means_level,
    scenarios,
    welch_own_level,
    welch_power,
)
from infrepro.validation.decision import (
    RANK_UNIT,
    DecisionDesign,
    decision_designs,
    decision_outcomes,
    rank_coverage,
    true_ranks,
    truth_of,
)
from infrepro.validation.run_variance import (
    RUN_VARIANCE_SEED_BLOCK,
    _family_rejects,
    run_variance_designs,
    run_variance_experiment,
)
from infrepro.validation.simulate import REAL_RUN_SD, simulate


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
    argv = sys.argv[1:] if argv is None else argv
    subcommands = {
        "run-aware": run_aware_main,
        "run-variance": run_variance_main,
        "claims": claims_main,
        "decision": decision_main,
    }
    if argv and argv[0] in subcommands:
        subcommands[argv[0]](argv[1:])
        return
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


# ============================================================================================
# Run-aware tests (issue 13): level, false directional claims, interaction level and power.
# ============================================================================================


def run_scenario(
    scenario: Scenario, n: int, records: Path, done: set[tuple[str, int]], progress: bool = False
) -> None:
    """Run experiments seed .. seed + n - 1 of a scenario not yet in ``records`` (appended)."""
    with records.open("a") as sink:
        for i in range(n):
            seed = scenario.seed + i
            if (scenario.key, seed) in done:
                continue
            start = time.perf_counter()
            sim = simulate(scenario.design, seed)
            data = sim.metric_data(options=NO_RESAMPLING)
            if scenario.kind == "interaction":
                results = interaction_experiment(data, scenario.tests)
            else:
                results = comparison_experiment(data, scenario.tests)
            record = {
                "scenario": scenario.key,
                "seed": seed,
                "seconds": round(time.perf_counter() - start, 4),
                "tests": results,
            }
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            if progress and (i + 1) % 100 == 0:
                print(
                    f"  {scenario.key}: {i + 1}/{n}  {time.strftime('%H:%M:%S')}",
                    file=sys.stderr,
                    flush=True,
                )


@contextmanager
def recorded_run(
    records: Path, subcommand: str, argv: list[str], cpus: bool = False
) -> Iterator[None]:
    """Append the run's metadata (command line, start and end times UTC, load averages) to
    ``records`` once the block is done."""
    meta: dict[str, object] = {
        "command": f"python benchmarks/calibration.py {subcommand} " + " ".join(argv),
        "start": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_start": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
    if cpus:
        meta["cpus"] = os.cpu_count()
    yield
    meta.update(
        end=time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        load_end=" / ".join(f"{x:.1f}" for x in os.getloadavg()),
    )
    with records.open("a") as sink:
        sink.write(json.dumps({"meta": meta}) + "\n")


def command_parser(
    command: str, description: str, records: Path, out: Path, progress: bool = True
) -> argparse.ArgumentParser:
    """A sub-command's parser with the options every recording sub-command has: its records
    (JSON lines, resumable), its report, ``--report-only`` (rebuild the report from the
    records) and ``--progress``."""
    parser = argparse.ArgumentParser(prog=f"calibration.py {command}", description=description)
    parser.add_argument("--records", type=Path, default=records)
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--report-only", action="store_true")
    if progress:
        parser.add_argument("--progress", action="store_true")
    return parser


def replace_section(out: Path, mark: str, section: str) -> None:
    """Write ``section`` (which starts with ``mark``) in place of everything from ``mark`` on in
    ``out``, keeping what comes before it."""
    text = out.read_text() if out.exists() else ""
    out.write_text(text.split(mark)[0].rstrip("\n") + "\n\n" + section)


def read_records(path: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Experiment records and run metadata (command line, times, machine load)."""
    experiments, meta = [], []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                (meta if "meta" in record else experiments).append(record)
    return experiments, meta


def recorded_seeds(path: Path) -> set[tuple[str, int]]:
    """(scenario, seed) of every experiment already in ``path``: what a resumed run skips."""
    experiments, _ = read_records(path)
    return {(r["scenario"], r["seed"]) for r in experiments}


def _cell(k: int, n: int) -> tuple[str, str]:
    if n == 0:
        return "NA", "NA"
    low, high = clopper_pearson(k, n)
    return f"{k / n:.3f}", f"[{low:.3f}, {high:.3f}]"


def _in_band(k: int, n: int) -> str:
    if n == 0:
        return "NA"
    return "yes" if BAND[0] <= k / n <= BAND[1] else "**no**"


def _by_scenario(experiments: list[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    by_key: dict[str, list[dict[str, object]]] = {}
    for record in experiments:
        by_key.setdefault(str(record["scenario"]), []).append(record)
    return by_key


def _usable(records: list[dict[str, object]], test: str) -> list[dict[str, object]]:
    results = [r["tests"].get(test) for r in records]  # type: ignore[union-attr]
    return [x for x in results if x is not None and x["log10_p"] is not None]


def level_tables(experiments: list[dict[str, object]], scenario_list: list[Scenario]) -> str:
    """Level, false directional claims and interaction level tables."""
    by_key = _by_scenario(experiments)
    chosen = [sc for sc in scenario_list if sc.kind in ("level", "interaction")]
    legend = ["Designs (200 segments each; A = baseline, B = competitor):", ""]
    legend += [f"- **{sc.key}**: {sc.title}" for sc in chosen]
    lines = [
        "### Level at alpha = 0.05 (null: no system difference, no interaction)",
        "",
        *legend,
        "",
        "Band: [0.035, 0.065]. 'required' marks the tests the acceptance criteria hold to it; the "
        "others are shown for reference. In design c the headline (per-system) model treats the "
        "competitor's 30 runs as exchangeable although they share 3 lambda levels with random "
        "offsets: it is expected to be liberal there, and the facet-aware model is the one held "
        "to the band.",
        "",
        "| design | test | required | experiments | rejections | rate | 95% CI | in band? |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    claims = [
        "### The verdict's false directional claims",
        "",
        "A directional claim ('B is better' / 'A is better') needs the headline test significant "
        "at 0.05 in that direction; under the null every such claim is false. For design c the "
        "same rule is also applied to the facet-aware sensitivity model.",
        "",
        "| design | model | experiments | 'B better' | 'A better' | false claims | rate | 95% CI "
        "| <= 0.05? |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    notes: list[str] = []
    for sc in chosen:
        records = by_key.get(sc.key, [])
        for test in sc.tests:
            label, analysis, required = TESTS[test]
            required = required and not (sc.key == "c" and test == "headline")
            usable = _usable(records, test)
            k, n = sum(result_rejects(x) for x in usable), len(usable)
            rate, ci = _cell(k, n)
            lines.append(
                f"| {sc.key} | {label.replace('|', chr(92) + '|')} (`{analysis}`) "
                f"| {'yes' if required else 'no'} | {n} | {k} "
                f"| {rate} | {ci} | {_in_band(k, n)} |"
            )
            if len(records) - n:
                notes.append(
                    f"{sc.key}, {test}: {len(records) - n} experiment(s) without a p-value "
                    "(fit or test failed; left out of the rate)"
                )
            if test in ("headline", "facet_aware"):
                up = sum(result_rejects(x) and x["estimate"] < 0 for x in usable)
                down = sum(result_rejects(x) and x["estimate"] > 0 for x in usable)
                rate, ci = _cell(up + down, n)
                ok = "yes" if n and (up + down) / n <= 0.05 else "**no**"
                claims.append(
                    f"| {sc.key} | {test} | {n} | {up} | {down} | {up + down} | {rate} | {ci} "
                    f"| {ok} |"
                )
            if test.startswith(("headline", "facet_aware", "runaware_interaction")) and usable:
                dfs = np.array([float(x["df"]) for x in usable])
                methods = ", ".join(sorted({str(x["method"]) for x in usable}))
                notes.append(
                    f"{sc.key}, {test}: {methods} denominator df median {np.median(dfs):.2f} "
                    f"(5-95 %: {np.quantile(dfs, 0.05):.2f}-{np.quantile(dfs, 0.95):.2f})"
                )
        if sc.key in ("a", "b", "d"):
            notes.append(
                f"{sc.key}: Welch's t's own level with these run counts and run-mean variances "
                f"(400,000 simulated samples of normal run means): {welch_own_level(sc.design):.4f}"
            )
        if "headline" in sc.tests and "welch" in sc.tests:
            pairs = [
                (r["tests"].get("headline"), r["tests"].get("welch"))  # type: ignore[union-attr]
                for r in records
            ]
            pairs = [(h, w) for h, w in pairs if h is not None and w is not None]
            if pairs:
                same = sum(result_rejects(h) == result_rejects(w) for h, w in pairs)
                close = sum(abs(h["log10_p"] - w["log10_p"]) < 1e-6 for h, w in pairs)
                notes.append(
                    f"{sc.key}: headline and Welch reach the same decision in {same} of "
                    f"{len(pairs)} experiments; equal p-values (log10 within 1e-6) in {close}"
                )
    out = lines + [""] + claims
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out)


def power_table(experiments: list[dict[str, object]], scenario_list: list[Scenario]) -> str:
    """Power of the headline test against Welch's t on run means, in the same experiments."""
    by_key = _by_scenario(experiments)
    lines = [
        "### Power (competitor B better by the given difference)",
        "",
        "Designs a and b as above with B better by the difference (points = score x 100). Both "
        "tests on the same experiments; two-sided rejections at 0.05 with Clopper-Pearson 95% "
        "intervals (the share significant in the right direction in brackets when some went the "
        "wrong way). 'theory': Welch's power from the noncentral t. The difference's 95% CI is "
        "the paired Wald interval; 'discordant': experiments where only the headline / only "
        "Welch rejects.",
        "",
        "| design | B - A (points) | Welch power, theory | experiments | Welch t on run means "
        "| headline | headline - Welch | discordant | within 0.05? |",
        "|---|---:|---:|---:|---|---|---|---:|---|",
    ]
    for sc in scenario_list:
        if sc.kind != "power":
            continue
        pairs = [
            (r["tests"].get("headline"), r["tests"].get("welch")) for r in by_key.get(sc.key, [])
        ]
        pairs = [(h, w) for h, w in pairs if h is not None and w is not None]
        n = len(pairs)
        if not n:
            continue
        h = np.array([result_rejects(a) for a, _ in pairs])
        w = np.array([result_rejects(b) for _, b in pairs])
        right_h = sum(result_rejects(a) and a["estimate"] < 0 for a, _ in pairs)
        right_w = sum(result_rejects(b) and b["estimate"] < 0 for _, b in pairs)
        diff = (h.sum() - w.sum()) / n
        b_, c_ = int(np.sum(h & ~w)), int(np.sum(~h & w))
        se = math.sqrt(max((b_ + c_) / n - diff**2, 0.0) / n)
        ok = "yes" if abs(diff) <= POWER_MARGIN else "**no**"

        def cell(k: int, right: int, n: int = n) -> str:
            rate, ci = _cell(k, n)
            extra = f" ({right / n:.3f})" if right != k else ""
            return f"{rate}{extra} {ci}"

        lines.append(
            f"| {sc.key[0]} | {100 * sc.effect:.2f} | {welch_power(sc.design, sc.effect):.2f} "
            f"| {n} | {cell(int(w.sum()), right_w)} | {cell(int(h.sum()), right_h)} "
            f"| {diff:+.3f} [{diff - 1.96 * se:+.3f}, {diff + 1.96 * se:+.3f}] "
            f"| {b_} / {c_} | {ok} |"
        )
    return "\n".join(lines)


def timing_table(experiments: list[dict[str, object]], scenario_list: list[Scenario]) -> str:
    lines = ["| cell | experiments | wall seconds per experiment (mean) |", "|---|---:|---:|"]
    for sc in scenario_list:
        seconds = [r["seconds"] for r in experiments if r["scenario"] == sc.key]
        if seconds:
            lines.append(f"| {sc.key}: {sc.kind} | {len(seconds)} | {np.mean(seconds):.3f} |")
    return "\n".join(lines)


def report(records: Path, seed: int) -> str:
    experiments, meta = read_records(records)
    scenario_list = scenarios(["level", "interaction", "power"], seed)
    head = [
        "# Level and power of the run-aware tests (issue 13)",
        "",
        "Simulated with `infrepro.validation.simulate` (segment SD 0.096, residual SD 0.068, "
        f"{SEGMENTS} segments, thesis Table 4.4); every test fitted as the analyses fit it "
        "(benchmarks/calibration.py, `run-aware`). Rates at alpha = 0.05 with exact "
        "Clopper-Pearson 95% intervals. Experiment i of a cell uses seed (cell seed + i).",
        "",
        f"Runs of this benchmark (records: `{records.name}`):",
        "",
    ]
    for m in meta:
        info = m["meta"]
        head.append(
            f"- `{info['command']}`: {info['start']} - {info.get('end', '?')} UTC, "
            f"load average (1/5/15 min) at start {info['load_start']}, "
            f"at end {info.get('load_end', '?')} on {info['cpus']} CPUs"
        )
    return "\n".join(
        head
        + [
            "",
            level_tables(experiments, scenario_list),
            "",
            power_table(experiments, scenario_list),
            "",
            "### Time per experiment",
            "",
            timing_table(experiments, scenario_list),
            "",
        ]
    )


def run_aware_main(argv: list[str]) -> None:
    parser = command_parser(
        "run-aware",
        "Level and power of the run-aware tests (issue 13)",
        RESULTS / "calibration_records.jsonl",
        RESULTS / "calibration.md",
    )
    parser.add_argument(
        "--suites",
        default="level,interaction,power",
        help="comma-separated: level, interaction, power",
    )
    parser.add_argument("--designs", default="", help="only these cells (keys, comma-separated)")
    parser.add_argument("--n", type=int, default=1000, help="null experiments per design")
    parser.add_argument("--n-interaction", type=int, default=1000)
    parser.add_argument("--n-power", type=int, default=500, help="experiments per effect size")
    parser.add_argument("--seed", type=int, default=13_000)
    args = parser.parse_args(argv)
    args.records.parent.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        done = recorded_seeds(args.records)
        wanted = set(filter(None, args.designs.split(",")))
        with (
            recorded_run(args.records, "run-aware", argv, cpus=True),
            threadpool_limits(limits=1),  # small matrices: BLAS threads only cost time
        ):
            for sc in scenarios(args.suites.split(","), args.seed):
                if wanted and sc.key not in wanted:
                    continue
                n = {"level": args.n, "interaction": args.n_interaction, "power": args.n_power}[
                    sc.kind
                ]
                if args.progress:
                    print(f"{sc.key} ({sc.kind}): {n} experiments", file=sys.stderr, flush=True)
                run_scenario(sc, n, args.records, done, args.progress)
    text = report(args.records, args.seed)
    if RUN_VARIANCE_RECORDS.exists():  # keep the run-variance section (calibration.py run-variance)
        text = text.rstrip("\n") + "\n\n" + run_variance_section(RUN_VARIANCE_RECORDS)
    args.out.write_text(text)
    print(text)


# ============================================================================================
# Run variance in every run-aware test and in the VCA: level of the conditional and metaparam
# tests, recovery of the retraining SD.
# ============================================================================================

RUN_VARIANCE_RECORDS = RESULTS / "run_variance_records.jsonl"
RUN_VARIANCE_MARK = (
    "<!-- run variance: written by `calibration.py run-variance`, kept by the report above -->"
)


def run_variance_run(keys: list[str], n: dict[str, int], seed: int, records: Path) -> None:
    done = recorded_seeds(records)
    designs = run_variance_designs()
    with records.open("a") as sink, threadpool_limits(limits=1):
        for key in keys:
            design = designs[key][1]
            base = seed + 1_000_000 * RUN_VARIANCE_SEED_BLOCK[key]
            for i in range(n[key]):
                if (key, base + i) in done:
                    continue
                start = time.perf_counter()
                result = run_variance_experiment(key, simulate(design, base + i))
                record = {
                    "scenario": key,
                    "seed": base + i,
                    "seconds": round(time.perf_counter() - start, 4),
                    "tests": result,
                }
                sink.write(json.dumps(record) + "\n")
                sink.flush()


def run_variance_section(records: Path) -> str:
    """The measured levels and the VCA recovery (appended to calibration.md)."""
    experiments, meta = read_records(records)
    by_key = _by_scenario(experiments)
    designs = run_variance_designs()
    lines = [
        RUN_VARIANCE_MARK,
        "",
        "## Run variance per system, pre-specified facets, run-aware VCA",
        "",
        "Every experiment goes through the analyses' own code: the run-aware tests through "
        "`runaware_property_tests` (the analyses' `property_rows`, `tested_facets`, "
        "`facet_variants`, `run_aware_fit` and Holm families; the paper's GLRTs and post-hoc "
        "tables left out), the VCA through `variance_components` (`benchmarks/calibration.py "
        f"run-variance`, records `{records.name}`, the two runs below concatenated). Designs (200 "
        "segments):",
        "",
        *[f"- **{key}**: {title}" for key, (title, _) in designs.items()],
        "",
    ]
    for m in meta:
        info = m["meta"]
        lines.append(
            f"- `{info['command']}`: {info['start']} - {info.get('end', '?')} UTC, load "
            f"average at start {info['load_start']}, at end {info.get('load_end', '?')}"
        )
    lines += [
        "",
        "### Level at alpha = 0.05 (band [0.035, 0.065])",
        "",
        "| design | test | experiments | rejections | rate | 95% CI | in band? | KR df median |",
        "|---|---|---:|---:|---:|---|---|---:|",
    ]
    cells = (
        ("cond-b", "conditional_runaware_joint", "run-aware joint (system + system:length)", True),
        ("cond-b", "conditional_runaware_interaction", "run-aware interaction", True),
        ("meta-null", "metaparam_runaware_joint", "run-aware joint, any facet (Holm)", True),
        ("meta-null", "metaparam_runaware_joint", "run-aware joint, per facet (unadjusted)", False),
        ("meta-null", "metaparam_runaware_interaction", "run-aware interaction, any (Holm)", True),
    )
    for key, analysis, label, family in cells:
        records_ = [r["tests"][analysis] for r in by_key.get(key, []) if r["tests"][analysis]]
        if family:
            k, n = sum(_family_rejects(r) for r in records_), len(records_)
        else:
            single = [x for r in records_ for x in r]
            k, n = sum(_family_rejects([x], holm=False) for x in single), len(single)
        dfs = [float(x["df"]) for r in records_ for x in r]
        rate, ci = _cell(k, n)
        median = f"{np.median(dfs):.1f}" if dfs else "NA"
        lines.append(
            f"| {key} | {label} (`{analysis}`) | {n} | {k} | {rate} | {ci} "
            f"| {_in_band(k, n) if family else '-'} | {median} |"
        )
    lines += [
        "",
        "Before issue 23 (its audit, 400 null experiments each): the conditional joint test with "
        "one run variance for both systems, `(1 + d_c || run_id)`, rejected 0.190 [0.147, "
        "0.239] in cell cond-b; the metaparam joint test of the facet with the largest VCA "
        "share, selected and tested on the same data, 0.100 [0.068, 0.140] under a full null "
        "with 3 facets. 'any facet (Holm)' is the analyses' family: a rejection of the "
        "experiment when some facet's Holm-adjusted p (over facets x properties) is below 0.05.",
        "",
        *vca_recovery_lines(by_key.get("vca-run", [])),
        "",
        "The main-effects model has no run term: the run variance goes to the residual, which "
        "is divided by the number of segments, so it misses most of the retraining SD (issue "
        "23: 0.66 against 1.20 in 40 experiments); A's runs are the levels of its single facet "
        "seed, so there both models are the same fit.",
        "",
    ]
    return "\n".join(lines)


def vca_recovery_lines(records: list[dict[str, object]]) -> list[str]:
    """Mean estimate / truth of the retraining and meta-parameter SDs, per system and model."""
    from infrepro.core.vocabulary import VCA_MAIN_EFFECTS, VCA_RUN_AWARE

    lines = [
        "### VCA recovery: SDs of a run's mean (points), mean over experiments",
        "",
        f"{len(records)} experiments of design vca-run. Truth: retraining (same recipe) = "
        "100 sqrt(run SD^2 + seed variance + residual^2 / N); setting = 100 sqrt(lambda + noise "
        "variance). Relative error = mean estimate / truth - 1.",
        "",
        "| system | VCA model | retraining SD: truth | estimate | rel. error | within 10 %? "
        "| setting SD: truth | estimate | rel. error |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for system in (BASE, COMP):
        for model in (VCA_RUN_AWARE, VCA_MAIN_EFFECTS):
            pairs = [
                (r["tests"][system]["truth"], r["tests"][system][model])
                for r in records
                if model in r["tests"][system]
            ]
            if not pairs:
                continue
            truth = np.array([p[0] for p in pairs])
            est = np.array([p[1][:2] for p in pairs])
            t_mean, e_mean = truth.mean(axis=0), est.mean(axis=0)
            rel = [
                f"{e / t - 1:+.3f}" if t > 0 else "NA" for e, t in zip(e_mean, t_mean, strict=True)
            ]
            ok = "yes" if abs(e_mean[0] / t_mean[0] - 1) <= 0.10 else "**no**"
            lines.append(
                f"| {system} | {model} | {t_mean[0]:.3f} | {e_mean[0]:.3f} | {rel[0]} | {ok} "
                f"| {t_mean[1]:.3f} | {e_mean[1]:.3f} | {rel[1]} |"
            )
    return lines


def run_variance_main(argv: list[str]) -> None:
    parser = command_parser(
        "run-variance",
        "run variance in the run-aware tests and the VCA",
        RUN_VARIANCE_RECORDS,
        RESULTS / "calibration.md",
        progress=False,
    )
    parser.add_argument("--designs", default="cond-b,meta-null,vca-run")
    parser.add_argument("--n", type=int, default=1000, help="null experiments per level cell")
    parser.add_argument("--n-vca", type=int, default=200)
    parser.add_argument("--seed", type=int, default=23_000)
    args = parser.parse_args(argv)
    keys = [k for k in run_variance_designs() if k in args.designs.split(",")]
    if not args.report_only:
        n = {"cond-b": args.n, "meta-null": args.n, "vca-run": args.n_vca}
        with recorded_run(args.records, "run-variance", argv):
            run_variance_run(keys, n, args.seed, args.records)
    replace_section(args.out, RUN_VARIANCE_MARK, run_variance_section(args.records))
    print(run_variance_section(args.records))


# ============================================================================================
# What the report claims (issue 23): the badge's level in 10 vs 2 runs, and the probability of
# a directional claim beside Welch's t for 2 lambda x 3 seeds per system.
# ============================================================================================

CLAIMS_MARK = "<!-- claims: written by `calibration.py claims`, kept by the reports above -->"


def _quantiles(values: list[float]) -> str:
    if not values:
        return "NA"
    q = np.percentile(values, [50, 5, 95])
    return f"{q[0]:.2f} ({q[1]:.2f}-{q[2]:.2f})"


def claims_level_lines(experiments: list[dict[str, object]], keys: list[str]) -> list[str]:
    """Per cell under the null: the headline test's level, the run-count rule's worst-case
    level for the design's run counts, and the badge's directional claims after the rule."""
    from infrepro.stats.runcounts import holds_level, worst_level
    from infrepro.validation.calibration import LEVEL_DESIGNS, design_runs
    from infrepro.validation.claims import claims_of

    by_key = _by_scenario(experiments)
    lines = [
        "| design | runs | experiments | headline test rejects | 95% CI | in band? "
        "| KR df median (5-95 %) | rule: Welch's worst level | claims allowed? "
        "| badge 'B better' / 'A better' | false claims | Welch t, same experiments "
        "| candidate: KR t with df min(n_A, n_B) - 1 (Hsu) |",
        "|---|---|---:|---:|---|---|---|---:|---|---|---|---|---|",
    ]
    for key in keys:
        records = [r for r in by_key.get(key, []) if r["tests"].get("headline")]
        runs = design_runs(LEVEL_DESIGNS[key][1]())
        claims = [claims_of(r["tests"]) for r in records]
        n = len(claims)
        if not n:
            continue
        up = sum(c.badge > 0 for c in claims)
        down = sum(c.badge < 0 for c in claims)
        rejects = sum(result_rejects(r["tests"]["headline"]) for r in records)
        rate, ci = _cell(rejects, n)
        dfs = [float(r["tests"]["headline"]["df"]) for r in records]
        welch = sum(result_rejects(r["tests"].get("welch")) for r in records)
        hsu = sum(_rejects_with_df(r["tests"]["headline"], min(runs) - 1.0) for r in records)
        lines.append(
            f"| {key} | {runs[0]} vs {runs[1]} | {n} | {rate} | {ci} | {_in_band(rejects, n)} "
            f"| {_quantiles(dfs)} | {worst_level(*runs, ALPHA):.3f} "
            f"| {'yes' if holds_level(*runs, ALPHA) else 'no: not judged'} | {up} / {down} "
            f"| {rate_cell(up + down, n)} | {rate_cell(welch, n)} | {rate_cell(hsu, n)} |"
        )
    return lines


def _rejects_with_df(result: dict[str, object], df: float) -> bool:
    """Would the headline's t (recovered from its two-sided p and KR df) reject with ``df``?"""
    from scipy import stats

    t = float(stats.t.isf(10 ** float(result["log10_p"]) / 2, float(result["df"])))
    return bool(2 * stats.t.sf(t, df) < ALPHA)


def claims_power_lines(experiments: list[dict[str, object]], seed: int) -> list[str]:
    """Probability of a directional claim against Welch's t, per improvement."""
    from infrepro.validation.calibration import claims_scenarios, run_mean_sd
    from infrepro.validation.claims import claims_of

    by_key = _by_scenario(experiments)
    lines = [
        "| B - A (run-mean SDs) | points | experiments | Welch power, theory | Welch t "
        "(B better) | badge 'B better' | badge - Welch | within 0.05? | any wording 'B better' "
        "| any wording 'A better' | generalises 'B better' | 'not judged' | facet-aware df "
        "median (5-95 %) |",
        "|---:|---:|---:|---:|---|---|---|---|---|---|---|---:|---|",
    ]
    null = (0, 0, 0)
    for sc in claims_scenarios(seed):
        records = [r for r in by_key.get(sc.key, []) if r["tests"].get("headline")]
        n = len(records)
        if not n:
            continue
        claims = [claims_of(r["tests"]) for r in records]
        welch = np.array(
            [
                result_rejects(r["tests"].get("welch")) and r["tests"]["welch"]["estimate"] < 0
                for r in records
            ]
        )
        badge = np.array([c.badge > 0 for c in claims])
        diff = badge.mean() - welch.mean()
        b_, c_ = int(np.sum(badge & ~welch)), int(np.sum(~badge & welch))
        se = math.sqrt(max((b_ + c_) / n - diff**2, 0.0) / n)
        ok = "yes" if abs(diff) <= POWER_MARGIN else "**no**"
        dfs = [
            float(r["tests"]["facet_aware"]["df"]) for r in records if r["tests"].get("facet_aware")
        ]
        k = round(sc.effect / run_mean_sd()) if sc.effect else 0
        if k == 0:
            null = (
                sum(c.badge != 0 for c in claims),
                sum(c.general != 0 for c in claims),
                n,
            )
        lines.append(
            f"| {k} | {100 * sc.effect:.2f} | {n} | {welch_power(sc.design, sc.effect):.3f} "
            f"| {rate_cell(int(welch.sum()), n)} | {rate_cell(int(badge.sum()), n)} "
            f"| {diff:+.3f} [{diff - 1.96 * se:+.3f}, {diff + 1.96 * se:+.3f}] | {ok} "
            f"| {rate_cell(sum(c.names(1) for c in claims), n)} "
            f"| {rate_cell(sum(c.names(-1) for c in claims), n)} "
            f"| {rate_cell(sum(c.general > 0 for c in claims), n)} "
            f"| {sum(c.not_judged for c in claims) / n:.3f} | {_quantiles(dfs)} |"
        )
    if null[2]:
        lines += [
            "",
            f"At 0 SDs (the null): the badge names a winner (either way) in "
            f"{rate_cell(null[0], null[2])}, the generalisation line in "
            f"{rate_cell(null[1], null[2])}.",
        ]
    return lines


def _runs_of(meta: list[dict[str, object]]) -> list[str]:
    return [
        f"- `{m['meta']['command']}`: {m['meta']['start']} - {m['meta'].get('end', '?')} UTC, "
        f"load average at start {m['meta']['load_start']}, at end {m['meta'].get('load_end', '?')}"
        for m in meta
    ]


def claims_section(level: Path, claims: Path, seed: int) -> str:
    """The claims section of calibration.md, from the run-aware records of both runs."""
    from infrepro.validation.calibration import LEVEL_DESIGNS, run_mean_sd

    level_experiments, level_meta = read_records(level)
    claims_experiments, claims_meta = read_records(claims)
    # a seed written twice (two runs resumed on one file) is the same experiment: count it once
    level_experiments = list({(r["scenario"], r["seed"]): r for r in level_experiments}.values())
    claims_experiments = list({(r["scenario"], r["seed"]): r for r in claims_experiments}.values())
    lines = [
        CLAIMS_MARK,
        "",
        "## What the report claims (issue 23, items 5-7)",
        "",
        "Every experiment's headline and facet-aware tests (`comparison_experiment`, as "
        "`compare_systems` fits them, Kenward-Roger df at every size) go through the report's "
        "own readings (`infrepro/validation/claims.py`): the badge and the separate line on other "
        "levels. The badge "
        "comes from the per-system test alone and states its estimand (retrained with this "
        "recipe, at these settings); the simulated runs have no dev scores, so best vs best is "
        "not read and no badge presupposes an improvement. Records: "
        f"`{level.name}`, `{claims.name}`.",
        "",
        *_runs_of(level_meta),
        *_runs_of(claims_meta),
        "",
        "### Level of the badge: 10 vs 2 and 10 vs 4 runs (run SD 0.011 each)",
        "",
        "Null: no system difference. 'headline test rejects': the per-system test significant "
        "at 0.05 either way (its level); 'rule': the largest exact level of Welch's t for the "
        "design's run counts over run-variance ratios 1/4 to 4 (`infrepro/stats/runcounts.py`, "
        "docs/method.md §4b.6 'Run counts'); a claim is allowed when it is at most 0.065. "
        "'badge': what the report says, through `claims_of` with the run counts, so a "
        "false claim is a badge naming a winner. Band [0.035, 0.065]. Before issue 23, at "
        "1,250 segments the analyses used Satterthwaite: 0.090 [0.064, 0.122] (400 experiments "
        "of the audit); at 200 segments (KR) 0.052.",
        "",
        *claims_level_lines(level_experiments, ["e200", "e1250", "f1250"]),
        "",
        "Welch's t's own level with 10 vs 2 normal run means of equal variance (400,000 "
        f"simulated samples): {welch_own_level(LEVEL_DESIGNS['e1250'][1]()):.3f}: with 2 runs "
        "one system's run variance has 1 df, and a df estimated from it (Welch's or KR's) is "
        "too large when that variance happens to be small. At 200 segments the residual part "
        "of a run mean's variance (0.068^2 / 200, estimated precisely from the rows) is about "
        "a sixth of it and KR holds the level; at 1,250 segments (3 % of it) the run variance "
        "is all there is and KR behaves like Welch. 'candidate' recomputes the same t with "
        "df = min(n_A, n_B) - 1 (Hsu's conservative df; 1 with 2 runs): far below the level, "
        "so not a fix. No df rule holds the level at every run-variance ratio with 2 runs, so the "
        "report names no winner there (the rule is the worst case, also over the residual "
        "part: it refuses e200, whose test happens to hold the level) and says that 4 runs of "
        "the 2-run system would settle it; 10 vs 4 runs, admitted, is in the band (0.064, "
        "Welch's exact level at equal run variances 0.054: its false directional claims are "
        "its two-sided level, at the band's upper end here).",
        "",
        "### Power: both systems 2 lambda x 3 seeds, lambda without effect",
        "",
        f"Run SD 0.011, 200 segments: one run-mean SD = sqrt(0.011^2 + 0.068^2 / 200) = "
        f"{100 * run_mean_sd():.2f} points. 'badge': the badge names B better (the report's "
        "claim of the improvement); 'any wording': the badge or the generalisation line names "
        "that winner. 'badge - Welch': paired difference with a 95 % Wald interval. "
        "'generalises': the facet-aware test significant for B (the only claim beyond these "
        "settings); 'not judged': the line says it cannot tell (facet-aware df < 4, not "
        "significant). At 0 SDs every directional claim is false: the badge's row is its level.",
        "",
        *claims_power_lines(claims_experiments, seed),
        "",
        "Before issue 23 (its audit): a directional claim needed the facet-aware test too and "
        "was made in 0.000 / 0.045 / 0.295 at 1 / 2 / 3 SDs against Welch's 0.29 / 0.84 / 0.995, "
        "the rest reading 'only for these meta-parameter values', a facet effect nobody "
        "measured. Design (c) of the level table above (lambda levels with random offsets, SD "
        "0.02): the badge names a winner in 0.446 of the experiments, true claims about the "
        "settings that were run (their lambda offsets differ); the generalising claim is the "
        "facet-aware test's, 0.044 [0.032, 0.059] (both significant the same way, the same "
        "1,000 records).",
        "",
    ]
    return "\n".join(lines)


def claims_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="calibration.py claims",
        description="what the report claims: badge level (10 vs 2 runs) and power beside Welch",
    )
    parser.add_argument("--level-records", type=Path, default=RESULTS / "claims_level.jsonl")
    parser.add_argument("--claims-records", type=Path, default=RESULTS / "claims_records.jsonl")
    parser.add_argument("--seed", type=int, default=13_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibration.md")
    args = parser.parse_args(argv)
    section = claims_section(args.level_records, args.claims_records, args.seed)
    replace_section(args.out, CLAIMS_MARK, section)
    print(section)


# ============================================================================================
# The decision (issues 20, 27): family-wise level and power of max-t and Holm, interval
# coverage, rank-interval coverage (§4c).
# ============================================================================================

DECISION_RECORDS = RESULTS / "decision_adjust.jsonl"
ADJUSTMENTS = ("max-t", "holm")


def decision_run(keys: list[str], n: dict[str, int], records: Path, progress: bool) -> None:
    """Experiments 0 .. n - 1 of each design not yet in ``records`` (appended, flushed)."""
    done = recorded_seeds(records)
    designs = decision_designs()
    with records.open("a") as sink, threadpool_limits(limits=1):
        for key in keys:
            design = designs[key]
            for i in range(n[key]):
                seed = design.seed + i
                if (key, seed) in done:
                    continue
                start = time.perf_counter()
                data = design.experiment(i)
                out = {a: decision_outcomes(data, truth_of(design), seed, a) for a in ADJUSTMENTS}
                record = {"scenario": key, "seed": seed, "outcomes": out}
                record["seconds"] = round(time.perf_counter() - start, 4)
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                if progress and (i + 1) % 50 == 0:
                    stamp = time.strftime("%H:%M:%S")
                    print(f"  {key}: {i + 1}/{n[key]}  {stamp}", file=sys.stderr, flush=True)


def _bounded(k: int, n: int, bound: float = ALPHA) -> str:
    """``yes`` when the rate's interval's upper end is at most 0.065 (issue 27, acceptance 4)."""
    if n == 0:
        return "NA"
    return "yes" if clopper_pearson(k, n)[1] <= LEVEL_BOUND else "**no**"


def _ok(rows: list[dict[str, object]], adjust: str) -> list[dict[str, object]]:
    return [r["outcomes"][adjust] for r in rows if r["outcomes"].get(adjust)]


def _adjusted(
    by_key: dict[str, list[dict[str, object]]], spaced: bool
) -> Iterator[tuple[str, DecisionDesign, str, list[dict[str, object]]]]:
    """The rows of the level (``spaced`` False: identical systems) or power (True: distinct true
    means) table: each such design with records, each adjustment, and its usable outcomes."""
    for key, design in decision_designs().items():
        if bool(design.spacing) != spaced or key not in by_key:
            continue
        for adjust in ADJUSTMENTS:
            ok = _ok(by_key[key], adjust)
            if ok:
                yield key, design, adjust, ok


def decision_level_lines(by_key: dict[str, list[dict[str, object]]]) -> list[str]:
    """Family-wise false directional claims, false splits, interval coverage and the
    agreement of interval and verdict, per design and adjustment."""
    lines = [
        "| design | adjustment | experiments | any false claim, `baseline` family | bound? "
        "| any false claim, `all_pairs` family | bound? | any false group split "
        "| intervals vs baseline cover (per comparison) | all at once "
        "| interval excludes 0 ⇔ verdict (experiments where every record agrees) |",
        "|---|---|---:|---|---|---|---|---|---|---|---|",
    ]
    for key, design, adjust, ok in _adjusted(by_key, spaced=False):
        n = len(ok)
        fb = sum(bool(o["fwer_baseline"]) for o in ok)
        fa = sum(bool(o["fwer_all_pairs"]) for o in ok)
        split = sum(bool(o["split"]) for o in ok)
        covered, compared = sum(o["covered"] for o in ok), sum(o["compared"] for o in ok)
        all_at_once = sum(bool(o["all_covered"]) for o in ok)
        agree = sum(bool(o["agree"]) for o in ok)
        lines.append(
            f"| {key}: {design.title} | {adjust} | {n} | {rate_cell(fb, n)} "
            f"| {_bounded(fb, n)} | {rate_cell(fa, n)} | {_bounded(fa, n)} "
            f"| {rate_cell(split, n)} | {rate_cell(covered, compared)} ({compared}) "
            f"| {rate_cell(all_at_once, n)} | {rate_cell(agree, n)} |"
        )
    return lines


def decision_power_lines(by_key: dict[str, list[dict[str, object]]]) -> list[str]:
    """Power (right directional verdicts among pairs whose true means differ) of max-t beside
    Holm's, on the designs with distinct true means, and their family-wise false claims."""
    lines = [
        "| design | adjustment | experiments | power, `baseline` family (per comparison) "
        "| power, `all_pairs` family (per pair) | any false claim, `baseline` "
        "| any false claim, `all_pairs` |",
        "|---|---|---:|---|---|---|---|",
    ]
    for key, design, adjust, ok in _adjusted(by_key, spaced=True):
        n = len(ok)
        cells = []
        for family in ("baseline", "all_pairs"):
            hits = sum(o[f"power_{family}"] for o in ok)
            cells.append(rate_cell(hits, sum(o[f"true_{family}"] for o in ok)))
        fb = sum(bool(o["fwer_baseline"]) for o in ok)
        fa = sum(bool(o["fwer_all_pairs"]) for o in ok)
        lines.append(
            f"| {key}: {design.title} | {adjust} | {n} | {cells[0]} | {cells[1]} "
            f"| {rate_cell(fb, n)} | {rate_cell(fa, n)} |"
        )
    return lines


def decision_rank_lines(by_key: dict[str, list[dict[str, object]]]) -> list[str]:
    """Rank-interval coverage per design (max-t records; the ranks do not depend on the
    adjustment): per system, all k at once, and the mean width."""
    lines = [
        "| design | experiments | true ranks covered (per system) | all k covered at once "
        "| mean width (upper − lower + 1) | intervals spanning all k ranks "
        "| coverage by system (S00 … S(k−1)) |",
        "|---|---:|---|---|---:|---|---|",
    ]
    for key, design in decision_designs().items():
        ok = _ok(by_key.get(key, []), "max-t")
        if not ok or design.k < 3:
            continue
        truth = truth_of(design)
        ranks = [o["ranks"] for o in ok]
        n, k = len(ok), design.k
        widths = [hi - lo + 1 for r in ranks for lo, hi in r]
        full = sum(w == k for w in widths)
        if design.spacing:
            hits = [rank_coverage(r, truth) for r in ranks]
            per = rate_cell(sum(h[0] for h in hits), n * k)
            both = rate_cell(sum(h[1] for h in hits), n)
            true = true_ranks(truth)
            by_system = ", ".join(
                f"{sum(r[j][0] <= true[j] <= r[j][1] for r in ranks) / n:.3f}" for j in range(k)
            )
        else:
            per = both = "(tied: every interval meets 1..k)"
            by_system = "-"
        lines.append(
            f"| {key}: {design.title} | {n} | {per} | {both} | {np.mean(widths):.2f} "
            f"| {rate_cell(full, n * k)} | {by_system} |"
        )
    return lines


def decision_report(records: Path) -> str:
    """benchmarks/results/decision_level.md, rebuilt from all records."""
    experiments, meta = read_records(records)
    by_key = _by_scenario(experiments)
    seconds = {key: np.median([r["seconds"] for r in rows]) for key, rows in sorted(by_key.items())}
    lines = [
        "# Decision table: level, Δ coverage, rank intervals (docs/method.md §4c, issue 20)",
        "",
        "`python benchmarks/calibration.py decision` (`infrepro/validation/decision.py`; records "
        f"`{records.name}`, one JSON line per experiment, resumable). Every experiment is fitted "
        "as the `summary` analysis decides it (`decide`: model M, REML, Kenward-Roger df, the "
        "pair's calibrated test where both systems have two or more runs, the family's "
        f"adjustment; rank intervals with D = {RANK_DRAWS} draws seeded by the experiment's "
        "seed) and read from its records. α = 0.05; rates with exact 95 % Clopper-Pearson "
        "intervals. Designs:",
        "",
        "- **k5, k10**: k identical systems S00 … S(k−1) (S00 the baseline), 3-5 runs each "
        "(drawn per experiment), run SDs 0.01 to 0.03 across systems (unequal run variances), "
        "100 segments, segment SD 0.2, residual SD 0.05; experiment i has seed 2031 + i (the "
        "first measurement's experiments).",
        "- **a, b**: the run-aware benchmark's designs (a) 6 vs 6 runs, run SD 0.011 each, and "
        "(b) 18 stable (0.002) vs 6 variable (0.02) runs, 200 segments, on the same seeds as "
        "its level cells (calibration.md): with two systems M is the headline model, so the Δ "
        "coverage there is 1 − the headline test's level on the same experiments.",
        "- **rank0.5, rank1, k10-rank0.5**: 5 systems as k5 (10 as k10), true means "
        f"0.4 + i · s · u for system i (u = {RANK_UNIT:.4f}, the SD of a run's mean at run SD "
        "0.02; s = 0.5, 1 with 5 systems, 0.5 with 10): the true rank of S(i) is k − i, and the "
        "Δ CIs are checked against the true differences.",
        "",
        "Runs (times UTC, load average over 1 / 5 / 15 min on the shared 2-core machine; "
        "median seconds per experiment: "
        + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items())
        + "):",
        "",
        *[
            f"- `{m['meta']['command']}`: {m['meta']['start']} - {m['meta'].get('end', '?')}, "
            f"load at start {m['meta']['load_start']}, at end {m['meta'].get('load_end', '?')}"
            for m in meta
        ],
        "",
        "## Family-wise false claims, intervals and verdicts (issue 27, acceptance 4)",
        "",
        "Each experiment is decided twice, with the default adjustment `max-t` and with "
        "Holm's. The default is the single-step max-t where every contrast of a family is M's "
        "t test and single-step Bonferroni where one is another test (§4c.10), as in k5 and "
        "k10, where every pair is calibrated; records made before that fix (2026-11-27) fed the "
        "calibrated tests' p into max-t through a t copula, which was liberal "
        "(`decision_bonferroni.md`). The `baseline` family holds the k − 1 comparisons with the "
        "baseline, the `all_pairs` family the k(k − 1)/2 pairs. A false claim is a directional "
        "verdict where the true means are equal; bound: the upper end of the exact 95 % interval "
        "at most 0.065. With two systems (a, b) a family has one comparison and both adjustments "
        "are the calibrated test itself (§4b.11). Coverage is per comparison with the baseline "
        "and for all of them at once (the default's intervals are simultaneous, Holm's "
        "unadjusted).",
        "",
        *decision_level_lines(by_key),
        "",
        "## Power of max-t beside Holm's",
        "",
        "Designs with distinct true means (system i better than the baseline by i · s run-mean "
        "SDs): the share of pairs whose verdict names the truly better system, per family.",
        "",
        *decision_power_lines(by_key),
        "",
        "## Rank intervals",
        "",
        "The rank interval (§4c.7) of a system covers its true rank when lower ≤ true ≤ upper. "
        "With identical systems the true means tie and the true rank is the whole set 1 … k, "
        "which every interval meets: coverage is not informative there, so k5 and k10 show only "
        "how wide the intervals are (a tied system should mostly get wide intervals); the "
        "coverage is measured in the rank designs, where the true ranks are distinct.",
        "",
        *decision_rank_lines(by_key),
        "",
        "Not covered here: designs whose runs share facet levels (the per-system model is "
        "liberal there, §4b.6, and the table's mark needs the facet-aware reading, §4c.5) and "
        "single-run systems (their comparisons are of outputs, §4c.4).",
        "",
    ]
    return "\n".join(lines)


def decision_main(argv: list[str]) -> None:
    parser = command_parser(
        "decision",
        "level, Δ coverage and rank-interval coverage of the decision table",
        DECISION_RECORDS,
        RESULTS / "decision_level.md",
    )
    parser.add_argument("--designs", default=",".join(decision_designs()))
    parser.add_argument("--n", type=int, default=1000, help="experiments per level design")
    parser.add_argument("--n-rank", type=int, default=400, help="experiments per rank design")
    args = parser.parse_args(argv)
    designs = decision_designs()
    keys = [k for k in designs if k in args.designs.split(",")]
    if not args.report_only:
        n = {k: args.n_rank if designs[k].spacing else args.n for k in keys}
        with recorded_run(args.records, "decision", argv):
            decision_run(keys, n, args.records, args.progress)
    text = decision_report(args.records)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
