"""Shared data preparation is exact: fits with a FitCache, and the cross-products' fast paths,
give bit-for-bit the numbers of a fit alone and of the plain per-column bincounts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.lmm import FitCache, fit, parse_formula
from infrepro.lmm.crossprod import XyColumns, cross_products
from infrepro.lmm.design import build_fixed, random_columns
from infrepro.lmm.layout import choose_layout


def _runs(seed: int = 3, n_seg: int = 40) -> pd.DataFrame:
    """Two systems, runs with facets, segments; a numeric and a binned property."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, runs in (("A", 4), ("B", 6)):
        for r in range(runs):
            offset = rng.normal(0, 0.3)
            for s in range(n_seg):
                rows.append((system, f"{system}{r}", f"l{r % 3}", f"s{s:02d}", offset))
    df = pd.DataFrame(rows, columns=["system", "run", "lam", "seg", "offset"])
    seg_effect = rng.normal(0, 1.0, n_seg)
    df["d"] = rng.normal(size=n_seg)[df.seg.str[1:].astype(int)]
    df["d_c"] = df["d"] - df["d"].mean()
    df["d_bin"] = pd.cut(df["d"], 3, labels=["lo", "mid", "hi"]).astype(str)
    df["y"] = (
        seg_effect[df.seg.str[1:].astype(int)]
        + df.offset
        + 0.3 * (df.system == "B")
        + 0.2 * df.d
        + rng.normal(0, 0.5, len(df))
    )
    return df


FORMULAS = [
    ("y ~ system * d + (1|seg)", False),
    ("y ~ d + (1|seg)", False),
    ("y ~ system + d + (1|seg)", False),
    ("y ~ system * d + (1|seg) + (1 + d_c || run)", True),
    (
        'y ~ system * d_bin + (1|seg) + (0 + dummy(system, "A")|run)'
        ' + (0 + dummy(system, "B")|run) + (1|run:d_bin)',
        True,
    ),
    (
        'y ~ system + (1|seg) + (0 + dummy(system, "A")|run) + (0 + dummy(system, "B")|run)'
        ' + (0 + dummy(system, "B")|lam)',
        True,
    ),
]


def _same(a: object, b: object) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


def test_fits_with_a_shared_cache_equal_fits_alone() -> None:
    df = _runs()
    cache = FitCache()
    for formula, reml in FORMULAS * 2:  # the second round hits every cached item
        fixed = parse_formula(formula).fixed_variables
        levels = {"system": "A"} if "system" in fixed else {}
        alone = fit(formula, df, reml=reml, reference_levels=levels)
        shared = fit(formula, df, reml=reml, reference_levels=levels, cache=cache)
        assert shared.loglik == alone.loglik
        assert _same(shared.theta, alone.theta)
        assert _same(shared.fixed_effects, alone.fixed_effects)
        assert _same(shared.fixed_cov, alone.fixed_cov)
        assert _same(shared.residuals, alone.residuals)
    cache.release()
    assert not cache.fixed and not cache.products


def _reference_cross(
    codes: list[np.ndarray], weights: list[np.ndarray | None], X: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Z_B'[X y] (term 0, the segment) and Z_R'[X y] (the others) as per-column bincounts."""
    Xy = np.column_stack([X, y])
    ncol = Xy.shape[1]
    seg = np.column_stack([np.bincount(codes[0], weights=Xy[:, j]) for j in range(ncol)])
    parts = []
    for c, w in zip(codes[1:], weights[1:], strict=True):
        lev = int(c.max()) + 1
        parts.append(
            np.column_stack(
                [
                    np.bincount(c, weights=Xy[:, j] if w is None else w * Xy[:, j], minlength=lev)
                    for j in range(ncol)
                ]
            )
        )
    return seg, np.vstack(parts)


@pytest.mark.parametrize("formula", [f for f, reml in FORMULAS if reml])
def test_cross_products_equal_per_column_bincounts(formula: str) -> None:
    df = _runs()
    parsed = parse_formula(formula)
    _, X = build_fixed(parsed, df, [], {"system": "A"})
    y = df["y"].to_numpy()
    cols = [random_columns(df, t, {}) for t in parsed.random_terms]
    codes = [c.codes for c in cols]
    weights = [c.weights for c in cols]
    layout = choose_layout(
        codes, [c.nlevels for c in cols], X.shape[1], [w is not None for w in weights]
    )
    assert layout.block_terms == (0,) and layout.m == 1  # the segment is the block factor
    cp = cross_products(layout, codes, XyColumns(X, y), dense=True, weights=weights)
    seg, rest = _reference_cross(codes, weights, X, y)
    assert _same(cp.cby, seg)
    assert _same(cp.cfy, rest)
    # counts: Z_R'Z_R and Z_B'Z_R by their definition
    Z = np.column_stack(
        [
            (c[:, None] == np.arange(int(c.max()) + 1)) * (1.0 if w is None else w[:, None])
            for c, w in zip(codes[1:], weights[1:], strict=True)
        ]
    )
    S = (codes[0][:, None] == np.arange(int(codes[0].max()) + 1)).astype(float)
    assert np.allclose(cp.cff_dense, Z.T @ Z, rtol=1e-13)
    assert np.allclose(cp.cbf_dense[:, 0, :], S.T @ Z, rtol=1e-13)
