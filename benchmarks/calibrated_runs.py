"""Few runs: the band-calibrated test, Berger-Boos and moderated run variances (issue 28;
docs/method.md §4b.11, §4b.12), measured on simulated run means.

Each experiment draws the run means directly: system k's run i has mean μ_k + e_ki with
e_ki ~ N(0, σ²_run,k + σ²_res/S), σ_res = 0.1 at S = 1,000 segments (the residual part of a
run mean's variance, 1e-5) plus the run SD (A's 0.02, B's 0.02 × the run-SD ratio). The tests,
all on T = (x̄_B − x̄_A)/sqrt(s_A²/n_A + s_B²/n_B) at α = 0.05:

- Welch: t with Welch-Satterthwaite df;
- Hsu: t with min(n_A, n_B) − 1 df;
- today's rule: Welch, with a claim only where ``runcounts.holds_level`` admits the run counts;
- calibrated: |T| > ``critical_t(0.05, n_A, n_B)`` (band 2: run-mean SDs within a factor of 2);
- Berger-Boos: ``berger_boos_log10_p`` < log10 0.05 (β = 0.001). p_BB ≥ p_band, so it is
  evaluated only where the calibrated test rejects.

Suites: ``level`` (no difference; false claims = significant in either direction; acceptance
≤ 0.05 + 1.5 Monte Carlo SE for the calibrated test at run-SD ratios 1/2, 1, 2 and Berger-Boos
at 1/4 and 4); ``power`` (B better by 2 run-mean SDs, equal run SDs; directional: significant
with B ahead; the calibrated test's power by quadrature, ``calibrated.power``, beside it);
``moderation`` (12 systems, 3 and 2 runs alternately, baseline first with 3; run variances
drawn from one scaled-inverse-χ² distribution, d0 ∈ {2, 4, 10, 50, ∞}, scale 0.02²; the 11
comparisons with the baseline, moderated (``moderated_variances`` over the 12 systems, then
Welch's statistic on them referred to ``band_log10_p`` with the posterior df; also limma's
uncapped fit, the decision's rule ``supported_variances`` and the alternatives measured against
it, ``moderation_variants``) against the unmoderated calibrated test on the same experiments).

Usage: nice python benchmarks/calibrated_runs.py [--suites level,power,moderation]
       [--n-level 10000] [--n-power 10000] [--n-moderation 2000] [--out FILE] [--log FILE]
Seeded (cell by cell): the same arguments give the same tables.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bench import command_line
from scipy import stats

from infrepro.stats.calibrated import (
    DEFAULT_BAND,
    band_log10_p,
    berger_boos_log10_p,
    beyond_prior,
    critical_t,
    moderated_variances,
    power,
    squeeze_var,
    supported_variances,
)
from infrepro.stats.runcounts import holds_level

ALPHA = 0.05
RESIDUAL = 0.1**2 / 1000  # σ²_res / S: the residual part of a run mean's variance
RUN_SD = 0.02  # A's run SD; B's is RUN_SD × the run-SD ratio
LEVEL_DESIGNS = [(3, 2), (4, 2), (10, 2), (5, 3), (6, 3), (20, 3)]
LEVEL_RATIOS = [0.5, 1.0, 2.0]  # the calibrated test's acceptance
BB_RATIOS = [0.25, 4.0]  # outside the band: Berger-Boos's acceptance
POWER_DESIGNS = [(10, 2), (4, 2), (6, 3), (4, 4), (3, 2), (5, 3), (20, 3)]
POWER_TARGETS = {(10, 2): 0.18, (4, 2): 0.18, (6, 3): 0.40}
MODERATION_D0 = [2.0, 4.0, 10.0, 50.0, math.inf]
MODERATION_RUNS = [3, 2] * 6
TESTS = ["Welch", "Hsu", "today's rule", "calibrated", "Berger-Boos"]


def log(message: str, path: Path | None) -> None:
    stamp = dt.datetime.now(dt.UTC).strftime("%H:%M:%S")
    line = f"{stamp} {message}"
    print(line, flush=True)
    if path is not None:
        with path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


def rng_for(*key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([2028, *key]))


@dataclass(frozen=True)
class Rejections:
    """Per test: experiments significant (either direction) and significant with B ahead."""

    n: int
    any: dict[str, int]
    ahead: dict[str, int]


def two_system(
    rng: np.random.Generator, n_a: int, n_b: int, ratio: float, delta: float, draws: int
) -> Rejections:
    """``draws`` experiments of n_a vs n_b runs, B's run SD ``ratio`` times A's, B ahead by
    ``delta`` (in the metric's units), every test on the same run means."""
    v_a, v_b = RUN_SD**2 + RESIDUAL, (ratio * RUN_SD) ** 2 + RESIDUAL
    a = rng.normal(0.0, math.sqrt(v_a), (draws, n_a))
    b = rng.normal(delta, math.sqrt(v_b), (draws, n_b))
    s2_a, s2_b = a.var(axis=1, ddof=1), b.var(axis=1, ddof=1)
    q_a, q_b = s2_a / n_a, s2_b / n_b
    t = (b.mean(axis=1) - a.mean(axis=1)) / np.sqrt(q_a + q_b)
    welch_df = (q_a + q_b) ** 2 / (q_a**2 / (n_a - 1) + q_b**2 / (n_b - 1))
    crit = critical_t(ALPHA, n_a, n_b)
    reject = {
        "Welch": 2 * stats.t.sf(np.abs(t), welch_df) < ALPHA,
        "Hsu": 2 * stats.t.sf(np.abs(t), min(n_a, n_b) - 1) < ALPHA,
        "calibrated": np.abs(t) > crit,
    }
    reject["today's rule"] = reject["Welch"] & holds_level(n_a, n_b, ALPHA)
    bb = np.zeros(draws, dtype=bool)
    for i in np.flatnonzero(reject["calibrated"]):
        bb[i] = berger_boos_log10_p(t[i], n_a, n_b, s2_a[i], s2_b[i]) < math.log10(ALPHA)
    reject["Berger-Boos"] = bb
    return Rejections(
        n=draws,
        any={k: int(v.sum()) for k, v in reject.items()},
        ahead={k: int((v & (t > 0)).sum()) for k, v in reject.items()},
    )


def rate(k: int, n: int) -> tuple[float, float]:
    p = k / n
    return p, math.sqrt(p * (1 - p) / n)


def fmt(k: int, n: int) -> str:
    p, se = rate(k, n)
    return f"{p:.4f} ± {se:.4f}"


def suite_head(title: str, intro: str, column: str, *extra: str) -> list[str]:
    """A suite's heading, what it measured and its table's head: runs, ``column``, one column
    per test of ``TESTS``, the ``extra`` columns and whether the acceptance line holds."""
    tail = [*extra, "holds?"]
    return [
        title,
        "",
        intro,
        "",
        f"| runs | {column} | " + " | ".join(TESTS) + " | " + " | ".join(tail) + " |",
        "|---|---|" + "---|" * len(TESTS) + "---|" * len(tail),
    ]


def level_suite(n: int, log_path: Path | None) -> list[str]:
    lines = suite_head(
        "## Level: false claims with no difference (α = 0.05)",
        f"{n} experiments per cell; rate ± Monte Carlo SE; a false claim is a significant "
        "test in either direction. Run-SD ratio = B's run SD / A's (B: the side with fewer "
        "runs); run-mean SD ratio in brackets. Acceptance: calibrated ≤ 0.05 + 1.5 SE at "
        "ratios 1/2, 1, 2; Berger-Boos ≤ 0.05 + 1.5 SE at 1/4 and 4.",
        "run-SD ratio",
    )
    held = True
    for i, (n_a, n_b) in enumerate(LEVEL_DESIGNS):
        for j, ratio in enumerate(sorted(LEVEL_RATIOS + BB_RATIOS)):
            res = two_system(rng_for(1, i, j), n_a, n_b, ratio, 0.0, n)
            judged = "Berger-Boos" if ratio in BB_RATIOS else "calibrated"
            p, se = rate(res.any[judged], n)
            ok = p <= ALPHA + 1.5 * se
            held &= ok
            mean_sd = math.sqrt(((ratio * RUN_SD) ** 2 + RESIDUAL) / (RUN_SD**2 + RESIDUAL))
            cells = []
            for name in TESTS:
                cell = fmt(res.any[name], n)
                cells.append(f"**{cell}**" if name == judged else cell)
            lines.append(
                f"| {n_a} v {n_b} | {ratio:g} ({mean_sd:.3f}) | "
                + " | ".join(cells)
                + f" | {'yes' if ok else '**no**'} ({judged}) |"
            )
            log(
                f"level {n_a}v{n_b} ratio {ratio:g}: "
                + ", ".join(f"{k} {res.any[k] / n:.4f}" for k in TESTS),
                log_path,
            )
    lines += ["", f"Every acceptance line holds: {'yes' if held else '**no**'}.", ""]
    return lines


def power_suite(n: int, log_path: Path | None) -> list[str]:
    v = RUN_SD**2 + RESIDUAL
    delta = 2.0 * math.sqrt(v)
    lines = suite_head(
        "## Power: B better by 2 run-mean SDs, equal run SDs (α = 0.05, directional)",
        f"{n} experiments per design; rate ± Monte Carlo SE. 'quadrature': the calibrated "
        "test's power from `calibrated.power` (no simulation). Acceptance: calibrated ≥ 0.18 "
        "at 10 v 2 and 4 v 2, ≥ 0.40 at 6 v 3; at 4 v 4 within 0.03 of Welch.",
        "critical t",
        "quadrature",
    )
    held = True
    for i, (n_a, n_b) in enumerate(POWER_DESIGNS):
        res = two_system(rng_for(2, i), n_a, n_b, 1.0, delta, n)
        exact = power(delta, v, v, n_a, n_b, ALPHA)
        cal, _ = rate(res.ahead["calibrated"], n)
        if (n_a, n_b) in POWER_TARGETS:
            ok: bool | None = cal >= POWER_TARGETS[(n_a, n_b)]
        elif (n_a, n_b) == (4, 4):
            ok = abs(cal - rate(res.ahead["Welch"], n)[0]) <= 0.03
        else:
            ok = None
        held &= ok is not False
        verdict = "" if ok is None else ("yes" if ok else "**no**")
        lines.append(
            f"| {n_a} v {n_b} | {exact.critical_t:.3f} | "
            + " | ".join(fmt(res.ahead[k], n) for k in TESTS)
            + f" | {exact.directional:.4f} | {verdict} |"
        )
        log(
            f"power {n_a}v{n_b}: "
            + ", ".join(f"{k} {res.ahead[k] / n:.4f}" for k in TESTS)
            + f", quadrature "
            f"{exact.directional:.4f}",
            log_path,
        )
    lines += ["", f"Every acceptance line holds: {'yes' if held else '**no**'}.", ""]
    return lines


@dataclass
class ModerationCell:
    """Per experiment: the share of its 11 comparisons with a claim, per test; the prior df
    limma fitted."""

    shares: dict[str, list[float]]
    d0_fitted: list[float]


MODERATION_TESTS = [
    "moderated",
    "moderated, d0 not capped",
    "supported (the rule)",
    "own if beyond F 80 %",
    "own if beyond F 90 %",
    "none if limma's d0 < 4",
    "never below own",
    "calibrated",
    "Welch",
]
MODERATED_VARIANTS = [name for name in MODERATION_TESTS if name not in ("calibrated", "Welch")]


def moderation_variants(s2: np.ndarray, df: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The variances and df each moderated variant tests with (§4b.12): today's capped fit,
    limma's uncapped one, the rule the decision uses (``supported_variances``: a variance beyond
    the 80 % quantile of its prior predictive is not shrunk below its own), and the alternatives
    measured against it (such a variance keeps its own variance and df, at 80 % and 90 %; no
    moderation when limma's d0 is below 4; no variance ever shrunk below its own)."""
    capped, limma = moderated_variances(s2, df), squeeze_var(s2, df)
    supported, _ = supported_variances(s2, df)
    own = (s2, df)
    out = {
        "moderated": (capped.var_post, capped.df_post),
        "moderated, d0 not capped": (limma.var_post, limma.df_post),
        "supported (the rule)": (supported.var_post, supported.df_post),
    }
    for q in (0.8, 0.9):
        bad = beyond_prior(s2, df, capped, q)
        out[f"own if beyond F {q:.0%}".replace("%", " %")] = (
            np.where(bad, s2, capped.var_post),
            np.where(bad, df, capped.df_post),
        )
    out["none if limma's d0 < 4"] = own if limma.d0 < 4 else out["moderated"]
    out["never below own"] = (np.maximum(capped.var_post, s2), capped.df_post)
    return out


def moderation_cell(
    rng: np.random.Generator, d0_true: float, delta: float, draws: int
) -> ModerationCell:
    """``draws`` experiments of 12 systems; system 0 the baseline, the others ahead by delta.
    A claim: significant with the competitor ahead (delta > 0) or in either direction (0)."""
    runs = np.array(MODERATION_RUNS)
    df = runs - 1.0
    cell = ModerationCell(shares={k: [] for k in MODERATION_TESTS}, d0_fitted=[])
    crit = {n: critical_t(ALPHA, runs[0], n) for n in set(MODERATION_RUNS)}
    lower = critical_t(ALPHA, runs[0], 2, 2.0, math.inf, math.inf)  # no critical value is lower

    def moderated_claim(diff: float, k: int, var: np.ndarray, f: np.ndarray) -> bool:
        t = diff / math.sqrt(var[0] / runs[0] + var[k] / runs[k])
        if abs(t) <= lower or (delta > 0 and t < 0):
            return False  # the band's p with the variant's df
        return band_log10_p(t, runs[0], runs[k], DEFAULT_BAND, f[0], f[k]) < math.log10(ALPHA)

    for _ in range(draws):
        if math.isinf(d0_true):
            run_var = np.full(runs.size, RUN_SD**2)
        else:
            run_var = RUN_SD**2 * d0_true / rng.chisquare(d0_true, runs.size)
        means = [
            rng.normal(delta if k else 0.0, math.sqrt(v + RESIDUAL), n)
            for k, (v, n) in enumerate(zip(run_var, runs, strict=True))
        ]
        mean = np.array([m.mean() for m in means])
        s2 = np.array([m.var(ddof=1) for m in means])
        variants = moderation_variants(s2, df)
        cell.d0_fitted.append(squeeze_var(s2, df).d0)
        hits = dict.fromkeys(MODERATION_TESTS, 0)
        for k in range(1, runs.size):
            diff = mean[k] - mean[0]
            q_0, q_k = s2[0] / runs[0], s2[k] / runs[k]
            t_plain = diff / math.sqrt(q_0 + q_k)
            ahead = delta == 0 or t_plain > 0
            welch_df = (q_0 + q_k) ** 2 / (q_0**2 / df[0] + q_k**2 / df[k])
            hits["calibrated"] += ahead and abs(t_plain) > crit[runs[k]]
            hits["Welch"] += ahead and 2 * stats.t.sf(abs(t_plain), welch_df) < ALPHA
            for name in MODERATED_VARIANTS:
                hits[name] += moderated_claim(diff, k, *variants[name])
        for name, count in hits.items():
            cell.shares[name].append(count / (runs.size - 1))
    return cell


def clustered(values: list[float]) -> tuple[float, float]:
    """Mean and SE over experiments (the 11 comparisons of one experiment are correlated)."""
    x = np.asarray(values)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def spread(d0: float) -> str:
    """The 10 % to 90 % range of the systems' run SDs under the prior, as a ratio."""
    if math.isinf(d0):
        return "1"
    lo, hi = stats.chi2.ppf([0.1, 0.9], d0)
    return f"{math.sqrt(hi / lo):.1f}"


def moderation_suite(n: int, log_path: Path | None) -> list[str]:
    delta = 2.0 * math.sqrt(RUN_SD**2 + RESIDUAL)
    lines = [
        "## Moderated run variances: 12 systems with 3 and 2 runs",
        "",
        f"{n} experiments per cell, 11 comparisons with the baseline each; rate ± SE over "
        "experiments. Run variances σ²_run,k = 0.02² d0 / χ²_d0 (one scaled-inverse-χ² "
        "distribution; d0 = ∞: all 0.02²), plus 1e-5 residual; 'SD spread': the ratio of the "
        "90 % to the 10 % quantile of the systems' run SDs under that prior. Level: no "
        "differences, a claim is significant in either direction; power: every competitor "
        "ahead by 2 run-mean SDs (2 √(0.02² + 1e-5)), a claim is significant with it ahead. "
        "'moderated': `moderated_variances` (limma's fit, prior df capped at 4) and "
        "Welch's statistic on them referred to `band_log10_p` (band 2, posterior df); "
        "'d0 not capped': limma's fit as it is "
        "(`squeeze_var`); 'supported (the rule)': the decision's (`supported_variances`: a "
        "variance above the 80 % quantile of s0² F(f_k, d0) is not shrunk below its own "
        "s_k², df unchanged); 'own if beyond F q': such a variance keeps its own s_k² and "
        "f_k; 'none if limma's d0 < 4': the unmoderated test for every pair when limma's "
        "fitted d0 is below 4; 'never below own': max(ṽ_k, s_k²) for every system. "
        "Acceptance: the rule's level ≤ 0.065 at every prior d0 (also 2), its power ≥ "
        "calibrated + 0.10 at d0 ≥ 4.",
        "",
        "| prior d0 | SD spread | suite | "
        + " | ".join(MODERATION_TESTS)
        + " | rule − calibrated | limma's d0: median, share ∞ | holds? |",
        "|---|---|---|" + "---|" * len(MODERATION_TESTS) + "---|---|---|",
    ]
    held = True
    for i, d0 in enumerate(MODERATION_D0):
        for j, (suite, effect) in enumerate([("level", 0.0), ("power", delta)]):
            start = time.process_time()
            cell = moderation_cell(rng_for(3, i, j), d0, effect, n)
            rates = {k: clustered(v) for k, v in cell.shares.items()}
            rule = np.asarray(cell.shares["supported (the rule)"])
            diff = rule - np.asarray(cell.shares["calibrated"])
            d, d_se = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(diff.size))
            ok: bool | None = float(rule.mean()) <= 0.065 if suite == "level" else d >= 0.10
            if suite == "power" and d0 < 4:
                ok = None  # the stress case: its power is reported, not an acceptance line
            held &= ok is not False
            fitted = np.asarray(cell.d0_fitted)
            verdict = "(stress case)" if ok is None else ("yes" if ok else "**no**")
            lines.append(
                f"| {d0:g} | {spread(d0)} | {suite} | "
                + " | ".join(f"{r:.4f} ± {se:.4f}" for r, se in rates.values())
                + f" | {d:+.4f} ± {d_se:.4f} | {np.median(fitted):.2f}, "
                f"{np.isinf(fitted).mean():.2f} | {verdict} |"
            )
            log(
                f"moderation d0 {d0:g} {suite}: "
                + ", ".join(f"{k} {r:.4f}" for k, (r, _) in rates.items())
                + f" ({time.process_time() - start:.0f} s CPU)",
                log_path,
            )
    lines += ["", f"Every acceptance line holds: {'yes' if held else '**no**'}.", ""]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = command_line(__doc__, "calibrated_runs.md")
    parser.add_argument("--suites", default="level,power,moderation")
    parser.add_argument("--n-level", type=int, default=10_000)
    parser.add_argument("--n-power", type=int, default=10_000)
    parser.add_argument("--n-moderation", type=int, default=2_000)
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    suites = args.suites.split(",")
    started, cpu0 = dt.datetime.now(dt.UTC), time.process_time()
    load0 = os.getloadavg()
    body: list[str] = []
    if "level" in suites:
        body += level_suite(args.n_level, args.log)
    if "power" in suites:
        body += power_suite(args.n_power, args.log)
    if "moderation" in suites:
        body += moderation_suite(args.n_moderation, args.log)
    load1 = os.getloadavg()
    ended = dt.datetime.now(dt.UTC)
    head = [
        "# Few runs: the band-calibrated test, Berger-Boos and moderated variances (issue 28)",
        "",
        f"Command: `nice python benchmarks/calibrated_runs.py {' '.join(sys.argv[1:])}`".rstrip()
        + "",
        "",
        f"Run {started:%Y-%m-%d %H:%M} - {ended:%H:%M} UTC on {platform.node() or 'the host'} "
        f"({os.cpu_count()} CPUs shared with other jobs; load average "
        f"{load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} at the start, "
        f"{load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f} at the end), "
        f"{(ended - started).total_seconds():.0f} s wall, "
        f"{time.process_time() - cpu0:.0f} s CPU; Python {platform.python_version()}, "
        f"numpy {np.__version__}.",
        "",
        "Simulated run means (docs: the module docstring of `benchmarks/calibrated_runs.py`): "
        "σ_res = 0.1 at 1,000 segments (1e-5 of each run mean's variance) plus the run SDs "
        "(A: 0.02). Tests at α = 0.05 on T = (x̄_B − x̄_A)/√(s_A²/n_A + s_B²/n_B): Welch "
        "(Welch-Satterthwaite df), Hsu (min(n) − 1 df), today's rule (Welch where "
        "`runcounts.holds_level` admits the run counts, else no claim), calibrated "
        "(|T| > `critical_t`, band 2), Berger-Boos (`berger_boos_log10_p`, β = 0.001).",
        "",
    ]
    args.out.write_text("\n".join(head + body), encoding="utf-8")
    log(f"wrote {args.out}", args.log)


if __name__ == "__main__":
    main()
