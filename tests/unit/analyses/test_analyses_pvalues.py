"""p-value helpers: never 0, Holm identical to statsmodels, tails beyond the float range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from infrepro.stats.pvalues import chi2_log10_sf, format_p, holm_log10, t_log10_two_sided


@settings(max_examples=30)  # statsmodels' multipletests costs ~0.1 s per call
@given(st.lists(st.floats(min_value=1e-300, max_value=1.0), min_size=1, max_size=12))
def test_holm_equals_statsmodels(p_values: list[float]) -> None:
    expected = multipletests(p_values, method="holm")[1]
    adjusted = 10 ** holm_log10(np.log10(p_values))
    np.testing.assert_allclose(adjusted, expected, rtol=1e-9)


@pytest.mark.parametrize(("statistic", "df"), [(3.0, 1), (34.09, 2), (700.0, 4), (1400.0, 2)])
def test_chi2_tail_matches_scipy_where_scipy_is_finite(statistic: float, df: int) -> None:
    expected = stats.chi2.logsf(statistic, df) / math.log(10)
    assert chi2_log10_sf(statistic, df) == pytest.approx(expected, rel=1e-12)


def test_chi2_tail_beyond_float_range_is_finite_and_monotone() -> None:
    values = [chi2_log10_sf(x, 3) for x in (1500.0, 5000.0, 20000.0)]
    assert all(math.isfinite(v) for v in values)
    assert values[0] > values[1] > values[2]
    # log10 Q(1.5, 750) by mpmath: -324.23058649574523
    assert values[0] == pytest.approx(-324.23058649574523, rel=1e-12)


@pytest.mark.parametrize(
    ("log10_p", "text"),
    [
        (math.log10(3.959e-08), "3.959e-08"),
        (math.log10(0.2134), "0.2134"),
        (-1088.5, "3.162e-1089"),
    ],
)
def test_format_p_never_prints_zero(log10_p: float, text: str) -> None:
    assert format_p(log10_p) == text


# log10 of 2 P(T_ν > t) by R 4.2: (log(2) + pt(-t, nu, log.p = TRUE)) / log(10)
@pytest.mark.parametrize(
    ("t", "df", "expected"),
    [
        (40.0, 5.0, -6.7348999260552258),
        (5e6, 40.0, -236.81940433905382),
        (2e3, 700.0, -1316.4840073440014),
        (1e20, 3.0, -59.656529254006337),
    ],
)
def test_t_tail_beyond_float_range_matches_r(t: float, df: float, expected: float) -> None:
    assert t_log10_two_sided(t, df) == pytest.approx(expected, rel=1e-12)
    assert t_log10_two_sided(-t, df) == t_log10_two_sided(t, df)


def test_normal_p_is_scipys_to_the_bit() -> None:
    """The two-sided normal p is computed as scipy's norm.logsf computes it, bit for bit
    (extremes, infinities and NaN included)."""
    import math

    import numpy as np
    from scipy import stats

    from infrepro.stats.pvalues import LN10, normal_log10_two_sided

    rng = np.random.default_rng(3)
    values = [*rng.standard_normal(2000) * 8, 0.0, -0.0, 1e-300, 38.5, 40.0, 1e10, math.inf]
    for z in [*values, -math.inf, math.nan]:
        expected = (float(stats.norm.logsf(abs(z))) + math.log(2.0)) / LN10
        got = normal_log10_two_sided(z)
        assert got == expected or (math.isnan(got) and math.isnan(expected)), z
