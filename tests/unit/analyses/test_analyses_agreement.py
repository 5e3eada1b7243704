"""Krippendorff's alpha (docs/method.md §4d.3): the thesis' two worked examples (§3.3.1) and the
annotation configuration's data, against an independent coincidence-matrix computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.common.agreement import (
    interval_alpha,
    krippendorff_alpha,
    reliability_matrix,
)
from infrepro.analyses.common.data import MetricData

ROOT = Path(__file__).resolve().parents[3]

# thesis §3.3.1 (after Krippendorff 2004): two raters, binary ratings
TEN_ITEMS = np.array([[1, 1, 0, 0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]], dtype=float)
EIGHT_ITEMS = np.array([[0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 0, 1]], dtype=float)


def _reference_alpha(matrix: np.ndarray, level: str) -> float:
    """alpha from the coincidence matrix, written out as in docs/method.md §4d.3."""
    values = np.unique(matrix[~np.isnan(matrix)])
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in matrix.T:
        seen = unit[~np.isnan(unit)]
        if seen.size < 2:
            continue
        for a in range(seen.size):
            for b in range(seen.size):
                if a != b:
                    o[index[seen[a]], index[seen[b]]] += 1.0 / (seen.size - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta2 = 1.0 - np.eye(len(values))
    else:
        delta2 = (values[:, None] - values[None, :]) ** 2
    observed = (o * delta2).sum() / n
    expected = (np.outer(n_c, n_c) * delta2).sum() / (n * (n - 1))
    return 1.0 - observed / expected


def test_thesis_first_example():
    """60 % observed agreement, alpha = 1 - 4/4.421 = 0.095."""
    alpha = krippendorff_alpha(TEN_ITEMS, "nominal")
    assert round(alpha, 3) == 0.095
    assert alpha == pytest.approx(1 - 4 / (14 * 6 / 19))
    assert alpha == pytest.approx(_reference_alpha(TEN_ITEMS, "nominal"))


def test_thesis_second_example_is_negative():
    """75 % observed agreement, yet alpha = 1 - 2/1.87 = -0.07 (chance agreement 76.6 %)."""
    alpha = krippendorff_alpha(EIGHT_ITEMS, "nominal")
    assert round(alpha, 2) == -0.07
    assert alpha == pytest.approx(_reference_alpha(EIGHT_ITEMS, "nominal"))


def test_no_variation_is_undefined_and_levels_are_checked():
    assert np.isnan(krippendorff_alpha(np.zeros((2, 8)), "nominal"))
    with pytest.raises(ValueError, match="level of measurement"):
        krippendorff_alpha(TEN_ITEMS, "cardinal")


def _annotation_data() -> MetricData:
    """config/kreutzer2020_annotation.yaml's data: a run is a (mode, occasion, rater) pass."""
    raw = pd.read_csv(ROOT / "resources/kreutzer2020/data_annotation.csv.gz", dtype=str)
    evaluation = pd.DataFrame(
        {
            "run_id": raw["mode"] + ":" + raw["occasion"] + ":" + raw["rater"],
            "system": raw["mode"],
            "segment_id": raw["sentence"],
            "score": raw["score"].astype(float),
        }
    )
    runs = evaluation[["run_id", "system"]].drop_duplicates().reset_index(drop=True)
    return MetricData("score", "lower", "Marking", evaluation, runs, [], [])


def test_annotation_data_agrees_with_the_coincidence_matrix():
    data = _annotation_data()
    assert data.systems == ["Marking", "Post Edit"]
    for system in data.systems:
        rows = data.evaluation[data.evaluation["system"] == system]
        matrix = reliability_matrix(rows, "score")
        assert matrix.shape == (30, 5)  # 10 raters x 3 occasions rate 5 sentences
        assert not np.isnan(matrix).any()
        alpha = krippendorff_alpha(matrix, "interval")
        assert alpha == pytest.approx(_reference_alpha(matrix, "interval"), rel=1e-9)
    # a lost rating leaves alpha defined and still equal to the reference
    rows = data.evaluation[data.evaluation["system"] == "Marking"].iloc[1:]
    matrix = reliability_matrix(rows, "score")
    assert np.isnan(matrix).sum() == 1
    assert krippendorff_alpha(matrix) == pytest.approx(_reference_alpha(matrix, "interval"))


def test_interval_closed_form_equals_the_package():
    """The O(N) interval form used for many distinct values equals the package's alpha."""
    rng = np.random.default_rng(4)
    matrix = rng.normal(0, 1, (6, 40)) + rng.normal(0, 2, 40)[None, :]
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    assert interval_alpha(matrix) == pytest.approx(krippendorff_alpha(matrix), rel=1e-10)
    data = _annotation_data()
    rows = data.evaluation[data.evaluation["system"] == "Post Edit"]
    matrix = reliability_matrix(rows, "score")
    assert interval_alpha(matrix) == pytest.approx(krippendorff_alpha(matrix), rel=1e-10)
