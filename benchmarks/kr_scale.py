"""Benchmark: Kenward-Roger vs Satterthwaite at the paper's scale (issue 23), side by side.

Usage: ``python benchmarks/kr_scale.py [--scale 1.0] [--out benchmarks/results/kr_scale.md]``;
``--scaling``: the dense q x q reference vs the structured KR at growing numbers of segments.

The design of ``paper_scale/generate.py`` (11,490 segments x 48 runs = 551,520 rows at full
scale: baseline 18 seeds, competitor 3 lambda x 2 noise x 5 seeds) with scores drawn from its
planted rates (``run_rate``: system, lambda, noise and seed effects; segment difficulty SD
``SEGMENT_SD``; residual SD 0.05) instead of scored texts, and four segment properties (a
log-normal length, readability, word rarity and a rarity sum that grows with length), each
numeric and in tertiles, as the workflow's conditional analyses have them.

Every model and contrast is the analyses' own (``infrepro.core.vocabulary`` formulas; the joint and
interaction F tests of ``conditional._run_aware_fit``): the headline and facet-aware
comparisons, the conditional run-aware fits (system x property) and the metaparam ones (lambda
x property, competitor's rows). Each test is timed cold (the fit's cached df parts cleared)
with Kenward-Roger (the structured computation, infrepro/lmm/kr.py) and with Satterthwaite, in
one process, one BLAS thread. Prints and writes a markdown table.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from paper_scale.generate import FULL_SEGMENTS, SEGMENT_SD, run_rate, runs_grid

from infrepro.core.vocabulary import (
    RUN_TERM,
    centred,
    facet_aware_formula,
    headline_formula,
    run_terms,
    runaware_property_formula,
)
from infrepro.lmm import KENWARD_ROGER, SATTERTHWAITE, LmmResult, fit

PROPS = ("length", "readability", "word_rarity", "word_rarity_sum")
COMPETITOR_FACETS = ["lam", "noise", "seed", "lam:noise", "lam:seed", "noise:seed"]


def make_design(scale: float, seed: int = 6) -> pd.DataFrame:
    """The paper-scale design with planted scores and segment properties."""
    rng = np.random.default_rng(seed)
    n_seg = int(round(FULL_SEGMENTS * scale))
    runs = runs_grid()
    n_runs = len(runs)
    length = np.clip(rng.lognormal(np.log(610), 0.35, n_seg), 150, 2500).round()
    props = {
        "length": length,
        "readability": rng.normal(60, 10, n_seg).round(1),
        "word_rarity": rng.normal(8, 1, n_seg).round(3),
        "word_rarity_sum": (length * rng.normal(8, 1, n_seg) / 100).round(2),
    }
    seg = np.repeat(np.arange(n_seg), n_runs)
    run = np.tile(np.arange(n_runs), n_seg)
    rate = np.array([run_rate(r, seed) for r in runs])
    d = pd.DataFrame(
        {
            "segment_id": pd.Categorical([f"cnn-{s:05d}" for s in range(n_seg)])[seg],
            "run_id": pd.Categorical([r.run_id for r in runs])[run],
            "system": pd.Categorical([r.system for r in runs])[run],
            "lam": pd.Categorical([r.lam for r in runs])[run],
            "noise": pd.Categorical([r.noise for r in runs])[run],
            "seed": pd.Categorical([str(r.seed) for r in runs])[run],
        }
    )
    difficulty = rng.normal(0, SEGMENT_SD, n_seg)
    d["ter"] = rate[run] + difficulty[seg] + rng.normal(0, 0.05, len(d))
    for name, values in props.items():
        d[name] = values[seg]
        d[centred(name)] = d[name] - d[name].mean()
        cuts = np.quantile(values, [1 / 3, 2 / 3])
        d[name + "_bin"] = pd.Categorical(
            np.array(["t1", "t2", "t3"])[np.searchsorted(cuts, values[seg], side="left")]
        )
    return d


def _joint_interaction(result: LmmResult, factor: str, prop: str) -> list[tuple[str, np.ndarray]]:
    main = result.term_columns(factor)
    inter = result.term_columns(factor, prop)
    return [
        ("joint", result.contrast_matrix([{c: 1.0} for c in main + inter])),
        ("interaction", result.contrast_matrix([{c: 1.0} for c in inter])),
    ]


def models(d: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame, dict, callable]]:
    """(analysis, formula, rows, reference levels, tests of the fit) as the analyses build them."""
    systems = ["baseline", "competitor"]

    def headline_tests(r: LmmResult) -> list[tuple[str, np.ndarray]]:
        return [("baseline - competitor", r.contrast_matrix({"systemcompetitor": -1.0}))]

    out = [
        (
            "headline",
            headline_formula("ter", systems, pooled=False),
            d,
            {"system": "baseline"},
            headline_tests,
        ),
        (
            "facet_aware",
            facet_aware_formula("ter", systems, {"competitor": COMPETITOR_FACETS}),
            d,
            {"system": "baseline"},
            headline_tests,
        ),
    ]
    comp = d[d["system"] == "competitor"]
    for prop in PROPS:
        for variant, numeric in ((prop, True), (prop + "_bin", False)):
            f = runaware_property_formula(
                "ter", "system", variant, numeric, run_terms(systems, pooled=False)
            )
            out.append(
                (
                    f"conditional {variant}",
                    f,
                    d,
                    {"system": "baseline"},
                    lambda r, v=variant: _joint_interaction(r, "system", v),
                )
            )
            f = runaware_property_formula("ter", "lam", variant, numeric, RUN_TERM)
            out.append(
                (
                    f"metaparam lam x {variant}",
                    f,
                    comp,
                    {"lam": "0.1"},
                    lambda r, v=variant: _joint_interaction(r, "lam", v),
                )
            )
    return out


def _timed(result: LmmResult, L: np.ndarray, method: str) -> tuple[float, object]:
    result.ddf_core.clear_cache()
    start = time.perf_counter()
    test = result.contest(L, method)
    return time.perf_counter() - start, test


def run(scale: float) -> list[dict[str, object]]:
    import scipy.stats  # noqa: F401  (imported before timing: its first import takes seconds)

    d = make_design(scale)
    rows = []
    for analysis, formula, data, refs, tests in models(d):
        start = time.perf_counter()
        result = fit(formula, data, reml=True, reference_levels=refs)
        fit_s = time.perf_counter() - start
        for name, L in tests(result):
            t_kr, kr = _timed(result, L, KENWARD_ROGER)
            t_sat, sat = _timed(result, L, SATTERTHWAITE)
            rows.append(
                {
                    "analysis": analysis,
                    "test": name,
                    "rows": result.nobs,
                    "q": result.ddf_core.q,
                    "fit s": fit_s,
                    "KR s": t_kr,
                    "KR df": kr.dendf,
                    "KR p": kr.p_value,
                    "Satt s": t_sat,
                    "Satt df": sat.dendf,
                    "Satt p": sat.p_value,
                    "zero variance": bool(np.any(result.theta == 0.0)),
                }
            )
            print(rows[-1], flush=True)
    return rows


def scaling(sizes: tuple[int, ...] = (300, 600, 1176, 11490)) -> None:
    """Print kr_parts' time, dense reference vs structured, for the headline model with
    12 + 12 balanced runs at growing numbers of segments (dense only up to q = 1,200)."""
    from infrepro.plumbing.blas import single_threaded_blas

    rng = np.random.default_rng(0)
    formula = headline_formula("score", ["A", "B"], pooled=False)
    for n_seg in sizes:
        seg, run = np.repeat(np.arange(n_seg), 24), np.tile(np.arange(24), n_seg)
        d = pd.DataFrame(
            {
                "segment_id": [f"s{i:05d}" for i in seg],
                "run_id": [f"r{i:02d}" for i in run],
                "system": np.where(run < 12, "A", "B"),
            }
        )
        d["score"] = rng.normal(0, 0.2, n_seg)[seg] + rng.normal(0, 0.01, 24)[run]
        d["score"] += rng.normal(0, 0.05, len(d))
        result = fit(formula, d, reml=True, keep_design=n_seg < 2000)
        line = [f"{n_seg} segments, {len(d)} rows, q = {result.ddf_core.q}"]
        for how in (["dense"] if n_seg < 2000 else []) + ["structured"]:
            result.ddf_core.clear_cache()
            with single_threaded_blas():
                start = time.perf_counter()
                result.ddf_core.kr_parts(how)
                line.append(f"{how} {time.perf_counter() - start:.3f} s")
        print(" | ".join(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--scaling", action="store_true", help="dense vs structured KR only")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.scaling:
        scaling()
        return
    load = os.getloadavg()
    start = time.perf_counter()
    table = pd.DataFrame(run(args.scale))
    text = table.to_markdown(index=False, floatfmt=".4g")
    footer = (
        f"\n\n{len(table)} tests; total {time.perf_counter() - start:.0f} s; load average at start "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores.\n"
    )
    print(text + footer)
    if args.out is not None:
        args.out.write_text(text + footer)


if __name__ == "__main__":
    main()
