"""The headline verdict: direction-aware advantage; the badge follows the per-system run-aware
test only and states its estimand; generalising to other levels is a separate line; best vs best
is read only when dev-selected; the facet-aware and paper's results are shown beside it."""

from __future__ import annotations

import math

import pytest

from infrepro.report.verdict import (
    PAPER_GLRT_LEVEL,
    UNTRUSTED_BEST,
    Outcome,
    bootstrap_note,
    classify,
    generalisation,
    paper_note,
    sentence,
    who_is_better,
)

SIG = math.log10(1e-6)
NS = math.log10(0.3)
RUN_AWARE = "run-aware, t, KR df 18.9"
BORROWED = (
    "bl has a single run: this comparison borrows the other system's run variance "
    "(one run variance shared)"
)


def lower(difference: float, log10_p: float = SIG, **extra) -> Outcome:
    """An outcome on a lower-is-better metric such as TER (difference = baseline - competitor)."""
    return Outcome(difference, f"{10**log10_p:.4g}", log10_p, "lower", **extra)


def higher(difference: float, log10_p: float = SIG, **extra) -> Outcome:
    return Outcome(difference, f"{10**log10_p:.4g}", log10_p, "higher", **extra)


def test_advantage_follows_the_metrics_direction() -> None:
    # TER: baseline 0.45, competitor 0.42 -> baseline - competitor = +0.03, competitor better
    assert lower(0.03).advantage == pytest.approx(0.03)
    # ROUGE: baseline 0.45, competitor 0.42 -> +0.03, baseline better
    assert higher(0.03).advantage == pytest.approx(-0.03)
    assert who_is_better(lower(0.0317), "bl", "comp") == "comp better by 3.17 points"
    assert who_is_better(higher(0.0317), "bl", "comp") == "bl better by 3.17 points"


def test_improvement_that_holds_in_the_run_aware_test_survives() -> None:
    verdict = classify(higher(-0.02), higher(-0.01, math.log10(0.01)), 0.05, "comp", "bl")
    assert (verdict.badge, verdict.tone, verdict.direction) == ("survives retraining", "good", 1)
    assert "comp is better" in verdict.conclusion and "run-aware" in verdict.conclusion
    assert "retrained with this recipe, at these meta-parameter settings" in verdict.conclusion


def test_significant_in_the_wrong_direction_does_not_survive() -> None:
    # best vs best: comp better; run-aware: bl better, significant
    verdict = classify(lower(0.03), lower(-0.04, math.log10(0.022)), 0.05, "comp", "bl")
    assert (verdict.badge, verdict.tone) == ("does not survive", "bad")
    assert "bl is better" in verdict.conclusion
    # ROUGE: a positive baseline - competitor difference is the baseline's advantage
    verdict = classify(higher(-0.03), higher(0.034, math.log10(0.023)), 0.05, "comp", "bl")
    assert verdict.badge == "does not survive" and "bl is better" in verdict.conclusion


def test_no_directional_claim_without_a_significant_run_aware_test() -> None:
    # The paper's GLRT would say "bl better" at p = 1e-49; the run-aware test decides.
    verdict = classify(lower(0.03), lower(-0.04, NS), 0.05, "comp", "bl")
    assert (verdict.badge, verdict.tone) == ("not shown to survive", "warn")
    assert "no significant difference when retrained with this recipe" in verdict.conclusion
    assert "is better" not in verdict.conclusion and verdict.direction == 0
    # an improvement the run-aware test supports only at p = 0.06 is not claimed either
    verdict = classify(lower(0.03), lower(0.03, math.log10(0.06)), 0.05, "comp", "bl")
    assert verdict.badge == "not shown to survive"


def test_without_a_best_vs_best_improvement_the_run_aware_test_still_speaks() -> None:
    assert classify(higher(0.02), higher(0.01), 0.05, "comp", "bl").badge == "bl better"
    assert classify(higher(-0.02, NS), higher(-0.01), 0.05, "comp", "bl").badge == "comp better"
    none = classify(higher(0.02), higher(0.01, NS), 0.05, "comp", "bl")
    assert (none.badge, none.tone) == ("no significant difference", "neutral")
    assert classify(None, higher(0.01, NS), 0.05).badge == "no significant difference"


def test_no_run_aware_test_no_verdict() -> None:
    verdict = classify(lower(0.03), None, 0.05)
    assert (verdict.badge, verdict.tone) == ("not tested", "neutral")
    assert classify(None, None, 0.05).badge == "not tested"


def test_alpha_is_respected() -> None:
    at_004 = math.log10(0.04)
    assert classify(lower(0.02), lower(0.02, at_004), 0.05).badge == "survives retraining"
    assert classify(lower(0.02), lower(0.02, at_004), 0.01).badge == "not shown to survive"


def test_a_borrowed_run_variance_is_said_next_to_the_claim() -> None:
    headline = lower(0.02, note=BORROWED, model=RUN_AWARE)
    assert headline.borrows and not lower(0.02, note="run variance per system").borrows
    verdict = classify(lower(0.03), headline, 0.05, "comp", "bl")
    assert verdict.badge == "survives retraining"
    assert verdict.conclusion.endswith(f"Caution: {BORROWED}.")
    weak = classify(lower(0.03), lower(0.02, NS, note=BORROWED), 0.05, "comp", "bl")
    assert BORROWED in weak.conclusion


def test_sentence_names_each_model() -> None:
    text = sentence(
        lower(0.0317, model="paper's model, ML GLRT"),
        lower(-0.0384, math.log10(0.02228), model=RUN_AWARE),
        "bl",
        "comp",
    )
    assert text.startswith(
        "Best vs best (paper's model, ML GLRT): comp better by 3.17 points, p = 1e-06"
    )
    assert f"all runs ({RUN_AWARE}): bl better by 3.84 points, p = 0.02228." in text


def test_generalising_is_a_separate_line_never_a_downgrade() -> None:
    headline = lower(-0.0384, math.log10(0.02228), model=RUN_AWARE)
    facet = lower(-0.0384, math.log10(0.46), model="facet-aware, t, KR df 1.6", df=1.6)
    shared = "comp's runs share levels of lambda (2 levels)"
    text = generalisation(headline, facet, 0.05, "bl", "comp", shared)
    assert text.startswith(
        f"Generalising to other levels of the shared facets: not judged ({shared}; "
        "facet-aware model, df 1.6, p = 0.46)"
    )
    assert "says nothing about the facets' effect" in text
    # enough df and still not significant: not shown (no "not judged")
    enough = generalisation(headline, lower(-0.0384, math.log10(0.3), df=12.0), 0.05)
    assert ": not shown (facet-aware model, df 12, p = 0.3)." in enough
    both = generalisation(headline, lower(-0.0384, math.log10(0.01), df=8.0), 0.05, "bl", "comp")
    assert "bl better beyond the settings that were run" in both
    assert generalisation(headline, None, 0.05) == ""


def test_the_facet_aware_model_never_changes_the_badge() -> None:
    """Shared facet levels: the badge states its estimand (these settings) and stands."""
    up = lower(0.04, math.log10(0.01), model=RUN_AWARE)
    verdict = classify(lower(0.03), up, 0.05, "comp", "bl")
    assert verdict.badge == "survives retraining" and "for these settings" not in verdict.badge
    assert "at these meta-parameter settings" in verdict.conclusion
    assert "facet" not in verdict.conclusion.lower()


def test_untrusted_best_vs_best_never_presupposes_an_improvement() -> None:
    """Best runs selected by test mean: no 'survives' / 'not shown to survive'."""
    for head, badge in (
        (lower(0.02, NS), "no significant difference"),
        (lower(0.02), "comp better"),
        (lower(-0.02), "bl better"),
    ):
        verdict = classify(lower(0.03), head, 0.05, "comp", "bl", best_trusted=False)
        assert verdict.badge == badge
        assert "surviv" not in verdict.conclusion and UNTRUSTED_BEST in verdict.conclusion
    trusted = classify(lower(0.03), lower(0.02, NS), 0.05, "comp", "bl")
    assert trusted.badge == "not shown to survive"


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
    text = paper_note(lower(-0.0384, -48.6, model="paper's model, ML GLRT"), "bl", "comp")
    assert text.startswith("All runs, paper's model, conditional on these trained runs (ML GLRT)")
    assert "bl better by 3.84 points" in text
    assert PAPER_GLRT_LEVEL in text and "41-54 %" in PAPER_GLRT_LEVEL
    assert paper_note(None, "bl", "comp") == ""


def test_a_significant_test_on_too_few_runs_names_no_winner() -> None:
    verdict = classify(lower(0.03), lower(0.02), 0.05, "comp", "bl", runs=(10, 2))
    assert verdict.badge == "not judged: too few runs" and verdict.direction == 0
    assert "rejects up to 12 % of true nulls" in verdict.conclusion
    assert "4 runs of comp would hold it" in verdict.conclusion
    quiet = classify(lower(0.03), lower(0.02, NS), 0.05, "comp", "bl", runs=(10, 2))
    assert quiet.badge == "not shown to survive"  # no claim, nothing to withhold


def test_run_counts_that_hold_the_level_keep_the_claim() -> None:
    for runs in [(10, 4), (3, 3), (2, 2), (5, 3), (1, 10)]:
        verdict = classify(lower(0.03), lower(0.02), 0.05, "comp", "bl", runs=runs)
        assert verdict.badge == "survives retraining", runs


def test_a_significant_interaction_on_too_few_runs_is_not_judged() -> None:
    """The card's input line names no property effect when the run counts cannot hold the
    level (10 vs 2 runs), and says how many runs would; 10 vs 4 keeps the claim."""
    import pandas as pd

    from infrepro.registry import CONDITIONAL, interaction_only, run_aware
    from infrepro.report.inputs import ReportSettings
    from infrepro.report.sections.headline import input_note

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
    for runs, judged in (((10, 2), False), ((10, 4), True)):
        summary = pd.DataFrame(
            [
                {"metric": "ter", "system": "bl", "n_runs": str(runs[0])},
                {"metric": "ter", "system": "comp", "n_runs": str(runs[1])},
            ]
        )
        tables = {"tests": tests, "run_summary": summary, "contrasts": pd.DataFrame()}
        text = input_note(tables, settings, "ter", "comp", {})
        assert ("depends most on" in text) == judged, text
        assert ("not judged" in text) != judged, text
        if not judged:
            assert "4 runs of comp would hold it" in text
