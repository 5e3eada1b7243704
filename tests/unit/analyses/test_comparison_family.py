"""The comparison job fits the pairs of the decision's family only (``analyses.comparisons``):
each system against the baseline (k-1 pairs) or every pair; the omnibus test either way
(docs/method.md §4.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses import MetricData, run_analysis
from infrepro.decisions import FAMILY_ALL, FAMILY_BASELINE
from infrepro.registry import ALL_RUNS, BEST_VS_BEST, COMPARISON, HEADLINE, rule_options
from infrepro.schema import defaults
from infrepro.vocabulary import SYSTEM

RUNS = {"A": 3, "B": 2, "C": 3, "D": 2}  # A is the baseline
SHIFT = {"A": 0.0, "B": 0.02, "C": 0.06, "D": -0.03}
PAIRWISE = ["estimate", "se", "log10_p"]  # unadjusted: the same fit gives the same numbers


def experiment(family: str) -> MetricData:
    """Four systems with two or three runs each, 25 segments."""
    rng = np.random.default_rng(3)
    segments = rng.normal(0, 0.2, 25)
    rows, runs = [], []
    for system, n in RUNS.items():
        for r in range(n):
            run = f"{system}_{r}"
            runs.append({"run_id": run, SYSTEM: system})
            values = 0.4 + SHIFT[system] + segments + rng.normal(0, 0.02) + rng.normal(0, 0.05, 25)
            rows += [
                {"run_id": run, SYSTEM: system, "segment_id": f"s{s}", "y": v}
                for s, v in enumerate(values)
            ]
    return MetricData(
        metric="y",
        better="higher",
        baseline="A",
        evaluation=pd.DataFrame(rows),
        runs=pd.DataFrame(runs),
        facets=[],
        properties=[],
        options={"comparisons": family},
    )


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
