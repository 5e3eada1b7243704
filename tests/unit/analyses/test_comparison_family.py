"""The comparison job fits the pairs of the decision's family only (``analyses.comparisons``):
each system against the baseline (k-1 pairs) or every pair; the omnibus test either way
(docs/method.md §4.1). The conditional job's within-level contrasts compare the same pairs
unless ``analyses.conditional_pairs`` asks for all (§4.2.3)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from synthetic_systems import systems_data

from infrepro.analyses import MetricData, run_analysis
from infrepro.core.decisions import FAMILY_ALL, FAMILY_BASELINE, PAIRS_OF_FAMILY
from infrepro.core.registry import (
    ALL_RUNS,
    BEST_VS_BEST,
    COMPARISON,
    CONDITIONAL,
    HEADLINE,
    RUN_AWARE_SUFFIX,
    rule_options,
)
from infrepro.core.schema import defaults

RUNS = {"A": 3, "B": 2, "C": 3, "D": 2}  # A is the baseline
SHIFT = {"A": 0.0, "B": 0.02, "C": 0.06, "D": -0.03}
PAIRWISE = ["estimate", "se", "log10_p"]  # unadjusted: the same fit gives the same numbers


def experiment(family: str) -> MetricData:
    """Four systems with two or three runs each, 25 segments."""
    return systems_data(RUNS, SHIFT, seed=3, segments=25, options={"comparisons": family})


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, pd.DataFrame]]:
    return {f: run_analysis(COMPARISON, experiment(f)) for f in (FAMILY_BASELINE, FAMILY_ALL)}


def _pairs(table: pd.DataFrame, analysis: str) -> list[str]:
    rows = table[(table["analysis"] == analysis) & (table["subset"] != "all systems")]
    return list(rows["subset"])


def test_the_baseline_family_fits_each_system_against_the_baseline_only(tables) -> None:
    named, every = tables[FAMILY_BASELINE], tables[FAMILY_ALL]
    for analysis in (HEADLINE,):
        assert _pairs(named["tests"], analysis) == ["A vs B", "A vs C", "A vs D"]
        assert len(_pairs(every["tests"], analysis)) == 6
    for analysis in (BEST_VS_BEST, ALL_RUNS):
        assert _pairs(named["glrt"], analysis) == ["A vs B", "A vs C", "A vs D"]
        assert len(_pairs(every["glrt"], analysis)) == 6
    # the omnibus GLRTs of all systems in both (best vs best, all runs, shared run intercept)
    for family in (named, every):
        assert (family["glrt"]["subset"] == "all systems").sum() == 3
    fitted = {f: (t["diagnostics"]["status"] == "fitted").sum() for f, t in tables.items()}
    assert fitted[FAMILY_BASELINE] < fitted[FAMILY_ALL]


def test_the_baseline_pairs_are_the_all_pairs_runs_rows(tables) -> None:
    """Same fits, same numbers; only Holm's family is the smaller one (p_holm no larger)."""
    named, every = tables[FAMILY_BASELINE], tables[FAMILY_ALL]
    for name in ("contrasts", "tests"):
        keys = ["analysis", "subset"] + (["hypothesis"] if name == "tests" else [])
        mine = named[name][named[name]["subset"] != "all systems"].set_index(keys)
        theirs = every[name].set_index(keys).loc[mine.index]
        pd.testing.assert_frame_equal(mine[PAIRWISE], theirs[PAIRWISE], rtol=1e-10)
        more = mine["log10_p_holm"].dropna().index
        assert (mine.loc[more, "log10_p_holm"] <= theirs.loc[more, "log10_p_holm"] + 1e-12).all()
    pd.testing.assert_frame_equal(
        named["means"][named["means"]["subset"] == "all systems"].reset_index(drop=True),
        every["means"][every["means"]["subset"] == "all systems"].reset_index(drop=True),
    )


def test_the_family_reaches_the_comparison_rule_and_is_checked() -> None:
    """A change of analyses.comparisons reruns the comparison job (its rule's params)."""
    options = rule_options(COMPARISON, defaults("analyses"), defaults("report"))
    assert options["comparisons"] == defaults("analyses")["comparisons"] == FAMILY_BASELINE
    with pytest.raises(ValueError, match="analyses.comparisons"):
        run_analysis(COMPARISON, experiment("pairs"))


def conditional_contrasts(options: dict[str, str]) -> pd.DataFrame:
    """The conditional job's within-level contrasts on the four systems, with a two-level
    categorical property (the first 12 segments one domain, the rest the other)."""
    data = experiment(options.get("comparisons", FAMILY_BASELINE))
    rows = data.evaluation.assign(
        domain=lambda f: np.where(f["segment_id"].str[1:].astype(int) < 12, "news", "web")
    )
    data = MetricData(
        metric="y",
        better="higher",
        baseline="A",
        evaluation=rows,
        runs=data.runs,
        facets=[],
        properties=["domain"],
        options=options,
    )
    return run_analysis(CONDITIONAL, data)["contrasts"]


def _level_pairs(contrasts: pd.DataFrame, analysis: str) -> dict[str, list[str]]:
    rows = contrasts[contrasts["analysis"] == analysis]
    return {
        level: sorted(f"{a} vs {b}" for a, b in zip(g["level1"], g["level2"], strict=True))
        for level, g in rows.groupby("bin")
    }


@pytest.mark.parametrize(
    ("options", "every"),
    [
        ({}, False),  # the defaults: the family's pairs, the baseline family
        ({"conditional_pairs": FAMILY_ALL}, True),
        ({"comparisons": FAMILY_ALL}, True),  # the family is all pairs
    ],
)
def test_the_conditional_job_compares_the_familys_pairs_within_each_level(
    options: dict[str, str], every: bool
) -> None:
    """docs/method.md §4.2.3: linear in systems unless every pair is asked for."""
    contrasts = conditional_contrasts(options)
    with_baseline = ["A vs B", "A vs C", "A vs D"]
    expected = (
        sorted(f"{a} vs {b}" for a, b in itertools.combinations("ABCD", 2))
        if every
        else with_baseline
    )
    for analysis in (CONDITIONAL, CONDITIONAL + RUN_AWARE_SUFFIX):
        assert _level_pairs(contrasts, analysis) == {"news": expected, "web": expected}


def test_the_within_level_pairs_are_the_every_pair_tables_rows() -> None:
    """The same fits give the same numbers; Holm's family is the smaller one."""
    named = conditional_contrasts({}).set_index(["analysis", "bin", "level1", "level2"])
    every = conditional_contrasts({"conditional_pairs": FAMILY_ALL})
    every = every.set_index(["analysis", "bin", "level1", "level2"]).loc[named.index]
    pd.testing.assert_frame_equal(named[PAIRWISE], every[PAIRWISE], rtol=1e-10)
    assert (named["log10_p_holm"] <= every["log10_p_holm"] + 1e-12).all()
    assert (named["log10_p_holm"] < every["log10_p_holm"] - 1e-6).any()


def test_the_pairs_option_reaches_the_conditional_rule_and_is_checked() -> None:
    options = rule_options(CONDITIONAL, defaults("analyses"), defaults("report"))
    assert options["conditional_pairs"] == PAIRS_OF_FAMILY
    assert options["comparisons"] == FAMILY_BASELINE
    with pytest.raises(ValueError, match="analyses.conditional_pairs"):
        conditional_contrasts({"conditional_pairs": "some"})
