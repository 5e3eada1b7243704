"""Statistical validity benchmark (issue 7): recovery, level, power, agreement with R lme4.

Every experiment is simulated with ``infrepro.validation.simulate`` (known truth) and analysed with
the analyses' own functions (``variance_components``, ``compare_systems``,
``conditional_analyses``, ``classical_tests``), as the workflow runs them. Scores are on the stored
fraction scale with the variance of a real experiment (thesis Table 4.4, BART+R3F Rouge-1): segment
SD 0.096, random seed SD 0.011, residual SD 0.068; lambda-like facets get SD 0.04.

1. Recovery: designs with known components and effects (balanced, unbalanced 18 seeds vs a
   3 x 2 x 5 grid, missing cells and rows, many levels). Bias and RMSE of every estimated
   component (REML VCA per system), of phi, of the system effect (baseline - competitor, paper
   and run-aware models; truth: the planted population difference) and of the system x length
   interaction (difference of the per-system slopes). Effects also get the coverage of their
   95% Wald interval (estimate +- 1.96 se) and the ratio of the mean reported SE to the RMSE
   (1 when the standard errors are right; < 1: too small; > 1: too large). The paper model's
   effect is also scored against the realised difference of the simulated runs (its target).
2. Level: A-vs-A experiments (seed 002, section 4: identical systems, seeds differ; dev scores
   select the best run): rejection rate at alpha = 0.05 of each GLRT variant, with the
   classical tests for context, and 95% Clopper-Pearson intervals.
3. Power: the same design with a growing true effect: paper GLRT, run-aware GLRT, the paired
   bootstrap on the best runs (and Welch's t on run means). The effect 0 row is the level.
4. Agreement with R lme4 on 20 randomly generated designs (2-3 systems, 1-3 facets, 2-8
   levels, zero and non-zero components, missing cells and rows): every design's paper,
   run-aware and conditional ML fits and per-system REML VCAs, fitted by ``infrepro.lmm.fit``
   and by ``lmer`` (benchmarks/validity_lme4.R); largest relative differences in
   log-likelihood and variance components.

Usage: python benchmarks/validity.py [--recovery-reps 25] [--level-reps 250]
       [--power-reps 80] [--agreement 20] [--segments 200] [--level-runs 20] [--quick]
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from infrepro.analyses.classical import classical_tests
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.comparison import compare_systems
from infrepro.analyses.conditional import conditional_analyses
from infrepro.analyses.variance import variance_components, vca_formula
from infrepro.core.vocabulary import VCA_COLUMN, VCA_RUN_AWARE, property_formulas
from infrepro.core.vocabulary import comparison_formulas as formulas
from infrepro.lmm import LmmError, fit
from infrepro.validation.calibration import ALPHA, rate_cell, rejects
from infrepro.validation.simulate import (
    REAL_RUN_SD,
    Design,
    Facet,
    Simulation,
    System,
    a_vs_a,
    simulate,
)

R_SCRIPT = Path(__file__).resolve().parent / "validity_lme4.R"
LAMBDA_SD = 0.04
NOISE_SD = 0.007
EFFECT = 0.02  # competitor better by 0.02: baseline - competitor = -0.02
SLOPE = 0.003  # common length slope per token
SLOPE_DIFF = 0.002  # competitor x length interaction
DEV_SD = 0.02
CLASSICAL = {
    "paired bootstrap": "paired bootstrap (best runs)",
    "approximate randomization": "approximate randomization (best runs)",
    "Welch t (run means)": "Welch t (run means)",
    "Mann-Whitney U (run means)": "Mann-Whitney U (run means)",
}
GLRTS = {
    "all_runs": "paper GLRT, all runs (runs fixed)",
    "all_runs_run_aware": "run-aware GLRT, all runs (+ (1|run_id))",
    "best_vs_best": "best-vs-best GLRT (best run by dev score)",
    "conditional_interaction": "conditional interaction (system x length)",
    "conditional_joint": "conditional joint (system + system x length)",
}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- 1. recovery
def recovery_designs(n_segments: int) -> dict[str, Design]:
    """The recovery designs: the competitor is better by EFFECT and has a steeper length slope."""
    lam, noise = Facet("lam", 3, sd=LAMBDA_SD), Facet("noise", 2, sd=NOISE_SD)
    seed = Facet("seed", 5, sd=REAL_RUN_SD)

    def make(
        baseline: System, competitor: System, facets: tuple[Facet, ...], **options: float
    ) -> Design:
        return Design(
            systems=(baseline, competitor),
            facets=facets,
            n_segments=n_segments,
            property_slope=SLOPE,
            **options,
        )  # type: ignore[arg-type]

    competitor = System("competitor", effect=EFFECT, property_slope=SLOPE_DIFF)
    return {
        "balanced 3x2x5 (few levels)": make(System("baseline"), competitor, (lam, noise, seed)),
        "unbalanced 18 seeds vs 3x2x5": make(
            System("baseline", facets=("seed",), levels={"seed": 18}),
            competitor,
            (lam, noise, seed),
        ),
        "missing cells (30%) and rows (5%)": make(
            System("baseline", facets=("seed",), levels={"seed": 10}),
            competitor,
            (Facet("lam", 6, sd=LAMBDA_SD), noise, Facet("seed", 4, sd=REAL_RUN_SD)),
            missing_runs=0.3,
            missing_rows=0.05,
        ),
        "many levels 10x8": make(
            System("baseline", facets=("seed",), levels={"seed": 12}),
            competitor,
            (Facet("lam", 10, sd=LAMBDA_SD), Facet("seed", 8, sd=REAL_RUN_SD)),
        ),
    }


@dataclass
class Estimates:
    """Estimate/truth pairs per quantity, with interval coverage where there is one."""

    values: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    covered: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    ses: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, name: str, estimate: float, truth: float, se: float | None = None) -> None:
        self.values[name].append((estimate, truth))
        if se is not None:
            self.covered[name].append(abs(estimate - truth) <= 1.959964 * se)
            self.ses[name].append(se)


def recovery_once(sim: Simulation, out: Estimates) -> None:
    """Analyse one simulated experiment and record estimates against the truth."""
    data, truth = sim.metric_data(), sim.truth
    log = FitLog(data.metric)
    vca = variance_components(data, log)
    components = vca["variance_components"]
    components = components[components[VCA_COLUMN] == VCA_RUN_AWARE]
    for system in data.systems:
        true = truth.components(system)
        rows = components[components["system"] == system].set_index("component")["variance"]
        for name, value in true.items():
            if name in rows:
                out.add(f"var {name} ({system})", float(rows[name]), float(value))
    reliability = vca["reliability"]
    for row in reliability[reliability[VCA_COLUMN] == VCA_RUN_AWARE].itertuples(index=False):
        out.add(f"phi ({row.system})", float(row.phi), truth.phi[row.system])
    contrasts = compare_systems(data, log)["contrasts"]
    target = truth.difference("baseline", "competitor")
    labels = {"all_runs": "paper", "all_runs_run_aware": "run-aware"}
    for analysis, label in labels.items():
        row = contrasts[contrasts["analysis"] == analysis].iloc[0]
        out.add(f"effect base-comp ({label})", float(row["estimate"]), target, float(row["se"]))
    # the paper model treats runs as fixed: its target is the difference of these very runs
    row = contrasts[contrasts["analysis"] == "all_runs"].iloc[0]
    realised = truth.difference("baseline", "competitor", realised=True)
    out.add(
        "effect base-comp (paper) vs realised runs",
        float(row["estimate"]),
        realised,
        float(row["se"]),
    )
    slopes = conditional_analyses(data, log)["slopes"]
    slopes = slopes[slopes["analysis"] == "conditional"].set_index("group")
    difference = float(slopes.loc["competitor", "slope"] - slopes.loc["baseline", "slope"])
    se = _slope_difference_se(sim)
    true_slope = truth.property_slopes["competitor"] - truth.property_slopes["baseline"]
    out.add("slope comp-base (x length)", difference, true_slope, se)


def _slope_difference_se(sim: Simulation) -> float:
    """SE of the interaction coefficient in the conditional H1 (the analyses' model)."""
    data = sim.metric_data()
    h1 = property_formulas(data.metric, "system", "length")["h1"]
    result = fit(h1, data.evaluation, reml=False, reference_levels={"system": "baseline"})
    return float(result.fixed_se["systemcompetitor:length"])


def recovery_table(designs: dict[str, Design], reps: int, seed: int) -> pd.DataFrame:
    rows = []
    for d_index, (name, design) in enumerate(designs.items()):
        progress(f"recovery: {name}")
        out = Estimates()
        for rep in range(reps):
            recovery_once(simulate(design, seed + 1000 * d_index + rep), out)
        for quantity, pairs in out.values.items():
            est = np.array([p[0] for p in pairs])
            tru = np.array([p[1] for p in pairs])
            error = est - tru
            truth = float(tru.mean())
            cover = out.covered.get(quantity)
            rows.append(
                {
                    "design": name,
                    "quantity": quantity,
                    "truth": truth,
                    "mean estimate": float(est.mean()),
                    "bias": float(error.mean()),
                    "rel. bias %": 100 * float(error.mean()) / truth if truth else math.nan,
                    "RMSE": float(np.sqrt(np.mean(error**2))),
                    "95% coverage": float(np.mean(cover)) if cover else math.nan,
                    "mean SE / RMSE": float(np.mean(out.ses[quantity]) / np.sqrt(np.mean(error**2)))
                    if cover
                    else math.nan,
                    "n": len(pairs),
                }
            )
    return pd.DataFrame(rows)


def markdown_table(table: pd.DataFrame) -> str:
    """A DataFrame as a markdown table, numbers with 3 significant digits."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return "NA" if math.isnan(value) else f"{value:.3g}"
        return str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- 2./3. level, power
@dataclass
class Counts:
    experiments: int = 0
    rejections: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def test_experiment(sim: Simulation, conditional: bool) -> dict[str, bool]:
    """Run the comparison (+ conditional) and classical analyses; which tests reject?"""
    data = sim.metric_data(
        options={
            "dev_score_better": "higher",  # simulated dev scores: true quality plus noise
            "bootstrap": {"samples": 1000, "seed": 1},
            "randomization": {"samples": 1000, "seed": 1},
        }
    )
    log = FitLog(data.metric)
    outcome: dict[str, bool] = {}
    tables = [compare_systems(data, log)["glrt"]]
    if conditional:
        tables.append(conditional_analyses(data, log)["glrt"])
    for table in tables:
        for row in table.to_dict("records"):
            outcome[str(row["analysis"])] = rejects(row)
    classical = classical_tests(data, log)["classical"]
    for row in classical.to_dict("records"):
        outcome[str(row["test"])] = float(row["log10_p"]) < math.log10(ALPHA)
    return outcome


def rejection_counts(design: Design, reps: int, seed: int, conditional: bool) -> Counts:
    counts = Counts()
    for rep in range(reps):
        outcome = test_experiment(simulate(design, seed + rep), conditional)
        counts.experiments += 1
        for name, rejected in outcome.items():
            counts.rejections[name] += int(rejected)
        if (rep + 1) % 50 == 0:
            progress(f"  {rep + 1}/{reps}")
    return counts


def level_markdown(counts: Counts) -> str:
    n = counts.experiments
    lines = ["| test | rejection rate at 0.05 [95% CI] |", "|---|---|"]
    for key, label in [*GLRTS.items(), *CLASSICAL.items()]:
        cell = rate_cell(counts.rejections.get(key, 0), n)
        lines.append(f"| {label.replace('|', chr(92) + '|')} | {cell} |")
    return "\n".join(lines)


def power_markdown(rows: list[tuple[float, Counts]]) -> str:
    keys = ["all_runs", "all_runs_run_aware", "paired bootstrap", "Welch t (run means)"]
    lines = [
        "| effect (A~ - A) | effect / run SD | experiments | paper GLRT | run-aware GLRT "
        "| paired bootstrap (best runs) | Welch t (run means) |",
        "|---:|---:|---:|---|---|---|---|",
    ]
    for effect, counts in rows:
        cells = " | ".join(rate_cell(counts.rejections.get(k, 0), counts.experiments) for k in keys)
        lines.append(
            f"| {effect:g} | {effect / REAL_RUN_SD:.2f} | {counts.experiments} | {cells} |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- 4. agreement
def random_design(rng: np.random.Generator) -> Design:
    """A random design for the lme4 comparison: sizes, levels and variances all vary."""
    n_systems = int(rng.choice([2, 2, 3]))
    facets = [Facet("seed", int(rng.integers(2, 9)), sd=float(rng.choice([0, 0.005, 0.011, 0.03])))]
    if rng.random() < 0.6:
        facets.append(Facet("lam", int(rng.integers(2, 7)), sd=float(rng.choice([0, 0.01, 0.04]))))
    if rng.random() < 0.4:
        facets.append(Facet("noise", int(rng.integers(2, 4)), sd=float(rng.choice([0, 0.02]))))
    systems = []
    for k in range(n_systems):
        own = None if k > 0 or rng.random() < 0.5 else ("seed",)
        systems.append(
            System(
                f"sys{k}",
                effect=float(rng.uniform(-0.03, 0.03)),
                facets=own,
                levels={"seed": int(rng.integers(2, 9))},
                run_sd=float(rng.choice([0.0, 0.01])),
                property_slope=float(rng.uniform(-0.002, 0.002)),
            )
        )
    return Design(
        systems=tuple(systems),
        facets=tuple(facets),
        n_segments=int(rng.integers(30, 301)),
        segment_sd=float(rng.choice([0.05, 0.1, 0.2])),
        residual_sd=float(rng.choice([0.03, 0.07, 0.1])),
        property_slope=float(rng.uniform(-0.004, 0.004)),
        missing_runs=float(rng.choice([0.0, 0.0, 0.2])),
        missing_rows=float(rng.choice([0.0, 0.0, 0.05])),
    )


def agreement_models(sim: Simulation) -> list[tuple[str, str, bool, str]]:
    """(kind, formula, reml, system subset) of every model fitted to one design."""
    data = sim.metric_data()
    paper, _ = formulas(data.metric, run_aware=False)
    aware_h1, aware_h0 = formulas(data.metric, run_aware=True)
    models = [
        ("paper ML", paper, False, ""),
        ("run-aware ML (H1)", aware_h1, False, ""),
        ("run-aware ML (H0)", aware_h0, False, ""),
        ("conditional ML", property_formulas(data.metric, "system", "length")["h1"], False, ""),
    ]
    for system in data.systems:
        runs = data.runs[data.runs["system"] == system]
        if len(runs) >= 2:
            models.append(
                ("VCA REML", vca_formula(data.metric, data.facets_of(system)), True, system)
            )
    return models


def agreement(n_designs: int, seed: int, workdir: Path) -> pd.DataFrame | None:
    """Fit every model with infrepro and lme4; one row per fitted component."""
    rng = np.random.default_rng(seed)
    manifest, python_rows = [], []
    for d in range(n_designs):
        sim = simulate(random_design(rng), seed + d)
        path = workdir / f"design{d:02d}.csv"
        sim.evaluation.to_csv(path, index=False, float_format="%.17g")
        data = pd.read_csv(path)  # both engines fit exactly the numbers in the file
        for m, (kind, formula, reml, system) in enumerate(agreement_models(sim)):
            model_id = f"{d}-{m}"
            manifest.append(
                {
                    "id": model_id,
                    "data": str(path),
                    "formula": formula,
                    "reml": "TRUE" if reml else "FALSE",
                    "system": system,
                }
            )
            rows = data[data["system"] == system] if system else data
            try:
                result = fit(formula, rows, reml=reml)
            except LmmError as err:
                progress(f"  infrepro could not fit {formula} on design {d}: {err}")
                continue
            for name, value in result.variance_components.items():
                python_rows.append(
                    {
                        "id": model_id,
                        "design": d,
                        "kind": kind,
                        "component": name,
                        "py_variance": float(value),
                        "py_loglik": result.loglik,
                        "py_singular": result.singular,
                    }
                )
    pd.DataFrame(manifest).to_csv(workdir / "manifest.csv", index=False)
    out = workdir / "lme4.csv"
    subprocess.run(["Rscript", str(R_SCRIPT), str(workdir / "manifest.csv"), str(out)], check=True)
    r = pd.read_csv(out, dtype={"id": str})
    r = r.rename(columns={"variance": "r_variance", "loglik": "r_loglik", "singular": "r_singular"})
    return pd.DataFrame(python_rows).merge(r, on=["id", "component"], how="left")


def agreement_markdown(table: pd.DataFrame) -> str:
    """Largest relative differences per model kind and overall."""
    lines = [
        "| models | fits | max rel. diff. logLik | max abs. diff. logLik "
        "| min (infrepro - lme4) logLik "
        "| max rel. diff. variance (components >= 1% of total) "
        "| max abs. diff. variance / total variance | singular fits (lme4 / infrepro) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    missing = table["r_loglik"].isna()
    if missing.any():
        lines.insert(0, f"{table.loc[missing, 'id'].nunique()} fit(s) failed in lme4.\n")
        table = table[~missing]
    groups: list[tuple[str, pd.DataFrame]] = list(table.groupby("kind", sort=False))
    groups.append(("all", table))
    for kind, rows in groups:
        fits = rows.groupby("id").first()
        signed = fits["py_loglik"] - fits["r_loglik"]
        ll = signed.abs()
        total = rows.groupby("id")["r_variance"].transform("sum")
        big = rows["r_variance"] >= 0.01 * total
        delta = (rows["py_variance"] - rows["r_variance"]).abs()
        rel_var = (delta[big] / rows.loc[big, "r_variance"]).max()
        lines.append(
            f"| {kind} | {len(fits)} | {(ll / fits['r_loglik'].abs()).max():.2e} "
            f"| {ll.max():.2e} | {signed.min():.2e} | {rel_var:.2e} | {(delta / total).max():.2e} "
            f"| {int(fits['r_singular'].astype(bool).sum())} / "
            f"{int(fits['py_singular'].astype(bool).sum())} |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def timed(label: str, func: Callable[[], str]) -> str:
    start = time.perf_counter()
    text = func()
    return f"{text}\n\n({label}: {time.perf_counter() - start:.0f} s)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recovery-reps", type=int, default=25)
    parser.add_argument("--level-reps", type=int, default=250)
    parser.add_argument("--power-reps", type=int, default=80)
    parser.add_argument("--effects", default="0.0025,0.005,0.01,0.015")
    parser.add_argument("--agreement", type=int, default=20, help="designs compared with lme4")
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--level-runs", type=int, default=20, help="runs per system (A-vs-A)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.recovery_reps, args.level_reps, args.power_reps = 3, 20, 10
        args.effects, args.agreement, args.segments = "0.01", 3, 80
    start, cpu = time.perf_counter(), time.process_time()

    def recovery() -> str:
        table = recovery_table(recovery_designs(args.segments), args.recovery_reps, args.seed)
        return markdown_table(table)

    def level_design(effect: float) -> Design:
        return a_vs_a(
            n_segments=args.segments,
            runs_per_system=args.level_runs,
            effect=effect,
            property_slope=SLOPE,
            dev_sd=DEV_SD,
        )

    power_rows: list[tuple[float, Counts]] = []

    def level() -> str:
        progress("level: A-vs-A")
        counts = rejection_counts(level_design(0.0), args.level_reps, args.seed + 10**6, True)
        power_rows.append((0.0, counts))
        return level_markdown(counts)

    def power() -> str:
        for i, effect in enumerate(float(e) for e in args.effects.split(",")):
            progress(f"power: effect {effect}")
            seed = args.seed + 2 * 10**6 + 10**4 * i
            power_rows.append(
                (effect, rejection_counts(level_design(effect), args.power_reps, seed, False))
            )
        return power_markdown(power_rows)

    def lme4() -> str:
        if shutil.which("Rscript") is None:
            return "Rscript not available"
        progress("agreement with lme4")
        with tempfile.TemporaryDirectory() as tmp:
            table = agreement(args.agreement, args.seed + 3 * 10**6, Path(tmp))
        assert table is not None
        return f"{table['design'].nunique()} designs.\n\n" + agreement_markdown(table)

    design_note = (
        f"{args.segments} segments, {args.level_runs} runs per system, run SD "
        f"{REAL_RUN_SD}, dev scores with noise SD {DEV_SD}, length slope {SLOPE}"
    )
    sections = [
        (
            "1. Recovery",
            f"{args.recovery_reps} experiments per design, {args.segments} segments; "
            f"truth: competitor effect {EFFECT}, interaction slope {SLOPE_DIFF}.",
            recovery,
        ),
        ("2. Level (A-vs-A)", f"{args.level_reps} experiments; {design_note}.", level),
        (
            "3. Power",
            f"{args.power_reps} experiments per effect (effect 0: the level "
            f"experiments); {design_note}.",
            power,
        ),
        ("4. Agreement with R lme4", "infrepro.lmm.fit vs lmer on random designs.", lme4),
    ]
    for title, note, func in sections:
        print(f"## {title}\n\n{note}\n")
        print(timed("section time", func), flush=True)
        print()
    print(
        f"Wall time: {time.perf_counter() - start:.0f} s "
        f"(CPU time of this process: {time.process_time() - cpu:.0f} s)"
    )


if __name__ == "__main__":
    main()
