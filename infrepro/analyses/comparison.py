"""System comparisons (docs/method.md §4.1, §4b).

The omnibus test of all systems and the pairs of the decision's family (``analyses.comparisons``:
each system against the baseline, or every pair). The paper's GLRTs, kept and labelled as
inference conditional on the trained runs: best-vs-best (training reproducibility), all runs
(inferential reproducibility), and all runs with one shared run intercept. The run-aware
comparison the report concludes from: a REML fit with a run variance per system, the system
contrast tested by t with Kenward-Roger (or Satterthwaite) df, and, where a system's runs share
facet levels, the facet-aware sensitivity model beside it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from infrepro.analyses.common.bootstrap import bootstrap_lrt
from infrepro.analyses.common.data import MetricData, best_runs, distinct_count
from infrepro.analyses.common.effects import effect_scale
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.glrt import GlrtOutcome, holm_within, run_glrt
from infrepro.analyses.common.smalltests import contest, method_label, test_row
from infrepro.core.decisions import FAMILIES, FAMILY_ALL, choice
from infrepro.core.registry import (
    ALL_RUNS,
    ALL_RUNS_RUN_AWARE,
    BEST_VS_BEST,
    COMPARISON,
    FACET_AWARE,
    HEADLINE,
    HEADLINE_BOOTSTRAP,
)
from infrepro.core.vocabulary import (
    RUN,
    RUN_TERM,
    SEGMENT,
    SYSTEM,
    comparison_formulas,
    facet_aware_formula,
    headline_formula,
)
from infrepro.io.errors import plural
from infrepro.io.scores import incomplete_runs
from infrepro.lmm import ContrastTest, LmmResult
from infrepro.stats.effects import EffectScale, effect_label
from infrepro.stats.pvalues import format_p


@dataclass
class _Rows:
    """Rows of the tables the run-aware comparisons add to."""

    tests: list[dict[str, object]] = field(default_factory=list)
    means: list[dict[str, object]] = field(default_factory=list)
    contrasts: list[dict[str, object]] = field(default_factory=list)


def note_incomplete_runs(data: MetricData, log: FitLog) -> None:
    """List every incomplete run (admitted by ``incomplete_runs: admit``) in the diagnostics."""
    total = data.evaluation[SEGMENT].nunique()
    for run, missing in incomplete_runs(data.evaluation).items():
        log.note(
            "incomplete runs",
            run,
            f"run {run} is incomplete: it lacks {plural(missing, 'segment')} of {total}; "
            "it is not a candidate for best run",
        )


def compare_systems(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """GLRTs, run-aware tests, estimated means and contrasts of the system comparisons (every
    incomplete run noted first)."""
    note_incomplete_runs(data, log)
    out = _Rows()
    if len(data.systems) < 2:
        log.skip(COMPARISON, "", "", "only one system: nothing to compare")
        return {"glrt": pd.DataFrame(), "tests": pd.DataFrame()}
    scale = effect_scale(data, log)
    glrt_rows = _glrts(data, log, scale, out)
    _run_aware(data, log, scale, out)
    glrt = _holm_pairs(pd.DataFrame(glrt_rows))
    contrast_table = holm_within(pd.DataFrame(out.contrasts), ["metric", "analysis"])
    test_table = _holm_pairs(pd.DataFrame(out.tests))
    return {
        "glrt": glrt,
        "tests": test_table,
        "means": pd.DataFrame(out.means),
        "contrasts": contrast_table,
    }


def _subsets(systems: list[str], family: str) -> list[tuple[str, list[str]]]:
    """The comparisons: all systems (omnibus, with more than two) then the pairs of the
    decision's family: each system against the baseline (first of ``systems``; k-1 pairs) or
    every pair (k(k-1)/2). No report view or analysis reads a pair outside the family, and
    fitting every pair made the job quadratic in systems."""
    choice("analyses.comparisons", family, FAMILIES)
    subsets: list[tuple[str, list[str]]] = []
    if len(systems) > 2:
        subsets.append(("all systems", systems))
    if family == FAMILY_ALL:
        pairs = list(itertools.combinations(systems, 2))
    else:
        pairs = [(systems[0], other) for other in systems[1:]]
    subsets += [(f"{a} vs {b}", [a, b]) for a, b in pairs]
    return subsets


def _glrts(
    data: MetricData, log: FitLog, scale: EffectScale, out: _Rows
) -> list[dict[str, object]]:
    """The paper's GLRTs (best vs best, all runs, all runs with a shared run intercept) per
    comparison, their model means and contrasts added to ``out``."""
    systems = data.systems
    best = best_runs(data)
    selection = best["selected_by"].iloc[0]
    optimistic = bool(best["optimistic"].iloc[0])
    note = f"best run per system by {selection}" + ("; optimistic selection" if optimistic else "")
    settings = [
        (BEST_VS_BEST, data.rows_of(runs=list(best[RUN])), False, note),
        (ALL_RUNS, data.evaluation, False, "paper model: conditional on these trained runs"),
        (
            ALL_RUNS_RUN_AWARE,
            data.evaluation,
            True,
            f"paper model + {RUN_TERM}: one run variance shared by all systems (ML, chi-square)",
        ),
    ]
    glrt_rows: list[dict[str, object]] = []
    for analysis, rows, run_aware, text in settings:
        if run_aware and distinct_count(rows, RUN) <= len(systems):
            log.skip(
                analysis, "", "", "every system has a single run: run variance is not estimable"
            )
            continue
        h1, h0 = comparison_formulas(data.metric, run_aware)
        for subset, members in _subsets(systems, str(data.options["comparisons"])):
            omnibus = len(members) > 2
            sub = rows if omnibus else rows[rows[SYSTEM].isin(members)]
            outcome = run_glrt(
                log,
                sub,
                h1,
                h0,
                analysis=analysis,
                subset=subset,
                note=text,
                reference_levels=data.reference_levels if omnibus else {SYSTEM: members[0]},
            )
            if outcome is None:
                continue
            glrt_rows.append(outcome.row)
            if omnibus or len(systems) == 2:
                out.means += _means(data, outcome.h1, analysis, subset, sub)
            if not omnibus:
                row = _glrt_contrast(data, outcome, scale, analysis, subset, *members)
                out.contrasts.append(row)
    return glrt_rows


def _run_aware(
    data: MetricData,
    log: FitLog,
    scale: EffectScale,
    out: _Rows,
) -> None:
    """The headline (per-system run variance) and facet-aware comparisons, the family's pairs
    and (with more than two systems) omnibus."""
    for subset, members in _subsets(data.systems, str(data.options["comparisons"])):
        rows = data.rows_of(systems=members)
        n_runs = rows.groupby(SYSTEM, sort=False)[RUN].nunique()
        single = [s for s in members if n_runs.get(s, 0) < 2]
        if len(single) == len(members):
            log.skip(HEADLINE, subset, "", "every system has a single run: no run variance")
            continue
        pooled = bool(single)
        note = (
            "run variance per system"
            if not pooled
            else (
                f"{', '.join(single)} has a single run: this comparison borrows the other "
                "system's run variance (one run variance shared)"
            )
        )
        site = _Site(data, log, scale, rows, subset, out)
        site.test(headline_formula(data.metric, members, pooled), members, HEADLINE, note)
        groups = {s: shared_facets(data, rows, s) for s in members}
        groups = {s: g for s, g in groups.items() if g}
        if groups and not pooled:
            formula = facet_aware_formula(data.metric, members, groups)
            shared = "; ".join(
                f"{s}: {', '.join(f'{x} ({_n_levels(data, s, x)} levels)' for x in g)}"
                for s, g in groups.items()
            )
            note = f"facet levels as draws from their population ({shared})"
            site.test(formula, members, FACET_AWARE, note)


@dataclass(frozen=True)
class _Site:
    """One run-aware comparison: the rows of its systems and the tables it adds to."""

    data: MetricData
    log: FitLog
    scale: EffectScale
    rows: pd.DataFrame
    subset: str
    out: _Rows

    def test(self, formula: str, members: list[str], analysis: str, note: str) -> None:
        """REML fit of ``formula``; the omnibus F test of all systems equal, or the t test of
        first - second with its bootstrap LRT (headline, when asked), means and contrast."""
        first = members[0]
        fitted = self.log.fit(
            formula,
            self.rows,
            reml=True,
            analysis=analysis,
            subset=self.subset,
            reference_levels={SYSTEM: first},
        )
        if fitted is None:
            return
        if len(members) > 2:
            names = list(fitted.fixed_effects.index)
            others = [s for s in members[1:] if f"{SYSTEM}{s}" in names]
            L = fitted.contrast_matrix([{f"{SYSTEM}{s}": 1.0} for s in others])
            self._contest(fitted, L, analysis, "all systems equal", note)
            self.out.means += _means(self.data, fitted, analysis, self.subset, self.rows)
            return
        second = members[1]
        L = fitted.contrast_matrix({f"{SYSTEM}{second}": -1.0})  # first - second
        test = self._contest(fitted, L, analysis, f"{first} - {second} = 0", note)
        if test is None:
            return
        self._pair_extras(formula, members, analysis, fitted)
        self.out.contrasts.append(
            _contrast_row(
                self.data,
                self.scale,
                analysis,
                self.subset,
                first,
                second,
                test.estimate,
                test.se,
                test.log10_p,
                method_label(test),
                test.dendf,
            )
        )

    def _contest(
        self, fitted: LmmResult, L: np.ndarray, analysis: str, hypothesis: str, note: str
    ) -> ContrastTest | None:
        """Test L beta = 0 and add its row to the tests (None when the test failed)."""
        test = contest(self.log, fitted, L, analysis=analysis, subset=self.subset, prop="")
        if test is not None:
            self.out.tests.append(
                test_row(
                    self.log,
                    test,
                    fitted,
                    self.rows,
                    analysis=analysis,
                    subset=self.subset,
                    hypothesis=hypothesis,
                    note=note,
                )
            )
        return test

    def _pair_extras(
        self, formula: str, members: list[str], analysis: str, fitted: LmmResult
    ) -> None:
        """The headline's parametric-bootstrap LRT (``bootstrap_lrt`` samples) and, with two
        systems, the model means."""
        data = self.data
        samples = int(data.options["bootstrap_lrt"])
        if samples and analysis == HEADLINE:
            seed = int(data.options["bootstrap"]["seed"])
            first, second = members
            args = (formula, first, second, self.subset, samples, seed)
            self.out.tests.append(_bootstrap_row(self.log, self.rows, *args))
        if len(data.systems) == 2:
            self.out.means += _means(data, fitted, analysis, self.subset, self.rows)


def _bootstrap_row(
    log: FitLog,
    rows: pd.DataFrame,
    formula: str,
    first: str,
    second: str,
    subset: str,
    samples: int,
    seed: int,
) -> dict[str, object]:
    """The parametric-bootstrap LRT of the headline model's system effect."""
    h0 = formula.replace(" ~ system + ", " ~ 1 + ", 1)
    result = bootstrap_lrt(
        rows, formula, h0, samples=samples, seed=seed, reference_levels={SYSTEM: first}
    )
    log10_p = float(np.log10(result.p_value))
    return {
        "metric": log.metric,
        "analysis": HEADLINE_BOOTSTRAP,
        "subset": subset,
        "property": "",
        "facet": "",
        "hypothesis": f"{first} - {second} = 0",
        "model": f"{formula} vs {h0} (ML)",
        "method": result.method,
        "estimate": np.nan,
        "se": np.nan,
        "statistic": result.lr_stat,
        "numdf": result.df,
        "dendf": np.nan,
        "n_obs": len(rows),
        "n_segments": distinct_count(rows, SEGMENT),
        "n_runs": distinct_count(rows, RUN),
        "p_value": format_p(log10_p),
        "p_holm": format_p(log10_p),
        "log10_p": log10_p,
        "log10_p_holm": log10_p,
        "note": f"seed {seed}; simulated from the REML fit of H0",
    }


def shared_facets(data: MetricData, rows: pd.DataFrame, system: str) -> list[str]:
    """Facets (and pairwise crossings) whose levels a system's runs share: groups of runs
    that are more than single runs and fewer than all of them."""
    runs = data.runs[data.runs[SYSTEM] == system]
    n = len(runs)
    facets = [f for f in data.facets_of(system) if f in runs]
    groups: list[str] = []
    candidates = [(f,) for f in facets] + list(itertools.combinations(facets, 2))
    for combo in candidates:
        sub = runs[list(combo)].dropna()
        if len(sub) < n:
            continue
        levels = len(sub.drop_duplicates())
        if 2 <= levels < n:
            groups.append(":".join(combo))
    return groups


def _n_levels(data: MetricData, system: str, group: str) -> int:
    """Number of levels (or level combinations) of a shared facet group among a system's runs."""
    runs = data.runs[data.runs[SYSTEM] == system]
    return len(runs[group.split(":")].drop_duplicates())


def _holm_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """Holm-adjust pairwise tests per analysis; an omnibus test stays as it is."""
    if table.empty:
        return table
    pairwise = table["subset"] != "all systems"
    adjusted = holm_within(table[pairwise], ["metric", "analysis"])
    return pd.concat([table[~pairwise], adjusted]).sort_index()


def _means(
    data: MetricData, fitted: LmmResult, analysis: str, subset: str, rows: pd.DataFrame
) -> list[dict[str, object]]:
    counts = rows.groupby(SYSTEM).size()
    table = fitted.emmeans(SYSTEM)
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


def _glrt_contrast(
    data: MetricData,
    outcome: GlrtOutcome,
    scale: EffectScale,
    analysis: str,
    subset: str,
    first: str,
    second: str,
) -> dict[str, object]:
    table = outcome.h1.contrasts(SYSTEM)
    row = table[(table["level1"] == first) & (table["level2"] == second)].iloc[0]
    return _contrast_row(
        data,
        scale,
        analysis,
        subset,
        first,
        second,
        float(row["estimate"]),
        float(row["se"]),
        float(outcome.row["log10_p"]),
        "GLRT",
        np.nan,
    )


def _contrast_row(
    data: MetricData,
    scale: EffectScale,
    analysis: str,
    subset: str,
    first: str,
    second: str,
    difference: float,
    se: float,
    log10_p: float,
    method: str,
    df: float,
) -> dict[str, object]:
    d = scale.d(difference)
    return {
        "metric": data.metric,
        "analysis": analysis,
        "subset": subset,
        "property": "",
        "bin": "",
        "level1": first,
        "level2": second,
        "estimate": difference,
        "se": se,
        "p_value": format_p(log10_p),
        "p_holm": format_p(log10_p),
        "log10_p": log10_p,
        "log10_p_holm": log10_p,
        "p_method": method,
        "df": df,
        "effect_size": d,
        "effect_sd": scale.sd,
        "effect_label": effect_label(d),
    }
