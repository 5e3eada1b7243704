"""The profiled-deviance engine: analytic gradient, dense/sparse/grouped paths, layouts,
numerical robustness and boundary (singular) optima."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import infrepro.lmm.profiled as profiled
from infrepro.lmm import deviance_function, fit, parse_formula
from infrepro.lmm.design import encode_groups
from infrepro.lmm.layout import choose_layout
from infrepro.lmm.profiled import ProfiledDeviance


def _grid(seed: int = 0, n_seg: int = 25, drop: float = 0.15) -> pd.DataFrame:
    """Segments x facet a (3) x facet b (4), some cells dropped (unbalanced)."""
    rng = np.random.default_rng(seed)
    rows = [
        (f"s{s:02d}", f"a{a}", f"b{b}")
        for s in range(n_seg)
        for a in range(3)
        for b in range(4)
        if rng.random() >= drop
    ]
    df = pd.DataFrame(rows, columns=["s", "a", "b"])
    eff = {
        c: dict(zip(df[c].unique(), rng.normal(0, sd, df[c].nunique()), strict=True))
        for c, sd in (("s", 1.0), ("a", 0.3), ("b", 0.2))
    }
    sa = rng.normal(0, 0.25, (n_seg, 3))
    df["x"] = rng.normal(size=len(df))
    df["y"] = (
        sum(df[c].map(e) for c, e in eff.items())
        + 0.4 * df.x
        + sa[df.s.str[1:].astype(int), df.a.str[1:].astype(int)]
        + rng.normal(0, 0.5, len(df))
    )
    return df


def _deviance(
    df: pd.DataFrame, terms: list[tuple[str, ...]], reml: bool, path: str
) -> ProfiledDeviance:
    cache: dict[str, np.ndarray] = {}
    codes, nlev = [], []
    for t in terms:
        c, q = encode_groups(df, t, cache)
        codes.append(c)
        nlev.append(q)
    X = np.column_stack([np.ones(len(df)), df["x"]])
    y = df["y"].to_numpy()
    y = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return ProfiledDeviance(codes, nlev, X, y, reml=reml, path=path)


LAYOUTS = [
    [("s",), ("a",), ("b",)],
    [("s",), ("s", "a"), ("b",)],
    [("s",), ("s", "a"), ("s", "b"), ("a",)],
    [("a", "b"), ("s",)],
]


@pytest.mark.parametrize("terms", LAYOUTS, ids=["crossed", "nested", "two-nested", "cells"])
@pytest.mark.parametrize("reml", [False, True])
def test_analytic_gradient_matches_differences(terms: list, reml: bool) -> None:
    df = _grid()
    dev = _deviance(df, terms, reml, "dense")
    rng = np.random.default_rng(1)
    theta = rng.uniform(0.2, 1.5, len(terms))
    val, grad = dev.value_and_grad(theta)
    h = 1e-6
    fd = np.array([(dev(theta + e) - dev(theta - e)) / (2 * h) for e in np.eye(len(theta)) * h])
    assert val == pytest.approx(dev(theta), rel=1e-14)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6 * np.max(np.abs(fd)))
    # the deviance is even in theta: the gradient flips sign
    _, gneg = dev.value_and_grad(-theta)
    np.testing.assert_allclose(gneg, -grad, rtol=1e-12)


@pytest.mark.parametrize("terms", LAYOUTS, ids=["crossed", "nested", "two-nested", "cells"])
def test_dense_sparse_and_grouped_paths_agree(terms: list, monkeypatch: pytest.MonkeyPatch) -> None:
    df = _grid(drop=0.0)  # balanced: identical blocks are grouped
    theta = np.linspace(0.3, 1.2, len(terms))
    dense = _deviance(df, terms, True, "dense")
    sparse = _deviance(df, terms, True, "sparse")
    assert dense.impl.grouped
    monkeypatch.setattr(profiled, "GROUP_ENTRIES_MAX", 0)
    ungrouped = _deviance(df, terms, True, "dense")
    assert not ungrouped.impl.grouped
    ref = dense(theta)
    assert sparse(theta) == pytest.approx(ref, rel=1e-12)
    assert ungrouped(theta) == pytest.approx(ref, rel=1e-12)
    s_dense, s_sparse = dense.solve(theta), sparse.solve(theta)
    np.testing.assert_allclose(s_dense.beta, s_sparse.beta, rtol=1e-9, atol=1e-12)
    for bd, bs in zip(s_dense.b, s_sparse.b, strict=True):
        np.testing.assert_allclose(bd, bs, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("terms", LAYOUTS, ids=["crossed", "nested", "two-nested", "cells"])
def test_a_full_block_by_rest_product_is_multiplied_densely_with_the_same_answer(
    terms: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sparse path holds C_BF as a dense array when it is at least DENSE_CBF_FILL full
    (every run scoring every segment): the criterion and the solution are the sparse
    product's."""
    df = _grid(drop=0.0)
    theta = np.linspace(0.3, 1.2, len(terms))
    full = _deviance(df, terms, True, "sparse")
    monkeypatch.setattr(profiled, "DENSE_CBF_FILL", 2.0)
    sparse = _deviance(df, terms, True, "sparse")
    assert sparse.impl.cbf_full is None
    if full.impl.cbf_full is None:  # this layout's C_BF is not full: nothing to compare
        assert full.impl.cbf.nnz < 0.25 * np.prod(full.impl.cbf.shape)
        return
    assert full(theta) == pytest.approx(sparse(theta), rel=1e-12)
    a, b = full.solve(theta), sparse.solve(theta)
    np.testing.assert_allclose(a.beta, b.beta, rtol=1e-10, atol=1e-13)
    for x, y in zip(a.b, b.b, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-13)


def test_sparse_lu_factor_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sparse LU branch (large crossed factor) gives the dense answer."""
    df = _grid(drop=0.3)
    terms = [("s",), ("a", "b"), ("b",)]
    theta = np.array([0.9, 0.4, 0.3])
    ref = _deviance(df, terms, False, "dense")
    monkeypatch.setattr(profiled, "SPARSE_DENSE_FACTOR_MAX", 0)
    lu = _deviance(df, terms, False, "sparse")
    assert not lu.impl.factor_dense
    assert lu(theta) == pytest.approx(ref(theta), rel=1e-11)


def test_fits_agree_across_paths() -> None:
    df = _grid(n_seg=12)
    formula = "y ~ x + (1|s) + (1|b) + (1|s:a)"
    dense = fit(formula, df, path="dense")
    sparse = fit(formula, df, path="sparse")
    assert dense.loglik == pytest.approx(sparse.loglik, rel=1e-10)
    np.testing.assert_allclose(dense.variance_components, sparse.variance_components, rtol=1e-5)
    np.testing.assert_allclose(dense.fixed_effects, sparse.fixed_effects, rtol=1e-7)


def test_nested_shorthand_equals_explicit_terms() -> None:
    df = _grid()
    a = fit("y ~ x + (1|s/a) + (1|b)", df)
    b = fit("y ~ x + (1|s) + (1|s:a) + (1|b)", df)
    assert list(a.variance_components.index) == ["s", "s:a", "b", "Residual"]
    assert a.loglik == pytest.approx(b.loglik, rel=1e-12)
    np.testing.assert_allclose(a.variance_components, b.variance_components, rtol=1e-6)
    assert a.ngroups == {"s": 25, "s:a": 75, "b": 4}


def test_layout_puts_nested_terms_in_the_segment_blocks() -> None:
    df = _grid(drop=0.0)
    cache: dict[str, np.ndarray] = {}
    terms = [("a",), ("s",), ("s", "a"), ("b",)]
    enc = [encode_groups(df, t, cache) for t in terms]
    layout = choose_layout([c for c, _ in enc], [q for _, q in enc], n_fixed=2)
    assert layout.primary == 1
    assert layout.block_terms == (1, 2)
    assert layout.rest_terms == (0, 3)
    assert layout.m == 4  # segment + its 3 segment:a levels


def test_large_offset_does_not_change_the_fit() -> None:
    df = _grid()
    base = fit("y ~ x + (1|s) + (1|a) + (1|b)", df)
    shifted = fit("y ~ x + (1|s) + (1|a) + (1|b)", df.assign(y=df.y + 1e4))
    assert shifted.loglik == pytest.approx(base.loglik, rel=1e-9)
    np.testing.assert_allclose(shifted.variance_components, base.variance_components, rtol=1e-6)
    assert shifted.fixed_effects["(Intercept)"] == pytest.approx(
        base.fixed_effects["(Intercept)"] + 1e4, rel=1e-12
    )


def test_boundary_optimum_is_exactly_zero_and_flagged() -> None:
    rng = np.random.default_rng(4)
    n_seg, n_run = 60, 6
    df = pd.DataFrame(
        {
            "s": np.repeat([f"s{i}" for i in range(n_seg)], n_run),
            "run": np.tile([f"r{j}" for j in range(n_run)], n_seg),
        }
    )
    # no run effect at all, and run means pulled to exactly the grand mean
    df["y"] = np.repeat(rng.normal(0, 1, n_seg), n_run) + rng.normal(0, 0.5, len(df))
    df["y"] -= df.groupby("run")["y"].transform("mean") - df["y"].mean()
    res = fit("y ~ 1 + (1|s) + (1|run)", df)
    assert res.theta[1] == 0.0
    assert res.variance_components["run"] == 0.0
    assert res.singular and res.converged
    assert any("singular" in m for m in res.messages)


WEIGHTED = [
    "y ~ x + (1|s) + (0 + dummy(a, 'a0')|b) + (0 + dummy(a, 'a1')|b)",
    "y ~ x + (1|s) + (1 + x || b)",
    "y ~ x + (1|s) + (1|a) + (0 + dummy(a, 'a1'):x|b)",
]


@pytest.mark.parametrize("formula", WEIGHTED, ids=["per-level", "slopes", "level-slope"])
@pytest.mark.parametrize("reml", [False, True])
def test_weighted_terms_gradient_and_paths(formula: str, reml: bool) -> None:
    """Slopes and dummy() terms scale Z's columns; the analytic gradient (derived for any Z
    with a diagonal Lambda) and the sparse path must still agree with differences / dense."""
    df = _grid()
    dense = deviance_function(formula, df, reml=reml, path="dense")
    sparse = deviance_function(formula, df, reml=reml, path="sparse")
    rng = np.random.default_rng(2)
    k = len(parse_formula(formula).random_terms)
    for _ in range(3):
        theta = rng.uniform(0.1, 1.5, k)
        assert dense(theta) == pytest.approx(sparse(theta), rel=1e-10)
    prep_dev = _weighted_deviance(formula, df, reml)
    val, grad = prep_dev.value_and_grad(theta)
    h = 1e-6
    fd = np.array([(dense(theta + e) - dense(theta - e)) / (2 * h) for e in np.eye(k) * h])
    assert val == pytest.approx(dense(theta), rel=1e-12)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6 * np.max(np.abs(fd)))


def _weighted_deviance(formula: str, df: pd.DataFrame, reml: bool) -> ProfiledDeviance:
    from infrepro.lmm.fit import _devfun, _prepare

    return _devfun(_prepare(formula, df, None, None), reml, "dense")


def test_residuals_include_weighted_random_effects() -> None:
    """The fit's criterion takes r2 from the rows (residuals + |u|^2); it equals the profiled
    criterion only if slope and dummy() columns enter the fitted values with their weights."""
    df = _grid()
    for formula in WEIGHTED:
        result = fit(formula, df)
        profiled_value = deviance_function(formula, df, reml=True)(result.theta)
        assert result.criterion == pytest.approx(profiled_value, rel=1e-10)
        assert np.isfinite(result.residuals).all()
