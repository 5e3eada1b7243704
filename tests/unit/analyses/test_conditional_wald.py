"""The conditional and meta-parameter analyses' Wald z rows (conditional.wald_rows) against the
definition, a row of weights w at a time: w'beta and sqrt(w'Cw) with C = fixed_cov, whether the
rows come dense or as sparse differences of cells (conditional.difference_rows)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.conditional import difference_rows, wald_rows
from infrepro.lmm import fit
from infrepro.stats.pvalues import normal_log10_two_sided


def _fitted():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    levels, bins, segments = [f"l{i}" for i in range(6)], ["b0", "b1", "b2"], 30
    d = pd.DataFrame(
        [(f"s{s:02d}", lev) for s in range(segments) for lev in levels],
        columns=["segment_id", "level"],
    )
    d["bin"] = [bins[int(s[1:]) % 3] for s in d.segment_id]
    effect = dict(zip(sorted(set(d.segment_id)), rng.normal(0, 2, segments), strict=True))
    d["score"] = (
        50.0
        + d.level.str[1:].astype(float) * 0.3
        + d.segment_id.map(effect)
        + rng.normal(0, 0.5, len(d))
    )
    fitted = fit("score ~ level * bin + (1|segment_id)", d, reml=True)
    cells = pd.DataFrame(list(itertools.product(levels, bins)), columns=["level", "bin"])
    return fitted, fitted.design_matrix(cells)


def _by_definition(w: np.ndarray, fitted) -> tuple[float, float, float, float]:  # type: ignore[no-untyped-def]
    estimate = float(w @ fitted.fixed_effects.to_numpy())
    se = math.sqrt(float(w @ fitted.fixed_cov.to_numpy() @ w))
    return estimate, se, estimate / se, normal_log10_two_sided(estimate / se)


def test_rows_and_differences_of_cells_are_the_definitions_wald() -> None:
    fitted, x = _fitted()
    for got, w in zip(wald_rows(x, fitted), x, strict=True):
        assert got == pytest.approx(_by_definition(w, fitted), rel=1e-12)
    pairs = [(i, j) for i, j in itertools.combinations(range(len(x)), 2) if i % 3 == j % 3]
    rows = difference_rows(x, pairs)
    assert rows.nnz < rows.shape[0] * rows.shape[1] / 2  # a few non-zeros a row
    for got, (i, j) in zip(wald_rows(rows, fitted), pairs, strict=True):
        assert got == pytest.approx(_by_definition(x[i] - x[j], fitted), rel=1e-10, abs=1e-13)


def test_a_zero_row_has_no_z() -> None:
    fitted, x = _fitted()
    estimate, se, z, log10_p = wald_rows(np.zeros((1, x.shape[1])), fitted)[0]
    assert (estimate, se) == (0.0, 0.0) and math.isnan(z) and math.isnan(log10_p)
