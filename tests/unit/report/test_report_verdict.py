"""The headline card's wording from a decision record: the badge is the record's verdict with
its estimand; best vs best is the seeds' reproduction, read as surviving only when
dev-selected; generalising to other levels is a separate line, never a downgrade; the paper's
GLRT and the bootstrap are labelled beside it (docs/method.md §4b.6, §4c.11)."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from decision_records import NO_FACET_AWARE, p_fields
from decision_records import record as make_record

from infrepro.analyses.decision.summary import few_runs_note
from infrepro.core.decisions import (
    NOT_SHOWN,
    NOT_SHOWN_TO_SURVIVE,
    OUTPUTS,
    REVERSED,
    SURVIVES,
    VS_OUTPUT,
    PairDecision,
    comparison_of,
)
from infrepro.core.registry import CONDITIONAL, interaction_only, run_aware
from infrepro.core.vocabulary import NOT_CONVERGED
from infrepro.report.decisions import sentence, verdict_text
from infrepro.report.inputs import ReportSettings
from infrepro.report.sections.headline import input_note
from infrepro.report.verdict import (
    OPTIMISTIC_BEST,
    PAPER_GLRT_LEVEL,
    badge,
    bootstrap_note,
    generalisation,
    paper_note,
    survival_line,
)


def record(**changes) -> PairDecision:
    """comp better than bl by 3.00 points over retraining, p 0.005 (one comparison, 5 runs each),
    best vs best surviving; no facet-aware reading, no minimum effect."""
    base = dict(
        runs_reference=5,
        runs_system=5,
        improvement=0.03,
        se=0.008,
        df=8.0,
        statistic=3.75,
        critical=2.31,
        lower=0.0115,
        upper=0.0485,
        **p_fields("0.005", -2.3),
        verdict="better",
        **NO_FACET_AWARE,
        survival=SURVIVES,
        best_vs_best=0.02,
        min_effect=math.nan,
        power=math.nan,
        model="ter ~ system + ...",
    )
    return make_record(**{**base, **changes})


def test_the_badge_is_the_verdict_with_its_winner_and_tone() -> None:
    better = badge(record(), "said")
    assert (better.badge, better.tone, better.direction) == ("comp better", "good", 1)
    worse = badge(record(verdict="worse", improvement=-0.03), "said")
    assert (worse.badge, worse.tone, worse.direction) == ("bl better", "bad", -1)
    assert badge(record(verdict=NOT_SHOWN), "").badge == NOT_SHOWN
    assert badge(record(verdict=NOT_CONVERGED), "").tone == "warn"
    assert badge(record(), "the record's sentence").conclusion == "the record's sentence"


def test_the_badge_names_a_single_output() -> None:
    single = record(runs_reference=1)
    assert badge(single, "").badge == "comp better (vs bl's single output)"
    reversed_ = record(runs_reference=1, verdict="worse", improvement=-0.03)
    assert badge(reversed_, "").badge == "bl's single output better"
    outputs = record(runs_reference=1, runs_system=1)
    assert badge(outputs, "").badge == "comp's output better"
    assert verdict_text(outputs) == "outputs better"
    assert comparison_of(1, 1) == OUTPUTS and comparison_of(3, 1) == VS_OUTPUT


def test_best_vs_best_survives_only_when_dev_selected() -> None:
    assert "the same order survives retraining" in survival_line(record(), "TER")
    assert "order is reversed" in survival_line(record(survival=REVERSED), "TER")
    shown = survival_line(record(survival=NOT_SHOWN_TO_SURVIVE), "TER")
    assert "no difference is shown" in shown
    untrusted = survival_line(record(survival=""), "TER")  # test-selected: no evidence
    assert OPTIMISTIC_BEST in untrusted and "surviv" not in untrusted
    assert survival_line(record(runs_reference=1, runs_system=1, survival=""), "TER") == ""


def test_generalising_is_a_separate_line_never_a_downgrade() -> None:
    few = record(facet_aware_p="0.46", log10_facet_aware_p=math.log10(0.46), facet_aware_df=1.6)
    shared = "comp's runs share levels of lambda (2 levels)"
    text = generalisation(few, shared)
    assert text.startswith(
        f"Generalising to other levels of the shared facets: not judged ({shared}; "
        "facet-aware model, df 1.6, p = 0.46)"
    )
    assert "says nothing about the facets' effect" in text
    enough = generalisation(dataclasses.replace(few, facet_aware_p="0.3", facet_aware_df=12.0))
    assert ": not shown (facet-aware model, df 12, p = 0.3)." in enough
    both = generalisation(dataclasses.replace(few, facet_aware_p="0.01", generalises=True))
    assert "comp better beyond the settings that were run" in both
    assert generalisation(record()) == ""
    assert badge(few, "").badge == "comp better"  # the facet-aware reading never changes it


def test_sentences_name_the_estimand_the_interval_and_the_family() -> None:
    text = sentence(record(family_size=3, p_adjusted="0.012"), "TER")
    assert text.startswith("comp better than bl by 3.00 [1.15, 4.85] TER points (simultaneous")
    assert "over retraining" in text and "p = 0.012 (max-t over 3 comparisons" in text
    worse = sentence(record(verdict="worse", improvement=-0.03, lower=-0.0485, upper=-0.0115), "T")
    assert "comp worse than bl by 3.00 [1.15, 4.85] T points" in worse  # the size's interval
    none = sentence(record(verdict=NOT_SHOWN, lower=-0.001, upper=0.06), "TER")
    assert none.startswith("No difference shown between comp and bl: improvement +3.00")
    assert "Holm over 1" not in sentence(record(), "TER")  # one comparison: nothing adjusted


def test_the_bootstrap_lrt_is_shown_with_its_failed_refits() -> None:
    row = {
        "method": "parametric bootstrap (98 of 100 samples; 2 refits failed)",
        "model": "ter ~ system + ... vs ter ~ 1 + ... (ML)",
        "p_value": "0.0297",
    }
    text = bootstrap_note(row)
    assert "2 refits failed" in text and "p = 0.0297" in text
    assert bootstrap_note(None) == ""


def test_paper_glrt_is_labelled_with_its_measured_level() -> None:
    text = paper_note(-0.0384, "2.5e-49", "paper's model, ML GLRT", "lower", ("bl", "comp"))
    assert text.startswith("All runs, paper's model, conditional on these trained runs (ML GLRT)")
    assert "bl ahead by 3.84 points" in text
    assert PAPER_GLRT_LEVEL in text and "41-54 %" in PAPER_GLRT_LEVEL
    up = paper_note(-0.0384, "2.5e-49", "paper's model, ML GLRT", "higher", ("bl", "comp"))
    assert "comp ahead by 3.84 points" in up  # level1 − level2 < 0 on ROUGE: comp higher


def test_a_significant_interaction_on_too_few_runs_is_not_judged() -> None:
    """The card's input line names no property effect when the record says the run counts
    cannot hold the level (10 vs 2 runs; the summary analysis decides it, ``few_runs_note``),
    and says how many runs would; 10 vs 4 keeps the claim."""
    tests = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": interaction_only(run_aware(CONDITIONAL)),
                "property": "length",
                "log10_p_holm": -4.0,
                "p_holm": "0.0001",
                "numdf": 1.0,
                "method": "Kenward-Roger",
                "dendf": 9.0,
            }
        ]
    )
    settings = ReportSettings("toy", "bl", ["bl", "comp"], ["ter"], {"ter": "lower"})
    tables = {"tests": tests, "contrasts": pd.DataFrame()}
    for runs, judged in (((10, 2), False), ((10, 4), True)):
        few = few_runs_note("bl", runs[0], "comp", runs[1], 0.05)
        pair = record(runs_reference=runs[0], runs_system=runs[1], few_runs=few)
        text = input_note(tables, settings, pair, {})
        assert ("depends most on" in text) == judged, text
        assert ("not judged" in text) != judged, text
        if not judged:
            assert "4 runs of comp would hold it" in text
