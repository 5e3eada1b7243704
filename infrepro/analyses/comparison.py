"""System comparisons: best-vs-best (training reproducibility) and all runs (inferential
reproducibility), the paper's model and the run-aware model, omnibus and pairwise GLRTs."""

from __future__ import annotations

import itertools

import pandas as pd

from .data import RUN, SYSTEM, MetricData, best_runs
from .effects import effect_label, effect_size
from .fitlog import FitLog
from .glrt import GlrtOutcome, holm_within, run_glrt

SEGMENT_TERM = "(1|segment_id)"
RUN_TERM = "(1|run_id)"


def formulas(metric: str, run_aware: bool) -> tuple[str, str]:
    """H1 and H0 of the system comparison (paper eq. 3-4), optionally with a run intercept."""
    random = SEGMENT_TERM + (f" + {RUN_TERM}" if run_aware else "")
    return f"{metric} ~ system + {random}", f"{metric} ~ 1 + {random}"


def compare_systems(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """GLRTs, estimated means and contrasts of the three system comparisons."""
    glrt_rows: list[dict[str, object]] = []
    means: list[dict[str, object]] = []
    contrasts: list[dict[str, object]] = []
    best = best_runs(data)
    selection = best["selected_by"].iloc[0]
    optimistic = bool(best["optimistic"].iloc[0])
    note = f"best run per system by {selection}" + ("; optimistic selection" if optimistic else "")
    settings = [
        ("best_vs_best", data.rows_of(runs=list(best[RUN])), False, note),
        ("all_runs", data.evaluation, False, "paper model: runs treated as fixed"),
        ("all_runs_run_aware", data.evaluation, True, "run-aware model: + (1|run_id)"),
    ]
    systems = data.systems
    for analysis, rows, run_aware, text in settings:
        if len(systems) < 2:
            log.skip(analysis, "", "", "only one system: nothing to compare")
            continue
        if run_aware and rows[RUN].nunique() <= len(systems):
            log.skip(
                analysis, "", "", "every system has a single run: run variance is not estimable"
            )
            continue
        h1, h0 = formulas(data.metric, run_aware)
        if len(systems) > 2:
            omnibus = run_glrt(
                log,
                rows,
                h1,
                h0,
                analysis=analysis,
                subset="all systems",
                note=text,
                reference_levels=data.reference_levels,
            )
            if omnibus is not None:
                glrt_rows.append(omnibus.row)
                means += _means(data, omnibus, analysis, "all systems", rows)
        for first, second in itertools.combinations(systems, 2):
            subset = f"{first} vs {second}"
            pair_rows = rows[rows[SYSTEM].isin([first, second])]
            outcome = run_glrt(
                log,
                pair_rows,
                h1,
                h0,
                analysis=analysis,
                subset=subset,
                note=text,
                reference_levels={SYSTEM: first},
            )
            if outcome is None:
                continue
            glrt_rows.append(outcome.row)
            if len(systems) == 2:
                means += _means(data, outcome, analysis, subset, pair_rows)
            contrasts.append(_contrast(data, outcome, analysis, subset, first, second))
    glrt = _holm_pairs(pd.DataFrame(glrt_rows))
    contrast_table = holm_within(pd.DataFrame(contrasts), ["metric", "analysis"])
    return {"glrt": glrt, "means": pd.DataFrame(means), "contrasts": contrast_table}


def _holm_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """Holm-adjust pairwise GLRTs per analysis; an omnibus test stays as it is."""
    if table.empty:
        return table
    pairwise = table["subset"] != "all systems"
    adjusted = holm_within(table[pairwise], ["metric", "analysis"])
    return pd.concat([table[~pairwise], adjusted]).sort_index()


def _means(
    data: MetricData, outcome: GlrtOutcome, analysis: str, subset: str, rows: pd.DataFrame
) -> list[dict[str, object]]:
    counts = rows.groupby(SYSTEM).size()
    table = outcome.h1.emmeans(SYSTEM)
    return [
        {
            "metric": data.metric,
            "analysis": analysis,
            "subset": subset,
            "property": "",
            "bin": "",
            "group": level,
            "kind": "model",
            "x": float("nan"),
            "estimate": estimate,
            "se": se,
            "n_obs": int(counts.get(level, 0)),
        }
        for level, estimate, se in table[["level", "estimate", "se"]].itertuples(index=False)
    ]


def _contrast(
    data: MetricData, outcome: GlrtOutcome, analysis: str, subset: str, first: str, second: str
) -> dict[str, object]:
    table = outcome.h1.contrasts(SYSTEM)
    row = table[(table["level1"] == first) & (table["level2"] == second)].iloc[0]
    difference = float(row["estimate"])
    d = effect_size(difference, outcome.h1.sigma)
    return {
        "metric": data.metric,
        "analysis": analysis,
        "subset": subset,
        "property": "",
        "bin": "",
        "level1": first,
        "level2": second,
        "estimate": difference,
        "se": float(row["se"]),
        "p_value": outcome.row["p_value"],
        "p_holm": outcome.row["p_value"],
        "log10_p": outcome.row["log10_p"],
        "log10_p_holm": outcome.row["log10_p"],
        "p_method": "GLRT",
        "effect_size": d,
        "effect_label": effect_label(d),
    }
