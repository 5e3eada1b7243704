"""qq.csv's quantiles (infrepro.analyses.common.fitlog.sample_quantiles) equal np.quantile's, bit
for
bit, whatever the values: it only selects the order statistics in another way."""

from __future__ import annotations

import numpy as np
import pytest

from infrepro.analyses.common.fitlog import SELECT_FROM, sample_quantiles
from infrepro.core.vocabulary import qq_probabilities

PROBABILITIES = qq_probabilities()


def samples() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    n = 3 * SELECT_FROM
    heavy = rng.standard_cauchy(n)
    return [
        rng.standard_normal(n),  # residuals
        rng.standard_t(2, n) * 3,
        np.round(rng.standard_normal(n), 2) + 0.001,  # many ties
        rng.exponential(1.0, n) * 1e6,
        heavy,  # a few values far out: most buckets empty
        np.sort(rng.standard_normal(n)),
        np.full(n, 0.25),  # one value
        np.concatenate([np.full(n, 1.0), [2.0]]),
        np.concatenate([rng.standard_normal(n), [0.0, -0.0]]),  # signed zeros: np.quantile
        np.concatenate([rng.standard_normal(n), [np.inf]]),
        np.concatenate([rng.standard_normal(n), [np.nan]]),
        np.array([1e308, -1e308] * (n // 2)),  # a range past the largest float
        rng.standard_normal(SELECT_FROM - 1),  # small: np.quantile
        rng.standard_normal(2),
    ]


@pytest.mark.parametrize("index", range(len(samples())))
def test_equals_numpy_bit_for_bit(index: int) -> None:
    x = samples()[index]
    expected = np.quantile(x, PROBABILITIES)
    got = sample_quantiles(x, PROBABILITIES)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


def test_other_probabilities_and_the_ends() -> None:
    x = np.random.default_rng(5).standard_normal(2 * SELECT_FROM)
    probabilities = [0.0, 1e-9, 0.25, 0.5, 0.999999, 1.0]
    assert np.array_equal(sample_quantiles(x, probabilities), np.quantile(x, probabilities))
