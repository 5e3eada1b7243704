"""Cross-products of the random-effect columns with many weighted rest terms (a run variance
per system, the runs' slopes), against Z'Z from the explicit Z, and the path such a model
takes (issue 45)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synthetic_systems import systems_data

import infrepro.lmm.profiled as profiled
from infrepro.lmm.crossprod import _count_matrix, _weighted_dense
from infrepro.lmm.fit import _prepare
from infrepro.lmm.layout import choose_layout

SYSTEMS = 9


def _runs(seed: int = 2) -> pd.DataFrame:
    """SYSTEMS systems x 3 runs x 30 segments (tests/synthetic_systems), a tenth of the rows
    dropped, a numeric property x (centred: x_c)."""
    names = [f"S{k}" for k in range(SYSTEMS)]
    runs = systems_data(dict.fromkeys(names, 3), dict.fromkeys(names, 0.0), seed=seed, segments=30)
    rng = np.random.default_rng(seed)
    d = runs.evaluation[rng.random(len(runs.evaluation)) > 0.1].reset_index(drop=True)
    d = d.rename(columns={"y": "score"})
    d["x"] = rng.normal(size=len(d)).round(2)
    d["x_c"] = d["x"] - d["x"].mean()
    return d


def _formula(slopes: bool) -> str:
    dummies = " + ".join(f'(0 + dummy(system, "S{k}")|run_id)' for k in range(SYSTEMS))
    return f"score ~ system + (1|segment_id) + {dummies}" + (
        " + (0 + x_c | run_id)" if slopes else ""
    )


def _explicit_z(prep, layout) -> tuple[np.ndarray, np.ndarray]:
    """Z_B (one column per block slot, m = 1 here) and Z_R (rest columns), dense."""
    n = len(prep.y)
    terms = prep.terms
    zb = np.zeros((n, layout.n_blocks))
    zb[np.arange(n), terms[layout.primary].codes] = 1.0
    zr = np.zeros((n, layout.n_rest))
    for t, off in zip(layout.rest_terms, layout.rest_offsets, strict=True):
        w = np.ones(n) if terms[t].weights is None else terms[t].weights
        np.add.at(zr, (np.arange(n), off + terms[t].codes), w)
    return zb, zr


@pytest.mark.parametrize("slopes", [False, True])
def test_weighted_cross_products_equal_the_explicit_z(slopes: bool) -> None:
    prep = _prepare(_formula(slopes), _runs(), {"system": "S0"}, None)
    weighted = [t.weights is not None for t in prep.terms]
    layout = choose_layout(prep.codes, prep.nlevels, prep.X.shape[1], weighted)
    assert layout.m == 1 and len(layout.rest_terms) == SYSTEMS + slopes
    zb, zr = _explicit_z(prep, layout)
    rest_cols = [
        prep.terms[t].codes + off
        for t, off in zip(layout.rest_terms, layout.rest_offsets, strict=True)
    ]
    rest_w = [prep.terms[t].weights for t in layout.rest_terms]
    block = [prep.terms[layout.primary].codes]
    qr, qb = layout.n_rest, layout.n_blocks
    sparse_ff = _count_matrix(rest_cols, rest_cols, (qr, qr), rest_w, rest_w).toarray()
    sparse_bf = _count_matrix(block, rest_cols, (qb, qr), None, rest_w).toarray()
    dense_ff, dense_bf = _weighted_dense(rest_cols, rest_w, block, qb * qr, qr)
    if slopes:  # sums of real products: to rounding
        for got, want in ((sparse_ff, zr.T @ zr), (dense_ff, zr.T @ zr), (sparse_bf, zb.T @ zr)):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
    else:  # counts: exactly
        for got, want in ((sparse_ff, zr.T @ zr), (dense_ff, zr.T @ zr), (sparse_bf, zb.T @ zr)):
            assert np.array_equal(got, want)
    np.testing.assert_allclose(dense_bf.reshape(qb, qr), zb.T @ zr, rtol=1e-13, atol=1e-12)


def test_many_terms_take_the_dense_path_while_it_costs_less_than_a_sparse_gradient(
    monkeypatch,
) -> None:
    """A model with a run variance per system whose deviance is not small for the dense path
    and whose blocks do not group takes it all the same while an evaluation's work stays below
    DENSE_WORK_MAX per evaluation of a sparse gradient (2k + 1), within DENSE_WIDTH_MANY_TERMS;
    otherwise, or with fewer than MANY_TERMS terms, the sparse one. Both give one deviance.
    Taken so, its blocks may group into a tensor of GROUP_ENTRIES_MANY_TERMS entries."""
    prep = _prepare(_formula(True), _runs(), {"system": "S0"}, None)
    args = (prep.codes, prep.nlevels, prep.X, prep.y_centred)
    weighted = [t.weights is not None for t in prep.terms]
    layout = choose_layout(prep.codes, prep.nlevels, prep.X.shape[1], weighted)
    width = layout.n_rest + prep.X.shape[1] + 1
    work = float(layout.n_blocks) * layout.m * width**2
    k = len(prep.terms)
    monkeypatch.setattr(profiled, "ARROW_GAIN", 0.0)  # the segments-first elimination's choice
    monkeypatch.setattr(profiled, "DENSE_REST_SMALL", 0)
    monkeypatch.setattr(profiled, "GROUP_ENTRIES_MAX", 0)  # the blocks do not group
    monkeypatch.setattr(profiled, "DENSE_WORK_MAX", work / (2 * k + 1))  # not small

    def path() -> str:
        return profiled.ProfiledDeviance(*args, reml=True, weights=prep.weights).path

    assert path() == "dense"
    many = profiled.ProfiledDeviance(*args, reml=True, weights=prep.weights)
    assert many.has_gradient and many.impl.group_cap == profiled.GROUP_ENTRIES_MANY_TERMS
    with monkeypatch.context() as m:
        m.setattr(profiled, "DENSE_WORK_MAX", work / (2 * k + 1) * (1 - 1e-9))
        assert path() == "sparse"
    with monkeypatch.context() as m:
        m.setattr(profiled, "DENSE_WIDTH_MANY_TERMS", width - 1)
        assert path() == "sparse"
    monkeypatch.setattr(profiled, "MANY_TERMS", k + 1)
    sparse = profiled.ProfiledDeviance(*args, reml=True, weights=prep.weights)
    assert sparse.path == "sparse"
    theta = np.linspace(0.2, 1.1, k)
    assert many(theta) == pytest.approx(sparse(theta), rel=1e-11)
