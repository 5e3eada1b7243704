"""Degenerate data and bad input: clear LmmError messages naming the column, term or coefficient."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.lmm import LmmError, fit


def _data(n_seg: int = 20, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "seg": np.repeat([f"s{i}" for i in range(n_seg)], 4),
            "system": ["A", "B", "A", "B"] * n_seg,
            "bin": ["lo", "lo", "hi", "hi"] * n_seg,
            "x": rng.normal(size=4 * n_seg),
        }
    )
    df["y"] = rng.normal(size=len(df)) + np.repeat(rng.normal(size=n_seg), 4)
    return df


def test_lmm_error_is_value_error() -> None:
    assert issubclass(LmmError, ValueError)


def test_unsupported_random_slope() -> None:
    with pytest.raises(LmmError, match=r"\(x\|seg\)"):
        fit("y ~ x + (x|seg)", _data())


def test_constant_response() -> None:
    df = _data().assign(y=0.25)
    with pytest.raises(LmmError, match="'y' is constant"):
        fit("y ~ 1 + (1|seg)", df)


def test_response_exactly_fitted() -> None:
    df = _data()
    df["y"] = 2.0 + 3.0 * df["x"]
    with pytest.raises(LmmError, match="exactly fitted"):
        fit("y ~ x + (1|seg)", df)


def test_grouping_factor_with_one_level() -> None:
    df = _data().assign(batch="only")
    with pytest.raises(LmmError, match=r"\(1\|batch\) has 1 level"):
        fit("y ~ 1 + (1|seg) + (1|batch)", df)


def test_grouping_factor_with_as_many_levels_as_rows() -> None:
    df = _data()
    df["row"] = np.arange(len(df)).astype(str)
    with pytest.raises(LmmError, match=r"\(1\|row\) has 80 levels for 80"):
        fit("y ~ 1 + (1|seg) + (1|row)", df)


def test_nan_in_response_names_column_and_count() -> None:
    df = _data()
    df.loc[[3, 7, 11], "y"] = np.nan
    with pytest.raises(LmmError, match=r"response 'y' has 3 missing"):
        fit("y ~ system + (1|seg)", df)


def test_missing_values_in_predictors_and_groups() -> None:
    df = _data()
    df.loc[0, "system"] = None
    with pytest.raises(LmmError, match=r"'system' has 1 missing"):
        fit("y ~ system + (1|seg)", df)
    df = _data()
    df.loc[[1, 2], "seg"] = None
    with pytest.raises(LmmError, match=r"'seg' has 2 missing"):
        fit("y ~ system + (1|seg)", df)
    df = _data()
    df.loc[5, "x"] = np.inf
    with pytest.raises(LmmError, match=r"'x' has 1 missing or infinite"):
        fit("y ~ x + (1|seg)", df)


def test_rank_deficient_covariates() -> None:
    df = _data()
    df["x2"] = 2.0 * df["x"] + 1.0
    with pytest.raises(LmmError, match=r"rank deficient.*\['x2'\]"):
        fit("y ~ x + x2 + (1|seg)", df)


def test_rank_deficient_empty_cell() -> None:
    df = _data()
    df = df[~((df.system == "B") & (df.bin == "lo"))]
    with pytest.raises(LmmError, match=r"\['systemB:binlo'\]"):
        fit("y ~ system * bin + (1|seg)", df)


def test_missing_column_and_bad_reference() -> None:
    with pytest.raises(LmmError, match=r"\['nope'\]"):
        fit("y ~ nope + (1|seg)", _data())
    with pytest.raises(LmmError, match="reference level 'C'"):
        fit("y ~ system + (1|seg)", _data(), reference_levels={"system": "C"})
    with pytest.raises(LmmError, match="not fixed-effect factors"):
        fit("y ~ system + (1|seg)", _data(), reference_levels={"bin": "lo"})


def test_non_numeric_response_and_empty_data() -> None:
    with pytest.raises(LmmError, match="must be numeric"):
        fit("system ~ 1 + (1|seg)", _data())
    with pytest.raises(LmmError, match="no rows"):
        fit("y ~ 1 + (1|seg)", _data().iloc[:0])


def test_reasons_show_plain_numbers() -> None:
    data = pd.DataFrame({"y": [0.5] * 6, "g": list("aabbcc")})
    with pytest.raises(LmmError) as caught:
        fit("y ~ 1 + (1|g)", data)
    assert "constant (0.5)" in str(caught.value)
    assert "np.float64" not in str(caught.value)
