"""A user property's missing cell is a missing value (never a reason to make the property
categorical); a non-finite or huge value is refused up front naming file, line and column."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from infrepro.io import InputError, ScoresColumns, read_scores_table
from infrepro.io.properties import property_values
from infrepro.properties.compute import compute_properties

COLUMNS = ScoresColumns.from_config(
    {"segment": "seg", "system": "sys", "run": "run", "metrics": ["m"], "properties": ["len"]}
)


def scores_file(tmp_path, lengths: list[str]) -> str:
    lines = ["seg,sys,run,m,len"]
    for run, system in (("r1", "a"), ("r2", "b")):
        lines += [f"s{i},{system},{run},0.{i + 1},{v}" for i, v in enumerate(lengths)]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("blank", ["", "NA", "NaN"])
def test_a_blank_numeric_property_cell_is_missing_not_a_category(tmp_path, blank: str) -> None:
    table = read_scores_table(scores_file(tmp_path, ["3", blank, "12.5", "7"]), COLUMNS)
    assert table["len"].dtype == np.float64
    assert math.isnan(table["len"][1]) and list(table["len"][[0, 2, 3]]) == [3.0, 12.5, 7.0]


@pytest.mark.parametrize("value", ["inf", "-inf", "1e300"])
def test_a_non_finite_or_huge_property_value_is_refused_with_file_line_and_column(
    tmp_path, value: str
) -> None:
    path = scores_file(tmp_path, ["3", "4", value])
    with pytest.raises(InputError, match=rf"scores\.csv:4: column 'len': .*'{value}'"):
        read_scores_table(path, COLUMNS)


def test_a_categorical_property_keeps_its_labels(tmp_path) -> None:
    table = read_scores_table(scores_file(tmp_path, ["inf", "", "7"]), COLUMNS, categorical=["len"])
    assert list(table["len"][:3]) == ["inf", "", "7"]


def test_text_in_a_property_makes_it_categorical() -> None:
    values = property_values(pd.Series(["short", "", "3"]))
    assert values.dtype == object and list(values) == ["short", "", "3"]
    assert property_values(pd.Series(["", "NA"])).dtype == object  # no number at all


def test_raw_mode_user_property_with_a_blank_cell_stays_numeric() -> None:
    testset = pd.DataFrame(
        {
            "segment_id": ["a", "b", "c"],
            "reference": ["one two", "three", "four five six"],
            "domain_score": ["0.5", "", "2"],
        }
    )
    table, _ = compute_properties(testset, ["domain_score"])
    assert table["domain_score"].dtype == np.float64
    assert math.isnan(table["domain_score"][1])


def test_raw_mode_refuses_a_non_finite_property_naming_the_segment() -> None:
    with pytest.raises(InputError, match=r"t\.tsv: column 'p': .*'inf' \(segment 'b'\)"):
        property_values(pd.Series(["1", "inf"]), path="t.tsv", column="p", segments=["a", "b"])


def test_loading_a_raw_experiment_refuses_a_non_finite_property(tmp_path) -> None:
    from infrepro.experiment import load_experiment

    testset = tmp_path / "testset.tsv"
    testset.write_text("segment_id\treference\tp\na\tone\t1\nb\ttwo\tinf\n")
    runs = tmp_path / "runs.tsv"
    runs.write_text("run_id\tsystem\thypotheses\nr1\tx\th.txt\n")
    (tmp_path / "h.txt").write_text("one\ntwo\n")
    config = {
        "testset": str(testset),
        "runs": str(runs),
        "metrics": ["ter"],
        "properties": ["p"],
        "baseline": "x",
        "property_options": {"categorical": []},
    }
    with pytest.raises(InputError, match=r"testset\.tsv: column 'p': .*'inf' \(segment 'b'\)"):
        load_experiment(config)
    config["property_options"] = {"categorical": ["p"]}
    with pytest.raises(Exception) as declared:  # a label: refused later, for another reason
        load_experiment(config)
    assert "'inf'" not in str(declared.value)
