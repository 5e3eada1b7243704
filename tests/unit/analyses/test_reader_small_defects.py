"""Small defects a reader trips over (the fourth adversarial pass): each test is named after its
case. Numbers printed readably, each p labelled with what it is, an interval on very few df
said to be very uncertain, the header's run counts without the analyses that used to give them,
a declared final look said as such, an improvement read at an earlier look marked where the
row's other cells use all runs, the run-SD ratio of a system whose runs are all equal, a
conditional analysis that drops rows is a note, and the options each rule reads."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from decision_records import record
from synthetic_systems import frame_data

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.pairtests import RunVariance, t_test, variances
from infrepro.analyses.decision.summary import Settings, decide, fit_decision_model, summary_tables
from infrepro.core.decisions import FAMILY_BASELINE, PLAN
from infrepro.core.registry import SUMMARY, rule_options
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import SYSTEM
from infrepro.report import REPORT_TABLES, ReportSettings
from infrepro.report.decisions import book_of, records_of, sentence
from infrepro.report.paper import latex_table, markdown_table
from infrepro.report.sections import decision, header
from infrepro.report.sections.looks import history_table
from infrepro.validation.few_runs import METRIC
from infrepro.validation.looks import look_experiment


def _settings(**changes) -> ReportSettings:
    base = {
        "name": "toy",
        "baseline": "A",
        "systems": ["A", "B"],
        "metrics": [METRIC],
        "better": {METRIC: "higher"},
        "config": {"experiment": "toy"},
    }
    return ReportSettings(**{**base, **changes})


def _looks(sequential: dict, last: int = 6, effect: float = 0.0, seed: int = 21):
    """A pair with looks at 3, 4, ... ``last`` runs per system, decided with ``sequential``."""
    data = look_experiment(3, last, 1.0, effect, seed)
    options = with_defaults("analyses", {"sequential": sequential})
    options["alpha"] = 0.05
    data = replace(data, options=options)
    found = summary_tables(data, FitLog(METRIC))
    records = [r for r in records_of(found["decisions"]) if r.family == FAMILY_BASELINE]
    return data, found, records


# -- df printed readably -------------------------------------------------------------------------
def test_df_of_thousands_prints_as_a_number_not_2_28e_03() -> None:
    """The test's name (decisions.csv ``test``, quoted in the sentences) wrote ``df 2.28e+03``;
    the report writes counts as plain digits, and so a large df."""
    name = t_test(1.0, 0.5, 2281.7, "Kenward-Roger").name
    assert name == "t with Kenward-Roger df 2282", name
    assert t_test(1.0, 0.5, 18.87, "Kenward-Roger").name == "t with Kenward-Roger df 18.9"
    assert t_test(1.0, 0.5, 999.7, "Kenward-Roger").name.endswith("df 1000")
    text = sentence(record(df=2281.7, test=name), "TER")
    assert "e+03" not in text and "df 2282" in text


# -- each p labelled with what it is -------------------------------------------------------------
def test_a_looks_own_p_and_the_records_repeated_p_are_not_both_labelled_p() -> None:
    """At a look the record's p is the repeated p of the plan and the look's own test has its
    own p; the decision table, the paper table and the look history each name theirs."""
    data, found, records = _looks({"max_runs": 8}, effect=2.0, seed=11)
    (plan,) = records
    assert plan.sequential == PLAN
    settings = _settings()
    rows = found["summary"].assign(metric=METRIC)
    paired = decision.decision_rows(rows, book_of(records), METRIC, "A")
    table = decision.table_of(paired, settings, METRIC)
    p_header = next(c.label for c in table.headers if c.key == "p")
    assert p_header.startswith("repeated p"), p_header
    history = history_table(found["looks"], records, settings)
    look_header = next(c.label for c in history.headers if c.key == "p")
    assert look_header != "p" and "repeated" not in look_header, look_header
    md = markdown_table(rows, records, label="Y", better="higher", alpha=0.05)
    assert "| repeated p (Bonferroni" in md.splitlines()[0] or "| repeated p |" in md


# -- very few df ---------------------------------------------------------------------------------
def test_an_interval_on_1_06_df_says_it_is_very_uncertain() -> None:
    """+2.90 [−137.02, 142.83] at df 1.06: the sentence and the table's notes say how little
    such an interval says, and why; an interval on many df gets no such word."""
    few = record(
        improvement=0.029,
        lower=-1.3702,
        upper=1.4283,
        df=1.06,
        critical=11.6,
        test="t with Kenward-Roger df 1.06",
        verdict="no difference shown",
        runs_reference=1,
        runs_system=2,
    )
    text = sentence(few, "TER")
    assert "very uncertain" in text and "df 1.06" in text, text
    paired = [(pd.Series({SYSTEM: "comp", "note": ""}), few)]
    assert any("very uncertain" in n for n in decision._notes(paired))
    assert "very uncertain" not in sentence(record(), "TER")


# -- the header's runs ---------------------------------------------------------------------------
def test_header_counts_runs_when_only_the_summary_analysis_runs() -> None:
    """run_summary.csv is the classical analysis's; with analyses.run [summary] the header read
    "? runs" although summary.csv holds every system's runs."""
    tables = {name: pd.DataFrame() for name in REPORT_TABLES}
    tables["summary"] = pd.DataFrame(
        {"metric": ["ter", "ter"], SYSTEM: ["bl", "comp"], "runs": [1, 6]}
    )
    settings = _settings(baseline="bl", systems=["bl", "comp"], metrics=["ter"])
    facts = dict(header.build(tables, settings).facts)
    assert "?" not in facts["Systems"], facts["Systems"]
    assert facts["Systems"] == "bl (baseline): 1 run; comp: 6 runs"


# -- a declared final look -----------------------------------------------------------------------
def test_final_true_is_a_declared_final_look_not_the_planned_maximum() -> None:
    """``final: true`` at 6 of 12 runs: the plan stopped because the user declared the look
    final, not at the planned maximum."""
    _, _, (plan,) = _looks({"max_runs": 12, "final": True})
    assert not plan.directional
    assert "planned maximum" not in plan.decision, plan.decision
    assert "declared final" in plan.decision and "6 of 12 runs per system" in plan.decision
    _, _, (reached,) = _looks({"max_runs": 6})
    assert "planned maximum" in reached.decision


# -- an improvement read at an earlier look ------------------------------------------------------
def test_max_runs_below_the_runs_present_marks_the_earlier_looks_improvement() -> None:
    """``max_runs: 5`` with 6 runs per system: the verdict is the look at 5 runs (§4e.3), the
    means use all 6; the paper row marks the improvement and its caption says at which look."""
    _, found, (plan,) = _looks({"max_runs": 5})
    assert plan.look_runs_system == 5 and plan.runs_system == 6
    rows = found["summary"].assign(metric=METRIC)
    for text in (
        latex_table(rows, [plan], label="Y", stem="y", better="higher", alpha=0.05),
        markdown_table(rows, [plan], label="Y", better="higher", alpha=0.05),
    ):
        marked = next(line for line in text.splitlines() if f" {plan.system} " in line)
        assert "\u2020" in marked or r"\dag{}" in marked, marked
        assert "look 3 (5 runs per system)" in text, text[-900:]


# -- the run-SD ratio of constant scores ---------------------------------------------------------
def _constant(runs: dict[str, int], constant: str) -> MetricData:
    rng = np.random.default_rng(7)
    segments = rng.normal(0, 0.2, 30)
    rows, run_rows = [], []
    for system, n in runs.items():
        for r in range(n):
            run = f"{system}_{r}"
            run_rows.append({"run_id": run, "system": system})
            values = (
                np.full(30, 0.5)
                if system == constant
                else 0.4 + segments + rng.normal(0, 0.02) + rng.normal(0, 0.05, 30)
            )
            rows += [
                {"run_id": run, "system": system, "segment_id": f"s{s}", "y": v}
                for s, v in enumerate(values)
            ]
    return frame_data(rows, run_rows)


def test_a_system_with_constant_scores_has_a_run_sd_ratio_of_zero_not_0_97() -> None:
    """B's runs score the same on every segment: its run means do not vary, and the ratio of
    its run-mean SD to A's is 0 with the interval [0, 0], not 0.97 (the pooled residual of M
    that sets a floor under B's run-mean variance at a boundary fit says nothing of B's runs);
    the record says the ratio lies outside the band the calibrated test assumes."""
    result = decide(_constant({"A": 4, "B": 4}, "B"), FitLog("y"), Settings())
    for r in result.records:
        assert r.run_sd_ratio == 0.0, r.run_sd_ratio
        assert (r.run_sd_ratio_lower, r.run_sd_ratio_upper) == (0.0, 0.0)
        assert "outside the band" in r.note
    flipped = decide(_constant({"A": 4, "B": 4}, "A"), FitLog("y"), Settings())
    assert all(math.isinf(r.run_sd_ratio) for r in flipped.records)
    # away from the boundary the run means' SDs are M's run-mean SDs (REML is ANOVA in a
    # balanced design): the ratio shown is the one M's variances give
    data = _constant({"A": 4, "B": 5}, "none")
    model = fit_decision_model(data, FitLog("y"))
    options = RunVariance.of(with_defaults("analyses", {})["run_variance"])
    var = variances(model.fit, data, model.runs, options)
    (r,) = [r for r in decide(data, FitLog("y"), Settings()).records if r.family == FAMILY_BASELINE]
    expected = math.sqrt(var.observed["B"] / var.observed["A"])
    assert r.run_sd_ratio == pytest.approx(expected, rel=1e-5)


# -- diagnostics: a note is not a skip -----------------------------------------------------------
def test_conditional_analysis_that_leaves_out_rows_is_a_note_not_skipped() -> None:
    """Rows without a value of the property are left out of its models, which are fitted:
    diagnostics.csv said "skipped" of an analysis whose models it lists as fitted."""
    from infrepro.analyses.conditional import conditional_analyses

    rng = np.random.default_rng(3)
    rows, run_rows = [], []
    length = rng.integers(5, 40, 20).astype(float)
    length[:3] = np.nan
    for system in ("A", "B"):
        for r in range(3):
            run = f"{system}_{r}"
            run_rows.append({"run_id": run, "system": system})
            rows += [
                {
                    "run_id": run,
                    "system": system,
                    "segment_id": f"s{s}",
                    "length": length[s],
                    "y": 0.5 + 0.01 * (system == "B") + rng.normal(0, 0.05),
                }
                for s in range(20)
            ]
    data = frame_data(rows, run_rows, properties=["length"], options=with_defaults("analyses", {}))
    log = FitLog("y")
    conditional_analyses(data, log)
    diagnostics = log.diagnostics()
    about = diagnostics[diagnostics["reason"].str.contains("left out", na=False)]
    assert len(about) == 1 and about["property"].iloc[0] == "length"
    assert about["status"].iloc[0] == "note", about.to_dict("records")
    fitted = diagnostics[
        (diagnostics["property"] == "length") & (diagnostics["status"] == "fitted")
    ]
    assert not fitted.empty


# -- what each rule reads ------------------------------------------------------------------------
def test_changing_bootstrap_samples_does_not_rerun_summary() -> None:
    """The summary analysis reads the bootstrap's seed (its rank draws), not its number of
    samples: its rule's params hold only what it reads, so that samples changes rerun no
    summary job."""
    analyses = with_defaults("analyses", {"bootstrap": {"samples": 500, "seed": 4}})
    options = rule_options(SUMMARY, analyses, {"alpha": 0.05})
    assert options["bootstrap"] == {"seed": 4}, options["bootstrap"]
    more = with_defaults("analyses", {"bootstrap": {"samples": 5000, "seed": 4}})
    assert rule_options(SUMMARY, more, {"alpha": 0.05}) == options
