"""The headline verdict: direction-aware advantage, and the survive / fragile / reverse logic."""

from __future__ import annotations

import math

import pytest

from infrepro.report.verdict import Outcome, classify, sentence, who_is_better

SIG = math.log10(1e-6)
NS = math.log10(0.3)


def lower(difference: float, log10_p: float = SIG) -> Outcome:
    """An outcome on a lower-is-better metric such as TER (difference = baseline - competitor)."""
    return Outcome(difference, f"{10**log10_p:.4g}", log10_p, "lower")


def higher(difference: float, log10_p: float = SIG) -> Outcome:
    return Outcome(difference, f"{10**log10_p:.4g}", log10_p, "higher")


def test_advantage_follows_the_metrics_direction() -> None:
    # TER: baseline 0.45, competitor 0.42 -> baseline - competitor = +0.03, competitor better
    assert lower(0.03).advantage == pytest.approx(0.03)
    # ROUGE: baseline 0.45, competitor 0.42 -> +0.03, baseline better
    assert higher(0.03).advantage == pytest.approx(-0.03)
    assert who_is_better(lower(0.0317), "bl", "comp") == "comp better by 3.17 points"
    assert who_is_better(higher(0.0317), "bl", "comp") == "bl better by 3.17 points"


def test_improvement_reversed_over_all_runs_does_not_survive() -> None:
    verdict = classify(lower(0.03), lower(-0.04), lower(-0.04, NS), 0.05, "comp", "bl")
    assert verdict.badge == "does not survive" and verdict.tone == "bad"
    assert "bl is better" in verdict.conclusion


def test_improvement_that_holds_beyond_run_variance_survives() -> None:
    verdict = classify(higher(-0.02), higher(-0.01), higher(-0.01, math.log10(0.01)), 0.05)
    assert (verdict.badge, verdict.tone) == ("survives", "good")


def test_improvement_significant_only_without_run_variance_is_fragile() -> None:
    verdict = classify(higher(-0.02), higher(-0.01), higher(-0.01, NS), 0.05)
    assert (verdict.badge, verdict.tone) == ("fragile", "warn")


def test_improvement_not_significant_over_all_runs_does_not_survive() -> None:
    verdict = classify(lower(0.02), lower(0.001, NS), lower(0.001, NS), 0.05)
    assert verdict.badge == "does not survive"
    assert "not significantly" in verdict.conclusion


def test_no_best_vs_best_improvement_is_said_so() -> None:
    assert classify(higher(0.02), higher(0.01), None, 0.05).badge == "no improvement"
    assert classify(higher(-0.02, NS), higher(-0.01), None, 0.05).badge == (
        "no significant improvement"
    )
    assert classify(None, None, None, 0.05).badge == "not tested"


def test_alpha_is_respected() -> None:
    at_004 = math.log10(0.04)
    assert classify(lower(0.02, at_004), lower(0.02), lower(0.02), 0.05).badge == "survives"
    assert classify(lower(0.02, at_004), lower(0.02), lower(0.02), 0.01).badge == (
        "no significant improvement"
    )


def test_sentence_quotes_both_p_values() -> None:
    text = sentence(lower(0.0317), lower(-0.0384), lower(-0.0384, NS), "bl", "comp")
    assert text.startswith("Best vs best: comp better by 3.17 points (p = 1e-06)")
    assert "all runs: bl better by 3.84 points (paper p = 1e-06, run-aware p = 0.3)" in text
