"""Calibration of the tests: the analyses' tests re-composed on simulated experiments.

Each experiment (``infrepro.validation.simulate``) is fitted with the analyses' own formulas and
fitting and test functions (``FitLog.fit``, ``run_glrt``, ``smalltests.contest``,
``classical_tests``), skipping the tables nobody reads here: A-vs-A experiments for the GLRTs'
rejection rates (``a_vs_a_rates``); the run-aware benchmark's designs and cells (``scenarios``)
with the system comparison's tests (``comparison_experiment``) and the conditional interaction
tests (``interaction_experiment``); exact references (Clopper-Pearson intervals, the level of the
run-aware GLRT in a balanced design, Welch's power). The command-line drivers and the reports are
in benchmarks/calibration.py; the quick versions in the tests.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from scipy import stats

from infrepro.analyses.classical import classical_tests
from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.glrt import run_glrt
from infrepro.analyses.common.smalltests import contest
from infrepro.analyses.comparison import shared_facets
from infrepro.analyses.conditional import fit_run_aware
from infrepro.core.registry import (
    ALL_RUNS,
    ALL_RUNS_RUN_AWARE,
    CLASSICAL,
    CONDITIONAL,
    FACET_AWARE,
    HEADLINE,
    interaction_only,
)
from infrepro.core.registry import run_aware as run_aware_model
from infrepro.core.vocabulary import (
    CLASSICAL_TABLE,
    RUN,
    RUN_TERM,
    centred,
    facet_aware_formula,
    headline_formula,
    property_formulas,
)
from infrepro.core.vocabulary import SYSTEM as SYSTEM_COLUMN
from infrepro.core.vocabulary import comparison_formulas as formulas
from infrepro.validation.simulate import (
    REAL_RESIDUAL_SD,
    REAL_RUN_SD,
    Design,
    Facet,
    System,
    a_vs_a,
    simulate,
)

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
        classical = classical_tests(data, log)[CLASSICAL_TABLE].set_index("test")
        counts[WELCH] += float(classical.loc[WELCH, "log10_p"]) < math.log10(ALPHA)
        if progress and (i + 1) % 50 == 0:
            print(f"  runs/system {runs_per_system}: {i + 1}/{n_experiments}", file=sys.stderr)
    return Rates(runs_per_system, n_segments, done, counts, failed)


BAND = (0.035, 0.065)
POWER_MARGIN = 0.05
SEGMENTS = 200
BASE, COMP = "A", "B"  # baseline and competitor (quote-free names: formulas quote them)

# test key -> (label, analysis name in the workflow's tables, required to hold the band?)
TESTS = {
    "headline": ("headline: per-system run variance, REML, t (KR df)", HEADLINE, True),
    "facet_aware": (
        "facet-aware: + per-system facet intercepts, t (KR df)",
        FACET_AWARE,
        True,
    ),
    "shared_glrt": (f"shared-run GLRT: + {RUN_TERM}, ML, chi-square", ALL_RUNS_RUN_AWARE, False),
    "paper_glrt": ("paper GLRT: runs fixed, ML, chi-square", ALL_RUNS, False),
    "welch": ("Welch t on run means (control)", f"{CLASSICAL}: {WELCH}", False),
    "runaware_interaction": (
        f"run-aware interaction: run intercepts per system + (0 + length_c | {RUN}), REML, "
        "F (KR df)",
        interaction_only(run_aware_model(CONDITIONAL)),
        True,
    ),
    "runaware_interaction_centred": (
        f"run-aware interaction, the same model (the records' key): (0 + length_c | {RUN})",
        "not in the analyses: candidate fix",
        False,
    ),
    "paper_interaction": (
        "paper interaction GLRT: no run terms, ML, chi-square",
        interaction_only(CONDITIONAL),
        False,
    ),
}


def two_systems(
    levels: tuple[int, int],
    run_sd: tuple[float, float],
    *,
    effect: float = 0.0,
    slope_sd: float = 0.0,
    property_slope: float = 0.0,
    n_segments: int = SEGMENTS,
) -> Design:
    """Baseline A and competitor B with ``levels`` seeds each and their own run SDs."""
    return Design(
        systems=(
            System(BASE, levels={"seed": levels[0]}, run_sd=run_sd[0], slope_sd=slope_sd),
            System(
                COMP, levels={"seed": levels[1]}, run_sd=run_sd[1], slope_sd=slope_sd, effect=effect
            ),
        ),
        facets=(Facet("seed", max(levels), sd=0.0),),
        n_segments=n_segments,
        property_slope=property_slope,
    )


def shared_facet_design(
    lambda_sd: float = 0.02, effect: float = 0.0, n_segments: int = SEGMENTS
) -> Design:
    """Design (c): baseline 18 seeds against a competitor grid of 3 lambda x 2 noise x 5 seeds.
    The competitor's lambda levels get random offsets (SD ``lambda_sd``), drawn anew in every
    experiment (facet levels as draws from their population); every run has its own offset
    (SD 0.011) on top. Noise and seed levels have no effect of their own."""
    return Design(
        systems=(
            System(BASE, facets=("seed",), levels={"seed": 18}, run_sd=REAL_RUN_SD),
            System(COMP, effect=effect, run_sd=REAL_RUN_SD),
        ),
        facets=(Facet("lam", 3, sd=lambda_sd), Facet("noise", 2), Facet("seed", 5)),
        n_segments=n_segments,
    )


@dataclass(frozen=True)
class Scenario:
    """One cell of the benchmark: a design, its tests and its seed range."""

    key: str
    title: str
    design: Design
    tests: tuple[str, ...]
    seed: int
    effect: float = 0.0

    @property
    def kind(self) -> str:
        return (
            "interaction"
            if any(t.startswith("runaware_interaction") for t in self.tests)
            else ("power" if self.effect else "level")
        )


COMPARISON_TESTS = ("headline", "shared_glrt", "paper_glrt", "welch")
LEVEL_DESIGNS = {
    "a": (
        "(a) 6 vs 6 runs, run SD 0.011 each",
        lambda e=0.0: two_systems((6, 6), (REAL_RUN_SD, REAL_RUN_SD), effect=e),
    ),
    "b": (
        "(b) 18 stable (run SD 0.002) vs 6 variable (run SD 0.02) runs",
        lambda e=0.0: two_systems((18, 6), (0.002, 0.02), effect=e),
    ),
    "c": (
        "(c) 18 seeds vs 3 lambda x 2 noise x 5 seeds, lambda SD 0.02",
        lambda e=0.0: shared_facet_design(effect=e),
    ),
    "d": (
        "(d) 3 vs 3 runs, run SD 0.011 each",
        lambda e=0.0: two_systems((3, 3), (REAL_RUN_SD, REAL_RUN_SD), effect=e),
    ),
    "e200": (
        "(e200) 10 vs 2 runs, run SD 0.011 each, 200 segments",
        lambda e=0.0: two_systems((10, 2), (REAL_RUN_SD, REAL_RUN_SD), effect=e),
    ),
    "e1250": (
        "(e1250) 10 vs 2 runs, run SD 0.011 each, 1,250 segments (above the former 1,200 "
        "random-effect columns where the analyses switched to Satterthwaite)",
        lambda e=0.0: two_systems((10, 2), (REAL_RUN_SD, REAL_RUN_SD), effect=e, n_segments=1250),
    ),
    "f1250": (
        "(f1250) 10 vs 4 runs, run SD 0.011 each, 1,250 segments",
        lambda e=0.0: two_systems((10, 4), (REAL_RUN_SD, REAL_RUN_SD), effect=e, n_segments=1250),
    ),
}
# designs whose cells fit only the headline test and Welch's t (the GLRTs are shown in a-d)
HEADLINE_ONLY = ("e200", "e1250", "f1250")
# Competitor advantages (score points, stored scale) at which Welch's t on run means has power
# of about 0.2, 0.5, 0.8 and 0.95 (noncentral t with Welch's df, see welch_power).
POWER_EFFECTS = {
    "a": (0.0085, 0.015, 0.0216, 0.0278),
    "b": (0.0115, 0.0204, 0.0295, 0.0384),
}
INTERACTION_SLOPE_SD = 0.001  # per run and token; the residual SD is 0.068 per segment
INTERACTION_TITLE = (
    "(i) 6 vs 6 runs, run SD 0.011, runs' own length slopes SD 0.001, "
    "common slope 0.002, no system x length interaction"
)


CLAIMS_SHIFTS = (0, 1, 2, 3)  # improvements in run-mean SDs (issue 23, acceptance 4)


def design_runs(design: Design) -> tuple[int, int]:
    """(baseline runs, competitor runs) of a two-system design: its facets' grid sizes."""
    counts = {
        system.name: math.prod(design.n_levels(system, f) for f in design.facets_of(system))
        for system in design.systems
    }
    return counts[BASE], counts[COMP]


def run_mean_sd(run_sd: float = REAL_RUN_SD, n_segments: int = SEGMENTS) -> float:
    """SD of one run's mean score: sqrt(run_sd^2 + residual_sd^2 / segments)."""
    return math.sqrt(run_sd**2 + REAL_RESIDUAL_SD**2 / n_segments)


def two_lambda_design(effect: float = 0.0) -> Design:
    """Both systems 2 lambda x 3 seeds (6 runs each, run SD 0.011), lambda without effect: the
    runs share facet levels, so the facet-aware model is fitted beside the headline."""
    return Design(
        systems=(
            System(BASE, run_sd=REAL_RUN_SD),
            System(COMP, run_sd=REAL_RUN_SD, effect=effect),
        ),
        facets=(Facet("lam", 2), Facet("seed", 3)),
    )


def claims_scenarios(seed: int) -> list[Scenario]:
    """The claims cells: design two_lambda_design with B better by 0-3 run-mean SDs."""
    return [
        Scenario(
            f"lam2x3+{k}sd",
            f"(claims) both systems 2 lambda x 3 seeds, lambda without effect, B better by {k} "
            "run-mean SD",
            two_lambda_design(k * run_mean_sd()),
            ("headline", "facet_aware", "welch", "decision"),
            seed + 20_000_000 + 1_000_000 * k,
            k * run_mean_sd(),
        )
        for k in CLAIMS_SHIFTS
    ]


def scenarios(suites: list[str], seed: int) -> list[Scenario]:
    """The benchmark's cells, in the order they run."""
    out: list[Scenario] = []
    if "level" in suites:
        for i, (key, (title, make)) in enumerate(LEVEL_DESIGNS.items()):
            tests = COMPARISON_TESTS + (("facet_aware",) if key == "c" else ())
            if key in HEADLINE_ONLY:
                tests = ("headline", "welch", "decision")
            out.append(Scenario(key, title, make(), tests, seed + 1_000_000 * (i + 1)))
    if "interaction" in suites:
        design = two_systems(
            (6, 6), (REAL_RUN_SD, REAL_RUN_SD), slope_sd=INTERACTION_SLOPE_SD, property_slope=0.002
        )
        out.append(
            Scenario(
                "i",
                INTERACTION_TITLE,
                design,
                ("runaware_interaction", "paper_interaction"),
                seed + 9_000_000,
            )
        )
        out.append(  # runs without slopes of their own: both parametrisations are right here
            Scenario(
                "i0",
                "(i0) as i, but the runs have no slopes of their own (slope SD 0)",
                two_systems((6, 6), (REAL_RUN_SD, REAL_RUN_SD), property_slope=0.002),
                ("runaware_interaction", "paper_interaction", "runaware_interaction_centred"),
                seed + 8_000_000,
            )
        )
        out.append(  # the same experiments, the property centred: a candidate fix
            Scenario(
                "i-centred",
                INTERACTION_TITLE + "; length centred at its segment mean in the run-aware model",
                design,
                ("runaware_interaction_centred",),
                seed + 9_000_000,
            )
        )
    if "claims" in suites:
        out.extend(claims_scenarios(seed))
    if "power" in suites:
        for key, effects in POWER_EFFECTS.items():
            title, make = LEVEL_DESIGNS[key]
            for j, effect in enumerate(effects):
                out.append(
                    Scenario(
                        f"{key}+{effect:g}",
                        title,
                        make(effect),
                        ("headline", "welch"),
                        seed + 10_000_000 * (j + 2) + 1_000_000 * (key == "b"),
                        effect,
                    )
                )
    return out


def welch_power(design: Design, effect: float, alpha: float = ALPHA) -> float:
    """Power of Welch's t on run means (noncentral t at Welch's df): a run's mean has variance
    run_sd^2 + residual_sd^2 / n_segments (segment effects are common to all runs)."""
    var, n = [], []
    for system in design.systems:
        grid = math.prod(design.n_levels(system, f) for f in design.facets_of(system))
        var.append(system.run_sd**2 + design.residual_sd**2 / design.n_segments)
        n.append(grid)
    a, b = var[0] / n[0], var[1] / n[1]
    df = (a + b) ** 2 / (a**2 / (n[0] - 1) + b**2 / (n[1] - 1))
    nc = effect / math.sqrt(a + b)
    crit = float(stats.t.isf(alpha / 2, df))
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def welch_own_level(design: Design, alpha: float = ALPHA, n: int = 400_000) -> float:
    """Level of Welch's t itself on normal run means with this design's run counts and run-mean
    variances (run_sd^2 + residual_sd^2 / n_segments), by simulation (seeded)."""
    rng = np.random.default_rng(20_240)
    samples = []
    for system in design.systems:
        runs = math.prod(design.n_levels(system, f) for f in design.facets_of(system))
        sd = math.sqrt(system.run_sd**2 + design.residual_sd**2 / design.n_segments)
        samples.append(rng.normal(0.0, sd, (n, runs)))
    result = stats.ttest_ind(samples[0], samples[1], axis=1, equal_var=False)
    return float(np.mean(result.pvalue < alpha))


def _test_result(
    log10_p: float | None, estimate: float, df: float = math.nan, method: str = ""
) -> dict[str, object]:
    return {"log10_p": log10_p, "estimate": estimate, "df": df, "method": method}


def _contest_row(log: FitLog, fitted, L, name: str) -> dict[str, object] | None:
    test = contest(log, fitted, L, analysis=name, subset="", prop="")
    if test is None:
        return None
    return _test_result(test.log10_p, test.estimate, test.dendf, test.method)


def comparison_experiment(data: MetricData, tests: tuple[str, ...]) -> dict[str, object]:
    """The system comparison's tests on one experiment, fitted exactly as compare_systems fits
    them (same formulas, fitting and contest functions; the tables nobody reads here skipped)."""
    log = FitLog(data.metric)
    rows = data.evaluation
    levels = {SYSTEM_COLUMN: BASE}
    members = [BASE, COMP]
    out: dict[str, object] = {}
    models = {"headline": headline_formula(data.metric, members, pooled=False)}
    if "facet_aware" in tests:
        groups = {s: shared_facets(data, rows, s) for s in members}
        groups = {s: g for s, g in groups.items() if g}
        models["facet_aware"] = facet_aware_formula(data.metric, members, groups)
    for key, formula in models.items():
        fitted = log.fit(formula, rows, reml=True, analysis=TESTS[key][1], reference_levels=levels)
        if fitted is None:
            out[key] = None
            continue
        L = fitted.contrast_matrix({f"{SYSTEM_COLUMN}{COMP}": -1.0})  # A - B, as compare_systems
        out[key] = _contest_row(log, fitted, L, TESTS[key][1])
    for key, run_aware in (("shared_glrt", True), ("paper_glrt", False)):
        if key not in tests:
            continue
        h1, h0 = formulas(data.metric, run_aware)
        outcome = run_glrt(log, rows, h1, h0, analysis=TESTS[key][1], reference_levels=levels)
        out[key] = (
            None
            if outcome is None
            else _test_result(
                float(outcome.row["log10_p"]),
                -float(outcome.h1.fixed_effects[f"{SYSTEM_COLUMN}{COMP}"]),
            )
        )
    if "decision" in tests:
        out["decision"] = decision_result(data, log)
    if "welch" in tests:
        table = classical_tests(data, log)[CLASSICAL_TABLE].set_index("test")
        out["welch"] = _test_result(
            float(table.loc[WELCH, "log10_p"]), float(table.loc[WELCH, "estimate"])
        )
    skipped = [r["reason"] for r in log.rows if r["status"] == "skipped"]
    if skipped:
        out["_skipped"] = skipped
    return out


def decision_result(data: MetricData, log: FitLog) -> dict[str, object] | None:
    """The decision record of B against A, as the ``summary`` analysis makes it (model M, the
    family's adjustment, the run-count rule, the facet-aware reading): what the table, the
    badge and the sentence say (docs/method.md §4c.11). None when M could not be fitted."""
    from infrepro.analyses.decision.summary import Settings, decide
    from infrepro.core.decisions import FAMILY_BASELINE

    records = decide(data, log, Settings(alpha=ALPHA)).records
    found = [r for r in records if r.family == FAMILY_BASELINE and r.system == COMP]
    if not found:
        return None
    r = found[0]
    return {
        "verdict": r.verdict,
        "improvement": r.improvement,
        "generalises": r.generalises,
        "log10_p": r.log10_p_adjusted,
        "facet_log10_p": r.log10_facet_aware_p,
        "facet_df": r.facet_aware_df,
        "lower": r.lower,
        "upper": r.upper,
    }


def interaction_experiment(
    data: MetricData, tests: tuple[str, ...] = ("runaware_interaction", "paper_interaction")
) -> dict[str, object]:
    """The conditional interaction tests (system x length) as conditional_analyses fits them:
    the paper's GLRT (H1 vs H0 without the interaction) and the run-aware F test; and, as a
    candidate fix, the run-aware F test with the property centred at its mean over segments."""
    log = FitLog(data.metric)
    rows, prop = data.evaluation, data.properties[0]
    levels = {SYSTEM_COLUMN: BASE}
    out: dict[str, object] = {}
    if "paper_interaction" in tests:
        models = property_formulas(data.metric, SYSTEM_COLUMN, prop)
        outcome = run_glrt(
            log,
            rows,
            models["h1"],
            models["h0_interaction"],
            analysis=interaction_only(CONDITIONAL),
            prop=prop,
            reference_levels=levels,
        )
        out["paper_interaction"] = (
            None if outcome is None else _test_result(float(outcome.row["log10_p"]), math.nan)
        )
    for key in ("runaware_interaction", "runaware_interaction_centred"):
        if key not in tests:
            continue
        # the analyses' model (slopes on length centred, as conditional_analyses fits it); the
        # cell "i" of calibration.md measured the earlier uncentred (1 + length || run_id)
        variable = prop
        table = rows.assign(**{centred(prop): rows[prop] - rows[prop].mean()})
        fitted = fit_run_aware(
            log,
            data.metric,
            table,
            SYSTEM_COLUMN,
            variable,
            True,
            analysis=run_aware_model(CONDITIONAL),
            reference=BASE,
        )
        if fitted is None:
            out[key] = None
            continue
        inter = fitted.term_columns(SYSTEM_COLUMN, variable)
        L = fitted.contrast_matrix([{c: 1.0} for c in inter])
        out[key] = _contest_row(log, fitted, L, interaction_only(run_aware_model(CONDITIONAL)))
    skipped = [r["reason"] for r in log.rows if r["status"] == "skipped"]
    if skipped:
        out["_skipped"] = skipped
    return out


def result_rejects(result: object, alpha: float = ALPHA) -> bool:
    """Does a test result (``comparison_experiment``'s or ``interaction_experiment``'s) reject?"""
    return (
        result is not None
        and result["log10_p"] is not None
        and (  # type: ignore[index]
            float(result["log10_p"]) < math.log10(alpha)
        )
    )  # type: ignore[index]
