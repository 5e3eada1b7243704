"""The headline: per metric and competitor, best vs best as the starting point, the verdict from
the run-aware test, the facet-aware and the paper's tests beside it, reliability, drivers."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.io.errors import plural
from infrepro.registry import (
    ALL_RUNS,
    BEST_VS_BEST,
    COMPARISON,
    CONDITIONAL,
    EFFECT_SCALE,
    FACET_AWARE,
    HEADLINE,
    HEADLINE_BOOTSTRAP,
    interaction_only,
    run_aware,
)
from infrepro.runcounts import holds_level, too_few_runs
from infrepro.vocabulary import (
    BIN_SUFFIX,
    CONVERGED,
    NOT_CONVERGED,
    SYSTEM,
    VCA_RUN_AWARE,
    bin_column,
)
from infrepro.vocabulary import EFFECT_SD_TEXT as EFFECT_SD

from ..formatting import fixed, flag, is_missing, is_significant, p_text, points
from ..htmltable import Cell, Column, Table, rows_table
from ..inputs import ReportSettings
from ..labels import (
    PAPER_TEST,
    analysis_label,
    better_label,
    metric_label,
    property_label,
    statistic_name,
    test_label,
)
from ..query import first, ordered, pair, select
from ..verdict import (
    Outcome,
    Verdict,
    bootstrap_note,
    classify,
    generalisation,
    paper_note,
    sentence,
)

# analysis, table label; the run-aware rows' p and df come from tests.csv, the others' from
# glrt.csv (via contrasts.csv)
COMPARISONS = (
    (BEST_VS_BEST, "best vs best (starting point)"),
    (HEADLINE, "all runs, run-aware (verdict)"),
    (FACET_AWARE, "all runs, facet-aware (other levels)"),
    (ALL_RUNS, "all runs, paper's model"),
)
RUN_AWARE = {HEADLINE: "run-aware", FACET_AWARE: "facet-aware"}
OPTIMISTIC = "optimistic selection"  # best vs best's note when runs were selected by test mean


@dataclass
class Card:
    """One metric x competitor: the verdict, its table and the short reading of the drivers."""

    metric: str
    label: str
    direction: str
    competitor: str
    verdict: Verdict
    sentence: str
    table: Table
    notes: list[str] = field(default_factory=list)
    beside: list[str] = field(default_factory=list)


def model_label(tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str) -> str:
    """``run-aware, t, KR df 18.9`` for the run-aware tests, ``paper's model, ML GLRT`` else."""
    if analysis in RUN_AWARE:
        test = first(tables["tests"], metric=metric, analysis=analysis, subset=subset)
        if test is None:
            return RUN_AWARE[analysis]
        return test_label(RUN_AWARE[analysis], "t", test["method"], test["dendf"])
    return PAPER_TEST


def converged(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, model: str
) -> bool:
    """False when diagnostics.csv says the fit of ``model`` did not converge (§4.6.1)."""
    diagnostics = tables.get("diagnostics")
    if diagnostics is None:
        return True
    row = first(diagnostics, metric=metric, analysis=analysis, subset=subset, model=model)
    return row is None or flag(row.get(CONVERGED)) is not False


def outcome(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, better: str
) -> Outcome | None:
    """One comparison as an :class:`Outcome` (None if not fitted): the run-aware ones from
    tests.csv, the paper's from contrasts.csv (its GLRT p)."""
    label = model_label(tables, metric, analysis, subset)
    if analysis in RUN_AWARE:
        test = first(tables["tests"], metric=metric, analysis=analysis, subset=subset)
        if test is None or is_missing(test["estimate"]):
            return None
        return Outcome(
            float(test["estimate"]),
            p_text(test["p_holm"]),
            float(test["log10_p_holm"]),
            better,
            label,
            float(test["dendf"]),
            str(test["note"]),
            converged(tables, metric, analysis, subset, str(test["model"])),
        )
    contrast = first(tables["contrasts"], metric=metric, analysis=analysis, subset=subset)
    if contrast is None or is_missing(contrast["estimate"]):
        return None
    return Outcome(
        float(contrast["estimate"]),
        p_text(contrast["p_holm"]),
        float(contrast["log10_p_holm"]),
        better,
        label,
    )


def _model_mean(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, system: str
) -> object:
    means = tables["means"]
    for where in (subset, "all systems"):
        row = first(
            means, metric=metric, analysis=analysis, subset=where, group=system, kind="model"
        )
        if row is not None:
            return row["estimate"]
    return None


def comparison_table(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, metric: str, competitor: str
) -> Table:
    """Best vs best, the run-aware verdict test, the facet-aware sensitivity test and the
    paper's all-runs GLRT: model, means, difference, d, p."""
    subset = pair(settings.baseline, competitor)
    headers = [
        Column(COMPARISON, analysis_label(COMPARISON), numeric=False),
        Column("test", "model and test", numeric=False, title="hover for the model formula"),
        Column("baseline", f"{settings.baseline}", title="model mean, points"),
        Column("competitor", f"{competitor}", title="model mean, points"),
        Column("difference", "Δ", title=f"{settings.baseline} − {competitor}, points"),
        Column("effect", "d", title=f"d = Δ / {EFFECT_SD} (one SD per metric)"),
        Column("p", "p", title="Holm-adjusted over pairwise comparisons when several"),
    ]
    rows = []
    for analysis, label in COMPARISONS:
        contrast = first(tables["contrasts"], metric=metric, analysis=analysis, subset=subset)
        if contrast is None:
            continue
        base = _model_mean(tables, metric, analysis, subset, settings.baseline)
        other = _model_mean(tables, metric, analysis, subset, competitor)
        if analysis in RUN_AWARE:
            test = first(tables["tests"], metric=metric, analysis=analysis, subset=subset)
            if test is None:
                continue
            detail = f"{test['model']}; {test['note']}; {plural(int(test['n_runs']), 'run')}"
            p, log10_p = test["p_holm"], float(test["log10_p_holm"])
        else:
            glrt = first(tables["glrt"], metric=metric, analysis=analysis, subset=subset)
            detail = ""
            if glrt is not None:
                runs = plural(int(glrt["n_runs"]), "run")
                detail = f"{glrt['h1']} vs {glrt['h0']}; {glrt['note']}; {runs}"
            p, log10_p = contrast["p_holm"], float(contrast["log10_p_holm"])
        rows.append(
            [
                Cell(label),
                Cell(model_label(tables, metric, analysis, subset), title=detail),
                Cell(points(base), _number(base)),
                Cell(points(other), _number(other)),
                Cell(points(contrast["estimate"], sign=True), _number(contrast["estimate"])),
                Cell(
                    f"{fixed(contrast['effect_size'], sign=True)} {contrast['effect_label']}",
                    _number(contrast["effect_size"]),
                ),
                Cell(
                    p_text(p),
                    log10_p,
                    css="p-sig" if is_significant(log10_p, settings.alpha) else "p-ns",
                ),
            ]
        )
    return rows_table(headers, rows, csv=settings.link("contrasts"))


def _number(value: object) -> float | None:
    return None if is_missing(value) else float(value)  # type: ignore[arg-type]


def effect_note(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> str:
    """``d = Δ / 1.20 points: the SD of a run's mean score, from <model> (REML)``."""
    contrast = first(tables["contrasts"], metric=metric, analysis=HEADLINE, subset=subset)
    if contrast is None:
        contrast = first(tables["contrasts"], metric=metric, subset=subset)
    if contrast is None or is_missing(contrast.get("effect_sd")):
        return ""
    fit = first(tables["diagnostics"], metric=metric, analysis=EFFECT_SCALE)
    model = f", components from {fit['model']} (REML)" if fit is not None else ""
    return (
        f"Effect sizes: d = difference / {EFFECT_SD} = Δ / {points(contrast['effect_sd'])} "
        f"points{model}: the SD that decides the run-aware tests, so Cohen's labels are in "
        "units of retraining noise; the same denominator for every d of this metric."
    )


def best_trusted(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> bool:
    """False when best vs best's runs were selected by their test mean (no dev scores)."""
    glrt = first(tables["glrt"], metric=metric, analysis=BEST_VS_BEST, subset=subset)
    return glrt is not None and OPTIMISTIC not in str(glrt["note"])


def run_counts(
    tables: dict[str, pd.DataFrame], metric: str, baseline: str, competitor: str
) -> tuple[int, int] | None:
    """(baseline runs, competitor runs) of a comparison (run_summary.csv); None if unknown."""
    rows = select(tables["run_summary"], metric=metric)
    if rows.empty:
        return None
    counts = {str(s): int(float(n)) for s, n in zip(rows[SYSTEM], rows["n_runs"], strict=True)}
    if baseline not in counts or competitor not in counts:
        return None
    return counts[baseline], counts[competitor]


def bootstrap_row(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> dict | None:
    """The headline's parametric-bootstrap LRT row of tests.csv, when requested."""
    row = first(tables["tests"], metric=metric, analysis=HEADLINE_BOOTSTRAP, subset=subset)
    return None if row is None else dict(row)


def facet_groups(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> str:
    """The shared facets of the facet-aware model, from its note."""
    test = first(tables["tests"], metric=metric, analysis=FACET_AWARE, subset=subset)
    if test is None:
        return ""
    note = str(test["note"])
    inside = note[note.find("(") + 1 : note.rfind(")")] if "(" in note else ""
    if not inside:
        return ""
    parts = [p.split(": ", 1) for p in inside.split("; ")]
    return "; ".join(
        f"{who[0]}'s runs share levels of {who[1]}" if len(who) == 2 else who[0] for who in parts
    )


def reliability_note(tables: dict[str, pd.DataFrame], metric: str, systems: list[str]) -> str:
    """``Reliability φ: baseline 0.77 (good), competitor 0.65 (moderate); φ ≥ 0.8 needs ...``"""
    parts, needs = [], []
    for system in systems:
        row = first(tables["reliability"], metric=metric, system=system, vca=VCA_RUN_AWARE)
        if row is None:
            continue
        retrain, setting = row.get("retrain_sd_points"), row.get("metaparam_sd_points")
        sd = (
            ""
            if is_missing(retrain)
            else f"; mean score SD across retraining with the same recipe {fixed(retrain)} "
            f"points, across meta-parameter settings {fixed(setting)}"
        )
        if flag(row.get(CONVERGED)) is False:  # docs/method.md §4.6.1: no φ from such a fit
            parts.append(f"{system} not estimated (VCA fit {NOT_CONVERGED}{sd})")
            continue
        parts.append(f"{system} {fixed(row['phi'])} ({row['label']}{sd})")
        if not is_missing(row["n_per_facet_for_phi_08"]):
            needs.append(
                f"{int(row['n_per_facet_for_phi_08'])} per facet level "
                f"({plural(int(row['runs_for_phi_08']), 'run')}) for {system}"
            )
    if not parts:
        return ""
    text = "Reliability φ: " + ", ".join(parts)
    return text + ("; φ ≥ 0.8 needs " + ", ".join(needs) if needs else "") + "."


def metaparameter_note(tables: dict[str, pd.DataFrame], metric: str, systems: list[str]) -> str:
    """``Meta-parameters: lambda explains 16.1% of competitor's score variance (...)``."""
    parts = []
    for system in reversed(systems):
        ranked = select(tables["importance"], metric=metric, system=system)
        vca = select(tables["variance_components"], metric=metric, system=system)
        if ranked.empty and CONVERGED in vca and not vca[CONVERGED].astype(bool).all():
            parts.append(f"no shares for {system} (VCA fit {NOT_CONVERGED})")
            continue
        if ranked.empty:
            continue
        ranked = ranked.sort_values("rank")
        top = ranked.iloc[0]
        rest = ", ".join(f"{r.facet} {fixed(r.percent, 1)}%" for r in ranked.iloc[1:].itertuples())
        parts.append(
            f"{top['facet']} explains {fixed(top['percent'], 1)}% of {system}'s score variance"
            + (f" ({rest})" if rest else "")
        )
    return "Meta-parameters: " + "; ".join(parts) + "." if parts else ""


def input_note(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    metric: str,
    competitor: str,
    bins: dict[str, list[str]],
) -> str:
    """The property with the strongest run-aware system x property interaction (Holm p over
    the metric's property tests) and the run-aware gap per bin."""
    tests = select(
        tables["tests"], metric=metric, analysis=interaction_only(run_aware(CONDITIONAL))
    )
    tests = tests[~tests["property"].str.endswith(BIN_SUFFIX)] if not tests.empty else tests
    if tests.empty:
        return ""
    strongest = tests.sort_values(["log10_p_holm", "property"]).iloc[0]
    prop = str(strongest["property"])
    label = property_label(prop)
    model = test_label(
        "run-aware", statistic_name(strongest["numdf"]), strongest["method"], strongest["dendf"]
    )
    if not is_significant(strongest["log10_p_holm"], settings.alpha):
        return (
            f"Inputs: no data property changes the difference significantly (smallest "
            f"interaction p = {strongest['p_holm']}, {label}; {model}, Holm over the "
            f"{len(tests)} property tests)."
        )
    runs = run_counts(tables, metric, settings.baseline, competitor)
    if runs is not None and not holds_level(*runs, settings.alpha):
        why = too_few_runs(settings.baseline, runs[0], competitor, runs[1], settings.alpha)
        return (
            f"Inputs: not judged: the strongest interaction ({label}, p = "
            f"{strongest['p_holm']}; {model}) rests on runs' own slopes, and {why}."
        )
    head = (
        f"Inputs: the difference depends most on {label} (interaction p = "
        f"{strongest['p_holm']}; {model}, Holm over the {len(tests)} property tests)"
    )
    cells = select(
        tables["contrasts"],
        metric=metric,
        analysis=run_aware(CONDITIONAL),
        level1=settings.baseline,
        level2=competitor,
    )
    cells = cells[cells["property"] == bin_column(prop)] if not cells.empty else cells
    if cells.empty:
        return head + "."
    order = ordered(list(cells["bin"]), bins.get(prop, []))
    sign = -1.0 if settings.better.get(metric) == "higher" else 1.0
    gaps = {b: sign * float(cells[cells["bin"] == b]["estimate"].iloc[0]) for b in order}
    winners = {b: competitor if gap > 0 else settings.baseline for b, gap in gaps.items()}
    if len(set(winners.values())) == 1:
        winner = next(iter(winners.values()))
        largest = max(gaps, key=lambda b: abs(gaps[b]))
        smallest = min(gaps, key=lambda b: abs(gaps[b]))
        return (
            f"{head}: {winner} is ahead in every {label} bin (run-aware cell means), most on "
            f"{largest} ({points(abs(gaps[largest]))} points), least on {smallest} "
            f"({points(abs(gaps[smallest]))})."
        )
    pieces = [f"{winners[b]} ahead on {b} ({points(abs(gaps[b]))})" for b in order]
    return f"{head}: " + "; ".join(pieces) + " points (run-aware cell means)."


def build(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, bins: dict[str, list[str]]
) -> list[Card]:
    """One card per metric and competitor."""
    cards = []
    for metric in settings.metrics:
        better = settings.better.get(metric, "higher")
        for competitor in settings.competitors:
            subset = pair(settings.baseline, competitor)
            best, headline, facet, paper = (
                outcome(tables, metric, a, subset, better) for a, _ in COMPARISONS
            )
            verdict = classify(
                best,
                headline,
                alpha=settings.alpha,
                competitor=competitor,
                baseline=settings.baseline,
                best_trusted=best_trusted(tables, metric, subset),
                runs=run_counts(tables, metric, settings.baseline, competitor),
            )
            beside = [
                generalisation(
                    headline,
                    facet,
                    settings.alpha,
                    settings.baseline,
                    competitor,
                    facet_groups(tables, metric, subset),
                ),
                bootstrap_note(bootstrap_row(tables, metric, subset)),
                paper_note(paper, settings.baseline, competitor),
            ]
            notes = [
                effect_note(tables, metric, subset),
                reliability_note(tables, metric, settings.systems),
                metaparameter_note(tables, metric, settings.systems),
                input_note(tables, settings, metric, competitor, bins),
            ]
            cards.append(
                Card(
                    metric=metric,
                    label=metric_label(metric),
                    direction=better_label(better),
                    competitor=competitor,
                    verdict=verdict,
                    sentence=sentence(best, headline, settings.baseline, competitor),
                    table=comparison_table(tables, settings, metric, competitor),
                    notes=[n for n in notes if n],
                    beside=[b for b in beside if b],
                )
            )
    return cards
