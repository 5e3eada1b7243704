"""The parametric-bootstrap LRT (analyses.bootstrap_lrt): seeded, and right in clear cases."""

from __future__ import annotations

import numpy as np
import pandas as pd

from infrepro.analyses.common.bootstrap import bootstrap_lrt

H1 = "y ~ system + (1|seg) + (1|run)"
H0 = "y ~ 1 + (1|seg) + (1|run)"


def _data(effect: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    seg = rng.normal(0, 1.0, 30)
    for system, shift in (("A", 0.0), ("B", effect)):
        for r in range(5):
            run = rng.normal(0, 0.3)
            for s in range(30):
                rows.append((system, f"{system}{r}", f"s{s}", shift + seg[s] + run + rng.normal()))
    return pd.DataFrame(rows, columns=["system", "run", "seg", "y"])


def test_seeded_and_counts_samples() -> None:
    data = _data(0.0, 1)
    first = bootstrap_lrt(data, H1, H0, samples=20, seed=3)
    again = bootstrap_lrt(data, H1, H0, samples=20, seed=3)
    assert first == again
    assert first.samples == 20 and first.failed == 0
    assert first.method == "parametric bootstrap (20 of 20 samples; 0 refits failed)"
    assert first.df == 1
    assert 1 / 21 <= first.p_value <= 1


def test_a_large_effect_gives_the_smallest_p_and_none_a_large_p() -> None:
    strong = bootstrap_lrt(_data(5.0, 2), H1, H0, samples=19, seed=1)
    assert strong.p_value == 1 / 20
    null = bootstrap_lrt(_data(0.0, 4), H1, H0, samples=19, seed=1)
    assert null.p_value > 0.1
