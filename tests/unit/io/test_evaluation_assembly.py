"""The evaluation table is the scores joined with the runs sheet and the segments' properties
(infrepro.experiment.assemble_evaluation): the same frame, dtypes included, as the left
many-to-one merges it replaced give."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.core.vocabulary import RUN, SEGMENT, SYSTEM
from infrepro.experiment import assemble_evaluation

STR = "str"


def inputs() -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]:
    rng = np.random.default_rng(4)
    segments = [f"s{i}" for i in (3, 1, 10, 2)]
    runs = pd.DataFrame(
        {
            RUN: ["b_2", "b_1", "c 1", "NA"],
            SYSTEM: ["b", "b", "c ", "NA"],
            "dev_score": [0.1, 0.2, 0.3, np.nan],
            "seed": ["2", "1", "1", "1"],
        }
    ).astype({RUN: STR, SYSTEM: STR, "seed": STR})
    properties = pd.DataFrame(
        {SEGMENT: segments[:3], "length": [5.0, 7.0, 9.0], "length_bin": ["low", "mid", "high"]}
    ).astype({SEGMENT: STR, "length_bin": STR})
    scores = [
        pd.DataFrame(
            {RUN: run, SEGMENT: segments, "ter": rng.random(4), "bleu": rng.random(4)}
        ).astype({RUN: STR, SEGMENT: STR})
        for run in ["c 1", "b_1", "b_2", "NA", "ghost"]  # "ghost": in no runs sheet
    ]
    return runs, scores, properties


def merged(runs, scores, properties) -> pd.DataFrame:
    """The assembly as it was: two left merges (validate many_to_one)."""
    stacked = pd.concat(scores, ignore_index=True)
    stacked = stacked.sort_values([RUN, SEGMENT], kind="stable").reset_index(drop=True)
    table = stacked.merge(runs[[RUN, SYSTEM, "seed"]], on=RUN, how="left", validate="many_to_one")
    table = table.merge(properties, on=SEGMENT, how="left", validate="many_to_one")
    columns = [RUN, SYSTEM, "seed", SEGMENT, "length", "length_bin", "ter", "bleu"]
    return table[columns].reset_index(drop=True)


def test_equals_the_merges_missing_keys_included() -> None:
    runs, scores, properties = inputs()
    got = assemble_evaluation(runs, scores, properties, facets=["seed"], metrics=["ter", "bleu"])
    expected = merged(runs, scores, properties)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got[SYSTEM].isna().sum() == 4  # the ghost run's rows
    assert got["length"].isna().sum() == 5  # segment s2 of every run
    assert list(got[RUN].unique()) == sorted(r for r in got[RUN].unique())


def test_a_repeated_key_is_refused() -> None:
    runs, scores, properties = inputs()
    twice = pd.concat([runs, runs.iloc[:1]], ignore_index=True)
    with pytest.raises(ValueError, match=RUN):
        assemble_evaluation(twice, scores, properties, facets=["seed"], metrics=["ter"])
