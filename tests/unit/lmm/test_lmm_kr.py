"""The structured Kenward-Roger (infrepro/lmm/kr.py) against the dense q x q reference.

The dense computation (ddf.DdfCore._kr_pieces_dense) is a step-for-step port of pbkrtest's
vcovAdj and agrees with pbkrtest (tests/golden/test_lmm_ddf_golden.py); the structured one works on
the cross-products only. Here both run on the same fits: designs with a block size of 1
(segments) and larger (terms nested in the segment), weighted rest terms (slopes, dummy()),
facets, missing rows, zero variance estimates, and both profiled-deviance paths (dense with
grouped blocks, sparse), and must give Phi_A, W and every df and p within 1e-8 relative.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.common.smalltests import ddf_method
from infrepro.lmm import KENWARD_ROGER, SATTERTHWAITE, fit
from infrepro.lmm.ddf import DENSE_KR_MAX_COLUMNS
from infrepro.lmm.errors import LmmError


def _design(drop: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (f"s{s:02d}", f"r{r}", "A" if r < 5 else "B", f"l{r % 3}")
        for s in range(36)
        for r in range(10)
    ]
    d = pd.DataFrame(rows, columns=["segment_id", "run_id", "system", "lam"])
    if drop:
        d = d.sample(frac=1.0 - drop, random_state=seed).reset_index(drop=True)
    d["x"] = rng.normal(size=len(d)).round(2)
    d["bin"] = "b" + (d.segment_id.str[1:].astype(int) % 3).astype(str)  # a segment property
    seg = dict(zip(sorted(set(d.segment_id)), rng.normal(0, 0.2, 36), strict=True))
    run = dict(zip(sorted(set(d.run_id)), rng.normal(0, 0.02, 10), strict=True))
    d["score"] = (
        0.4
        + d.segment_id.map(seg)
        + d.run_id.map(run)
        + 0.02 * (d.system == "B")
        + 0.01 * d.x
        + rng.normal(0, 0.05, len(d))
    )
    return d


DUMMIES = '(0 + dummy(system, "A")|run_id) + (0 + dummy(system, "B")|run_id)'
FORMULAS = [
    f"score ~ system + (1|segment_id) + {DUMMIES}",
    "score ~ system + (1|segment_id) + (1|run_id)",
    "score ~ system * x + (1|segment_id) + (1 + x || run_id)",
    f'score ~ system + (1|segment_id) + {DUMMIES} + (0 + dummy(system, "B")|lam)',
    "score ~ system + (1|segment_id) + (1|segment_id:system) + (1|run_id)",
    "score ~ system * x + (1|segment_id) + (1|segment_id:lam) + (1 + x || run_id) + (1|lam)",
    f"score ~ system * bin + (1|segment_id) + {DUMMIES} + (1|run_id:bin)",
]


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(a))), 1e-300))


@pytest.mark.parametrize("path", ["dense", "sparse"])
@pytest.mark.parametrize("drop", [0.0, 0.15])
@pytest.mark.parametrize("formula", FORMULAS)
def test_structured_equals_dense_reference(formula: str, drop: float, path: str) -> None:
    d = _design(drop, seed=3)
    result = fit(formula, d, reml=True, keep_design=True, path=path)
    core = result.ddf_core
    dense = core.kr_parts("dense")
    structured = core.kr_parts("structured")
    assert _rel(dense[0], structured[0]) < 1e-8  # Phi_A
    assert _rel(dense[2], structured[2]) < 1e-8  # W
    for a, b in zip(dense[1], structured[1], strict=True):  # P
        assert _rel(a, b) < 1e-8
    names = list(result.fixed_effects.index)
    L = np.eye(len(names))[1:]
    for rows in [L[:1], L]:
        a = result.contest(rows, KENWARD_ROGER)  # dense: q <= DENSE_KR_MAX_COLUMNS
        core.kr_how = "structured"
        b = result.contest(rows, KENWARD_ROGER)
        core.kr_how = "auto"
        assert b.dendf == pytest.approx(a.dendf, rel=1e-8)
        assert b.p_value == pytest.approx(a.p_value, rel=1e-8)
        assert b.statistic == pytest.approx(a.statistic, rel=1e-8)


def test_zero_variance_estimate_and_grouped_blocks() -> None:
    """A balanced design (one block group: the grouped contraction) with a run variance
    estimated at zero: KR stays finite and equal to the reference."""
    d = _design(0.0, seed=5)
    d["score"] = d["score"] - d.run_id.map(d.groupby("run_id")["score"].mean())
    result = fit(f"score ~ system + (1|segment_id) + {DUMMIES}", d, reml=True, keep_design=True)
    assert np.any(result.theta == 0.0)
    assert result.ddf_core.products().tens is not None
    dense = result.ddf_core.kr_parts("dense")
    structured = result.ddf_core.kr_parts("structured")
    assert _rel(dense[0], structured[0]) < 1e-8


def _many_runs(seed: int) -> pd.DataFrame:
    """8 segments, 2 systems x 15 runs: the runs outnumber the segments."""
    rng = np.random.default_rng(seed)
    runs = [("A" if r < 15 else "B", f"r{r:02d}") for r in range(30)]
    d = pd.DataFrame(
        [(f"s{s}", run, sys_) for s in range(8) for sys_, run in runs],
        columns=["segment_id", "run_id", "system"],
    )
    d = d.sample(frac=0.9, random_state=seed).reset_index(drop=True)
    d["x"] = rng.normal(size=len(d)).round(2)
    seg = dict(zip(sorted(set(d.segment_id)), rng.normal(0, 0.2, 8), strict=True))
    run = dict(zip(sorted(set(d.run_id)), rng.normal(0, 0.03, 30), strict=True))
    d["score"] = d.segment_id.map(seg) + d.run_id.map(run) + rng.normal(0, 0.05, len(d))
    return d


@pytest.mark.parametrize(
    "formula",
    [
        f"score ~ system + (1|segment_id) + {DUMMIES}",
        f"score ~ system * x + (1|segment_id) + {DUMMIES} + (0 + x|run_id)",
    ],
)
def test_runs_as_the_block_part_equal_the_dense_reference(formula: str, monkeypatch) -> None:
    """With more runs than segments, KR takes the arrowhead's layout by run (each run's
    intercept and slope a block, the segments the rest: arrow.ArrowSchur.block_products)
    instead of every run column in the segments-first rest, and gives the dense reference's
    Phi_A, W, P and df. The fit's arrowhead is held to its partition by run."""
    from infrepro.lmm import profiled

    finer = profiled.row_parts
    monkeypatch.setattr(profiled, "row_parts", lambda *a: finer(*a)[-1:])
    result = fit(formula, _many_runs(seed=2), reml=True, keep_design=True, path="arrow")
    core = result.ddf_core
    assert core.products is not None and core.products().cbb.shape[0] == 30  # a block a run
    dense, structured = core.kr_parts("dense"), core.kr_parts("structured")
    assert _rel(dense[0], structured[0]) < 1e-8 and _rel(dense[2], structured[2]) < 1e-8
    for a, b in zip(dense[1], structured[1], strict=True):
        assert _rel(a, b) < 1e-8
    L = np.eye(len(result.fixed_effects))[1:]
    a = result.contest(L, KENWARD_ROGER)
    core.kr_how = "structured"
    b = result.contest(L, KENWARD_ROGER)
    assert b.dendf == pytest.approx(a.dendf, rel=1e-8)
    assert b.p_value == pytest.approx(a.p_value, rel=1e-8)


def test_an_arrowhead_by_system_gives_kr_no_block_products(monkeypatch) -> None:
    """Parts by system confine each system's fixed columns to its block, which KR's block
    part (random columns only) cannot hold: the segments-first layout's products serve."""
    from infrepro.lmm import profiled

    coarse = profiled.row_parts
    monkeypatch.setattr(profiled, "row_parts", lambda *a: coarse(*a)[:1])
    result = fit(
        f"score ~ system + (1|segment_id) + {DUMMIES}",
        _many_runs(seed=2),
        reml=True,
        keep_design=True,
        path="arrow",
    )
    dev = result.ddf_core.products.__self__  # type: ignore[union-attr]
    assert dev.arrow is not None and dev.arrow.block_products() is None
    assert result.ddf_core.products().cbb.shape[0] == 8  # a block a segment
    dense, structured = result.ddf_core.kr_parts("dense"), result.ddf_core.kr_parts("structured")
    assert _rel(dense[0], structured[0]) < 1e-8


def test_large_fits_use_the_structured_kr_without_model_matrices() -> None:
    """Above DENSE_KR_MAX_COLUMNS the fit keeps no X and Z, the analyses still choose KR, and
    it runs (structured)."""
    rng = np.random.default_rng(7)
    n_seg, runs = 1300, [("A", 0), ("A", 1), ("A", 2), ("B", 3), ("B", 4), ("B", 5)]
    d = pd.DataFrame(
        [(f"s{s:04d}", f"r{r}", sys_) for s in range(n_seg) for sys_, r in runs],
        columns=["segment_id", "run_id", "system"],
    )
    d["score"] = (
        rng.normal(0, 0.2, n_seg).repeat(len(runs))
        + np.tile(rng.normal(0, 0.02, len(runs)), n_seg)
        + rng.normal(0, 0.05, len(d))
    )
    result = fit(f"score ~ system + (1|segment_id) + {DUMMIES}", d, reml=True)
    assert result.ddf_core.q > DENSE_KR_MAX_COLUMNS
    assert result.ddf_core.design is None and ddf_method(result) == KENWARD_ROGER
    test = result.contest({"systemB": 1.0}, KENWARD_ROGER)
    assert test.method == KENWARD_ROGER and 1.0 < test.dendf < 10.0
    kept = fit(f"score ~ system + (1|segment_id) + {DUMMIES}", d, reml=True, keep_design=True)
    dense, structured = kept.ddf_core.kr_parts("dense"), kept.ddf_core.kr_parts("structured")
    assert _rel(dense[0], structured[0]) < 1e-8 and _rel(dense[2], structured[2]) < 1e-8


def test_ml_fits_have_no_kenward_roger() -> None:
    result = fit(f"score ~ system + (1|segment_id) + {DUMMIES}", _design(0.0, 3), reml=False)
    assert not result.kr_feasible()
    with pytest.raises(LmmError, match="REML"):
        result.contest({"systemB": 1.0}, KENWARD_ROGER)


def test_beyond_the_memory_cap_the_analyses_name_satterthwaite(monkeypatch) -> None:
    from infrepro.lmm import SATTERTHWAITE, ddf

    monkeypatch.setattr(ddf, "KR_MAX_ENTRIES", 100)
    result = fit(f"score ~ system + (1|segment_id) + {DUMMIES}", _design(0.0, 3), reml=True)
    assert not result.kr_feasible() and ddf_method(result) == SATTERTHWAITE
    assert result.contest({"systemB": 1.0}, SATTERTHWAITE).dendf > 0


def test_auto_goes_structured_when_the_dense_work_is_large(monkeypatch) -> None:
    """auto: dense for a small fit, structured once q^3 + the Q products exceed
    DENSE_KR_MAX_WORK (the decision model at 30 systems), with the same numbers."""
    from infrepro.lmm import ddf

    d = _design(0.0, seed=3)
    result = fit(FORMULAS[0], d, reml=True, keep_design=True)
    core = result.ddf_core
    row = np.eye(len(result.fixed_effects))[1:]
    small = result.contest(row, KENWARD_ROGER)
    assert set(core._kr) == {"dense"}
    core.clear_cache()
    monkeypatch.setattr(ddf, "DENSE_KR_MAX_WORK", float(core.q) ** 3 - 1)
    large = result.contest(row, KENWARD_ROGER)
    assert set(core._kr) == {"structured"}
    assert large.dendf == pytest.approx(small.dendf, rel=1e-8)


@pytest.mark.parametrize("formula", FORMULAS[:3])
def test_one_row_contrast_takes_a2_equal_to_a1(formula: str) -> None:
    """For one row Theta is rank one, so pbkrtest's A2 = sum W_ij tr(U_i U_j) equals A1: the df
    from the shortcut equals the df from pbkrtest's double sum (Lb_ddf) computed here."""
    from infrepro.lmm.ddf import _kr_adjust

    result = fit(formula, _design(0.15, seed=11), reml=True, keep_design=True)
    core = result.ddf_core
    phi_a, P, W = core.kr_parts()
    Phi = core.vcov
    for L in np.eye(len(result.fixed_effects))[1:, None, :]:
        tp = L.T @ np.linalg.solve(L @ Phi @ L.T, L) @ Phi
        u = [tp @ p @ Phi for p in P]
        a1 = sum(
            W[i, j] * np.trace(u[i]) * np.trace(u[j]) for i in range(len(P)) for j in range(len(P))
        )
        a2 = sum(W[i, j] * np.sum(u[i] * u[j].T) for i in range(len(P)) for j in range(len(P)))
        g = (2 * a1 - 5 * a2) / (3 * a2)
        den = 3 + 2 * (1 - g)
        b = (a1 + 6 * a2) / 2
        v0, v1, v2 = 1 + g / den * b, 1 - (1 - g) / den * b, 1 - (3 - g) / den * b
        rho = (1 - a2) ** 2 / v1**2 * v0 / v2
        assert _kr_adjust(core, L)[1] == pytest.approx(4 + 3 / (rho - 1), rel=1e-9)


@pytest.mark.parametrize("method", [KENWARD_ROGER, SATTERTHWAITE])
def test_contrast_cov_is_the_tests_own_covariance(method: str) -> None:
    """Cov(L β̂) of a family is what each of its t tests uses: its diagonal is every row's SE²
    (contest), and its Satterthwaite form is L Cov(β̂) Lᵀ; the KR form is not (Φ_A ≠ Φ)."""
    d = _design(0.1, 4)
    d["system"] = np.where(d.run_id.isin(["r0", "r1", "r2"]), "C", d.system)
    m = fit(f'{FORMULAS[0]} + (0 + dummy(system, "C")|run_id)', d, reml=True)
    L = m.contrast_matrix([{"systemB": 1.0}, {"systemC": 1.0}, {"systemB": 1.0, "systemC": -1.0}])
    cov = m.contrast_cov(L, method)
    for j, row in enumerate(L):
        assert cov[j, j] == pytest.approx(m.contest(row[None, :], method).se ** 2, rel=1e-12)
    plain = L @ m.fixed_cov.to_numpy() @ L.T
    if method == SATTERTHWAITE:
        np.testing.assert_allclose(cov, plain, rtol=1e-12)
    else:
        assert np.all(np.diag(cov) > np.diag(plain))  # the bias adjustment inflates
    with pytest.raises(LmmError, match="unknown df method"):
        m.contrast_cov(L, "Wald")


@pytest.mark.parametrize("method", [KENWARD_ROGER, SATTERTHWAITE])
@pytest.mark.parametrize("formula", [FORMULAS[2], FORMULAS[6]])
def test_contest_rows_is_contest_of_each_row(formula: str, method: str, monkeypatch) -> None:
    """Many one-row contrasts of one fit tested together (the rank-one KR traces of all rows in
    shared products, in chunks) give each row's own contest: estimate, SE, df and p."""
    from infrepro.lmm import ddf

    monkeypatch.setattr(ddf, "ROWS_AT_ONCE", 3)  # several chunks and a partial one
    result = fit(formula, _design(0.15, seed=5), reml=True, keep_design=True)
    rows = np.random.default_rng(2).normal(size=(8, len(result.fixed_effects)))
    together = result.contest_rows(rows, method)
    assert len(together) == len(rows)
    for row, test in zip(rows, together, strict=True):
        alone = result.contest(row[None, :], method)
        assert (test.method, test.numdf) == (alone.method, alone.numdf)
        for name in ("estimate", "se", "statistic", "dendf", "log10_p"):
            assert getattr(test, name) == pytest.approx(getattr(alone, name), rel=1e-10), name


def test_one_row_df_at_a_equal_to_one_half_is_the_limit_4() -> None:
    """A1 = A2 = 1/2 exactly (as M's pairs give when run variances sit at 0) makes pbkrtest's
    v2 zero: the df is rho's limit, 4, as at any A a rounding away, not a division by zero."""
    from infrepro.lmm.ddf import _kr_df

    assert _kr_df(1, 0.5, 0.5)[0] == 4.0
    for a in (0.5 - 1e-12, 0.5 + 1e-12):
        assert _kr_df(1, a, a)[0] == pytest.approx(4.0, abs=1e-9)


def test_pair_products_term_by_term_equal_all_at_once(monkeypatch) -> None:
    """The Q_rs panels formed one term at a time (a small kr.PANEL_ENTRIES, as with many
    systems) give the Phi_A and W of all terms at once; Q is formed when asked for, each time
    the same."""
    from infrepro.lmm import kr

    core, at_once, by_term = _structured_both_ways(monkeypatch, "PANEL_ENTRIES", 1)
    assert _rel(at_once[0], by_term[0]) < 1e-12 and _rel(at_once[2], by_term[2]) < 1e-12
    _, _, Q = kr.kr_pieces(core.products(), core.theta, core.sigma, core.n)
    k = len(core.term_cols)  # random terms; index k is the residual
    assert len(Q) == len(list(Q)) == (k + 1) * (k + 2) // 2
    assert np.array_equal(Q[1, 2], Q[1, 2]) and Q[0, k].shape == Q[k, k].shape == (core.p,) * 2


def test_rest_columns_and_pair_sums_equal_the_products_pair_by_pair(monkeypatch) -> None:
    """The rest terms' panels from M_1's rest columns (formed once) give what M_1 applied to
    each term's E_s U gives; tr(Phi Q_rs) and sum W_rs Q_rs from the panels equal the sums
    over each Q_rs formed (the dense reference's way)."""
    from infrepro.lmm import kr

    core, by_columns, by_term = _structured_both_ways(monkeypatch, "REST_COLUMNS_ENTRIES", 0)
    assert _rel(by_columns[0], by_term[0]) < 1e-12 and _rel(by_columns[2], by_term[2]) < 1e-12
    monkeypatch.undo()
    _, _, Q = kr.kr_pieces(core.products(), core.theta, core.sigma, core.n)
    n_g = len(core.term_cols) + 1
    every = kr.PairMatrices({key: Q[key] for key in Q}, n_g)  # each Q_rs formed
    assert type(every).phi_traces is not type(Q).phi_traces
    np.testing.assert_allclose(Q.phi_traces(core.vcov), every.phi_traces(core.vcov), rtol=1e-12)
    w = np.random.default_rng(4).normal(size=(n_g, n_g))
    w = w + w.T
    np.testing.assert_allclose(Q.weighted_sum(w), every.weighted_sum(w), rtol=1e-10, atol=1e-12)


def _structured_both_ways(monkeypatch, name: str, value: int):  # type: ignore[no-untyped-def]
    """A fit's structured KR parts by default and with kr.<name> = value."""
    from infrepro.lmm import kr

    core = fit(FORMULAS[6], _design(0.15, seed=3), reml=True).ddf_core
    default = core.kr_parts("structured")
    core.clear_cache()
    monkeypatch.setattr(kr, name, value)
    return core, default, core.kr_parts("structured")


@pytest.mark.parametrize("entries", [25_000_000, 7])  # one chunk; a few rows at a time
def test_p_factors_give_the_dense_products(monkeypatch, entries: int) -> None:
    """kr.PFactors' traces, forms, pair traces and weighted sum equal the same sums over the
    dense P_r = -F_r'F_r (a factor of one row, one of more rows than columns compressed, one
    empty), in one chunk and in chunks that split a parameter's rows."""
    from infrepro.lmm import kr

    monkeypatch.setattr(kr, "GRAM_ENTRIES", entries)
    rng = np.random.default_rng(1)
    p = 4
    raw = [
        rng.normal(size=(1, p)),
        rng.normal(size=(9, p)),
        np.zeros((0, p)),
        rng.normal(size=(3, p)),
    ]
    factors = kr.PFactors([kr.PFactors.compressed(f) for f in raw])
    dense = [-(f.T @ f) for f in raw]
    assert len(factors) == 4 and len(factors.F) == 1 + 4 + 0 + 3
    for a, b in zip(factors, dense, strict=True):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
    h = rng.normal(size=(p, p))
    h = h + h.T
    w = rng.normal(size=(4, 4))
    w = w + w.T
    rows = rng.normal(size=(5, p))
    assert np.allclose(factors.traces(h), [np.trace(m @ h) for m in dense])
    assert np.allclose(factors.forms(rows), [[v @ m @ v for m in dense] for v in rows])
    pairs = [[np.trace(a @ h @ b @ h) for b in dense] for a in dense]
    assert np.allclose(factors.pair_traces(h), pairs)
    total = sum(w[r, s] * dense[r] @ h @ dense[s] for r in range(4) for s in range(4))
    assert np.allclose(factors.weighted_sum(w, h), total)
    again = kr.PFactors.of_dense(dense)
    assert np.allclose(again.pair_traces(h), pairs) and len(again[2]) == p
