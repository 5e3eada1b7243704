"""Data properties: identical to textstat / the documented rarity formula; bins."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import textstat

from infrepro.properties import FrequencyTable, add_bins, compute_properties, word_rarity

TEXTS = [
    "The cat sat on the mat.",
    "Notwithstanding considerable institutional heterogeneity, evaluation remains hard.",
    "",
    "A  b\tc",
]


def test_length_and_readability_match_textstat() -> None:
    testset = pd.DataFrame(
        {"segment_id": ["1", "2", "3", "4"], "reference": ["r"] * 4, "source": TEXTS}
    )
    table, described = compute_properties(testset, ["length", "readability"])
    assert described == "source"
    assert table["length"].tolist() == [6, 7, 0, 3]
    assert table["readability"].tolist() == [textstat.flesch_reading_ease(t) for t in TEXTS]


def test_properties_fall_back_to_reference() -> None:
    testset = pd.DataFrame({"segment_id": ["1"], "reference": ["one two three"]})
    table, described = compute_properties(testset, ["length"])
    assert described == "reference"
    assert table["length"].tolist() == [3]


def test_word_rarity_formula() -> None:
    table = FrequencyTable.from_texts(["a A b"])  # N = 3, V = 2, denominator 6
    means, sums = word_rarity(["A b c", ""], table)
    expected = [math.log(6 / 3), math.log(6 / 2), math.log(6 / 1)]
    assert means[0] == pytest.approx(sum(expected) / 3, rel=1e-15)
    assert sums[0] == pytest.approx(sum(expected), rel=1e-15)
    assert math.isnan(means[1])
    assert sums[1] == 0.0


def test_rarity_frequency_list_file(tmp_path: Path) -> None:
    path = tmp_path / "freq.tsv"
    path.write_text("The\t8\nrare\t1\n", encoding="utf-8")
    table = FrequencyTable.from_file(path)
    means, _ = word_rarity(["the rare"], table)  # N = 9, V = 2, denominator 12
    assert means[0] == pytest.approx((math.log(12 / 9) + math.log(12 / 2)) / 2, rel=1e-15)


def test_default_corpus_is_the_test_set_inputs() -> None:
    testset = pd.DataFrame(
        {"segment_id": ["1", "2"], "reference": ["r", "r"], "source": ["x y", "x z z"]}
    )
    table, _ = compute_properties(testset, ["word_rarity", "word_rarity_sum"])
    direct, direct_sum = word_rarity(["x y", "x z z"], FrequencyTable.from_texts(["x y", "x z z"]))
    np.testing.assert_array_equal(table["word_rarity"], direct)
    np.testing.assert_array_equal(table["word_rarity_sum"], direct_sum)
    assert table.loc[0, "word_rarity"] > table.loc[1, "word_rarity"]  # y is rarer than z


def test_user_properties_numeric_or_categorical() -> None:
    testset = pd.DataFrame(
        {"segment_id": ["1", "2"], "reference": ["r", "r"], "n": ["1", "2.5"], "d": ["a", "b"]}
    )
    table, _ = compute_properties(testset, ["n", "d"])
    assert table["n"].dtype == "float64"
    assert table["d"].tolist() == ["a", "b"]


def test_tertile_bins_and_explicit_cuts() -> None:
    frame = pd.DataFrame({"segment_id": list("abcdef"), "length": [1, 2, 3, 4, 5, 60]})
    binned, table = add_bins(frame, ["length"])
    assert binned["length_bin"].tolist() == ["low", "low", "mid", "mid", "high", "high"]
    assert table["bin"].tolist() == ["low", "mid", "high"]
    binned, table = add_bins(
        frame, ["length"], cuts={"length": [2, 4]}, labels={"length": ["s", "t", "v"]}
    )
    assert binned["length_bin"].tolist() == ["s", "s", "t", "t", "v", "v"]
    with pytest.raises(ValueError, match="2 cut points need 3 labels"):
        add_bins(frame, ["length"], cuts={"length": [2, 4]}, labels={"length": ["s", "t"]})
