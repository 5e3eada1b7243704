"""Benchmark infrepro.lmm against R lme4 and statsmodels MixedLM, side by side.

Cases:
  a  the full Kreutzer et al. hyper-parameter grid, REML variance-component analysis
     (337,284 rows, 7 crossed random intercepts; bundled in resources/kreutzer2020)
  b  a paper-scale synthetic VCA: 11,490 segments x 30 runs (3 lambda x 2 noise x 5 seeds),
     4 crossed random intercepts, REML
  c  a paper-scale GLRT pair: 11,490 segments x 48 runs (2 systems x 24 runs),
     score ~ system + (1|segment) vs score ~ 1 + (1|segment), ML (both fits timed)

Every engine runs in its own subprocess, which loads the data first and times only the fit
(R: only the lmer() calls). Peak memory is the subprocess's peak resident set (VmHWM, data and
runtime included); for infrepro also the peak of allocations made during the fit (tracemalloc).
statsmodels runs under a wall-time cap (--sm-timeout) and an address-space cap.
Prints a markdown table.

Usage: python benchmarks/lmm.py [--cases a,b,c] [--engines infrepro,lme4,statsmodels]
                                [--sm-timeout 60] [--r-timeout 3600] [--repeat 3]
infrepro's time is the best of --repeat fits (the first one is also traced for memory).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
KREUTZER_FULL = REPO / "resources" / "kreutzer2020" / "data_hyperparameter-marking_full.csv.gz"
FACETS_A = [
    "learning_rate",
    "seed",
    "encoder_dropout",
    "decoder_dropout",
    "decoder_dropout_hidden",
    "delta_scheme",
]
N_SEGMENTS = 11_490
SM_MEMORY_CAP = 8 * 1024**3

CASES: dict[str, dict] = {
    "a": {
        "title": "Kreutzer full grid VCA (REML, 337,284 rows, 7 factors)",
        "factors": ["sentence_id", *FACETS_A],
        "formulas": ["ter ~ 1 + (1|sentence_id) + " + " + ".join(f"(1|{f})" for f in FACETS_A)],
        "reml": True,
    },
    "b": {
        "title": "synthetic VCA (REML, 11,490 x 30 runs = 344,700 rows, 4 factors)",
        "factors": ["segment", "lam", "noise", "seed"],
        "formulas": ["score ~ 1 + (1|segment) + (1|lam) + (1|noise) + (1|seed)"],
        "reml": True,
    },
    "c": {
        "title": "synthetic GLRT pair (ML, 11,490 x 48 runs = 551,520 rows, 2 fits)",
        "factors": ["segment", "system"],
        "formulas": ["score ~ system + (1|segment)", "score ~ 1 + (1|segment)"],
        "reml": False,
    },
}


# ---------------------------------------------------------------- data
def make_case_b(seed: int = 1) -> pd.DataFrame:
    """Segments crossed with lambda (3) x noise (2) x seed (5); effects on a TER-like scale."""
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(N_SEGMENTS), 30)
    run = np.tile(np.arange(30), N_SEGMENTS)
    lam, noise, sd = run // 10, (run // 5) % 2, run % 5
    score = (
        0.45
        + rng.normal(0, 0.2, N_SEGMENTS)[seg]
        + rng.normal(0, 0.03, 3)[lam]
        + rng.normal(0, 0.02, 2)[noise]
        + rng.normal(0, 0.01, 5)[sd]
        + rng.normal(0, 0.1, len(seg))
    )
    return pd.DataFrame(
        {
            "segment": np.char.add("s", seg.astype(str)),
            "lam": np.array(["0.1", "0.5", "0.9"])[lam],
            "noise": np.array(["clean", "noisy"])[noise],
            "seed": np.char.add("seed", sd.astype(str)),
            "score": score,
        }
    )


def make_case_c(seed: int = 2) -> pd.DataFrame:
    """Two systems x 24 runs each on every segment; a small system effect and run noise."""
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(N_SEGMENTS), 48)
    run = np.tile(np.arange(48), N_SEGMENTS)
    system = run // 24
    score = (
        0.35
        + 0.004 * system
        + rng.normal(0, 0.15, N_SEGMENTS)[seg]
        + rng.normal(0, 0.01, 48)[run]
        + rng.normal(0, 0.12, len(seg))
    )
    return pd.DataFrame(
        {
            "segment": np.char.add("s", seg.astype(str)),
            "system": np.array(["baseline", "competitor"])[system],
            "run_id": np.char.add("r", run.astype(str)),
            "score": score,
        }
    )


def load(path: Path, factors: list[str]) -> pd.DataFrame:
    return pd.read_csv(path, dtype={f: str for f in factors})


def vm_hwm_mib() -> float:
    """This process's peak resident set size (MiB)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- children
def child_infrepro(case: str, data: Path, repeat: int) -> dict:
    import tracemalloc

    from infrepro.lmm import LmmError, fit, lrt

    spec = CASES[case]
    df = load(data, spec["factors"])
    # warm-up on a small slice so that lazy imports are not timed
    try:
        fit(spec["formulas"][0], df.iloc[:5000], reml=spec["reml"])
    except LmmError:
        pass
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    fits = [fit(f, df, reml=spec["reml"]) for f in spec["formulas"]]
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    for _ in range(repeat - 1):  # best of `repeat` (tracing off): less noise from other load
        t0, c0 = time.perf_counter(), time.process_time()
        fits = [fit(f, df, reml=spec["reml"]) for f in spec["formulas"]]
        if time.perf_counter() - t0 < seconds:
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_rss_mib": vm_hwm_mib(),
        "fit_alloc_mib": peak / 2**20,
        "loglik": [r.loglik for r in fits],
        "converged": all(r.converged for r in fits),
        "components": fits[0].variance_components.round(8).to_dict(),
    }
    if len(fits) == 2:
        out["lrt"] = dataclasses.asdict(lrt(fits[1], fits[0]))
    return out


def child_statsmodels(case: str, data: Path) -> dict:
    import warnings

    import statsmodels.formula.api as smf

    from infrepro.lmm import parse_formula

    warnings.simplefilter("ignore")
    spec = CASES[case]
    df = load(data, spec["factors"])
    t0, c0 = time.perf_counter(), time.process_time()
    lls = []
    for formula in spec["formulas"]:
        parsed = parse_formula(formula)
        labels = [":".join(term) for term in parsed.fixed_terms]
        fixed = f"{parsed.response} ~ " + (" + ".join(labels) or "1")
        groups = list(parsed.random_names)
        if len(groups) == 1:  # one random intercept: statsmodels' native grouping
            model = smf.mixedlm(fixed, df, groups=df[groups[0]])
        else:  # crossed: one all-encompassing group, one variance component per factor
            df["_one"] = 1
            vc = {g: f"0 + C({g})" for g in groups}
            model = smf.mixedlm(fixed, df, groups="_one", vc_formula=vc, re_formula="0")
        res = model.fit(reml=spec["reml"])
        lls.append(float(res.llf))
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "peak_rss_mib": vm_hwm_mib(),
        "loglik": lls,
    }


R_TEMPLATE = r"""
suppressPackageStartupMessages(library(lme4))
d <- read.csv("{data}", colClasses = c({colclasses}))
formulas <- c({formulas})
t0 <- proc.time()
lls <- c()
for (f in formulas) {{
  m <- lmer(as.formula(f), d, REML = {reml})
  lls <- c(lls, as.numeric(logLik(m)))
}}
el <- proc.time() - t0
cpu <- el[["user.self"]] + el[["sys.self"]]
st <- readLines("/proc/self/status")
hwm <- as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
cat(sprintf('{{"seconds": %.6f, "cpu_seconds": %.6f, "peak_rss_mib": %.1f, "loglik": [%s]}}\n',
            el[["elapsed"]], cpu, hwm, paste(sprintf("%.10f", lls), collapse = ", ")))
"""


def run_lme4(case: str, data: Path, timeout: float, workdir: Path) -> dict:
    spec = CASES[case]
    script = R_TEMPLATE.format(
        data=data,
        colclasses=", ".join(f'"{f}" = "character"' for f in spec["factors"]),
        formulas=", ".join(f'"{f}"' for f in spec["formulas"]),
        reml="TRUE" if spec["reml"] else "FALSE",
    )
    path = workdir / f"lme4_{case}.R"
    path.write_text(script)
    return _run([shutil.which("Rscript") or "Rscript", str(path)], timeout)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SM_MEMORY_CAP, SM_MEMORY_CAP))


def _run(cmd: list[str], timeout: float, limit: bool = False) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "2"))
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=_limit_memory if limit else None,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        if "Unable to allocate" in tail:  # numpy's MemoryError names the size it wanted
            return {"error": "out of memory: " + tail[tail.index("Unable") :].split(" for ")[0]}
        return {"error": f"failed: {tail[:100]}"}
    return json.loads(lines[-1])


# ---------------------------------------------------------------- driver
def prepare_data(case: str, workdir: Path) -> Path | None:
    if case == "a":
        return KREUTZER_FULL if KREUTZER_FULL.exists() else None
    df = make_case_b() if case == "b" else make_case_c()
    path = workdir / f"case_{case}.csv"
    df.to_csv(path, index=False)
    return path


def fmt_row(case: str, engine: str, res: dict, base: dict | None) -> str:
    if "error" in res:
        return f"| {case} | {engine} | {res['error']} | | | | |"
    secs, cpu = res["seconds"], res.get("cpu_seconds", float("nan"))
    ratio = "1x"
    if base and engine != "infrepro":
        ratio = f"{secs / base['seconds']:.0f}x"
    mem = f"{res['peak_rss_mib']:.0f}"
    if "fit_alloc_mib" in res:
        mem += f" (fit {res['fit_alloc_mib']:.0f})"
    ll = ", ".join(f"{v:.4f}" for v in res["loglik"])
    return f"| {case} | {engine} | {secs:.3f} | {cpu:.3f} | {ratio} | {mem} | {ll} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", default="a,b,c")
    ap.add_argument("--engines", default="infrepro,lme4,statsmodels")
    ap.add_argument("--sm-timeout", type=float, default=60.0)
    ap.add_argument("--r-timeout", type=float, default=3600.0)
    ap.add_argument("--repeat", type=int, default=3, help="infrepro: best of this many fits")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child == "infrepro":
            out = child_infrepro(args.case, Path(args.data), args.repeat)
        else:
            out = child_statsmodels(args.case, Path(args.data))
        print(json.dumps(out))
        return
    engines = args.engines.split(",")
    if "lme4" in engines and shutil.which("Rscript") is None:
        print("Rscript not found: skipping lme4", file=sys.stderr)
        engines.remove("lme4")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for case in args.cases.split(","):
            data = prepare_data(case, workdir)
            if data is None:
                print(f"case {case}: data not found, skipped", file=sys.stderr)
                continue
            results: dict[str, dict] = {}
            for engine in engines:
                print(f"case {case}: {engine} ...", file=sys.stderr, flush=True)
                me = [sys.executable, __file__, "--case", case, "--data", str(data)]
                if engine == "infrepro":
                    results[engine] = _run(
                        [*me, "--child", "infrepro", "--repeat", str(args.repeat)], 3600
                    )
                elif engine == "statsmodels":
                    results[engine] = _run(
                        [*me, "--child", "statsmodels"], args.sm_timeout, limit=True
                    )
                else:
                    results[engine] = run_lme4(case, data, args.r_timeout, workdir)
                print(f"  {results[engine]}", file=sys.stderr, flush=True)
            base = results.get("infrepro")
            base = base if base and "seconds" in base else None
            for engine, res in results.items():
                rows.append(fmt_row(case, engine, res, base))
    print()
    for key in args.cases.split(","):
        print(f"- **{key}**: {CASES[key]['title']}")
    print()
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print(
        "| case | engine | fit wall time (s) | fit CPU time (s) | wall vs infrepro "
        "| peak memory (MiB) | logLik |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
