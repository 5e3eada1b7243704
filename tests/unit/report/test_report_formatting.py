"""Number formatting: points with two decimals, true minus signs, scientific variances."""

from __future__ import annotations

import math

from infrepro.report.formatting import fixed, integer, p_text, points, scientific, sort_value


def test_scores_are_shown_in_points() -> None:
    assert points(0.453999236) == "45.40"
    assert points(-0.03844726723, sign=True) == "\u22123.84"
    assert points(0.0317, sign=True) == "+3.17"
    assert points(-0.00001, sign=True) == "0.00"  # no "-0.00"


def test_variances_in_scientific_notation() -> None:
    assert scientific(0.02020153107) == "2.020e-02"
    assert scientific(6.078633893e-05) == "6.079e-05"


def test_missing_values_show_a_dash_and_do_not_sort() -> None:
    for value in (None, math.nan, "", "NA"):
        assert points(value) == "–" and fixed(value) == "–" and integer(value) == "–"
        assert sort_value(value) is None
    assert sort_value("2.5") == 2.5 and sort_value(math.inf) is None


def test_p_values_are_shown_as_given() -> None:
    assert p_text("2.548e-49") == "2.548e-49"
    assert p_text("1.2e-1089") == "1.2e-1089"
