"""The arrowhead elimination (lmm/arrow.py): a run variance per system, every system's columns
eliminated before the segments, equal to the segments-first elimination on the same model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import infrepro.lmm.profiled as profiled
from infrepro.lmm import fit
from infrepro.lmm.arrow import confine_fixed, mapped, row_parts
from infrepro.lmm.fit import _devfun, _prepare

SYSTEMS = ["A", "B", "C", "D", "E", "F"]


def _runs(seed: int = 0, n_seg: int = 30, runs: int = 3, drop: float = 0.1) -> pd.DataFrame:
    """Systems x runs x segments (some cells dropped), a numeric and a binned property, run
    intercepts and slopes with a different SD per system."""
    rng = np.random.default_rng(seed)
    length = rng.integers(5, 60, n_seg).astype(float)
    rows = [
        (sys, f"{sys}:{r}", f"s{s:02d}", length[s])
        for sys in SYSTEMS
        for r in range(runs)
        for s in range(n_seg)
        if rng.random() >= drop
    ]
    df = pd.DataFrame(rows, columns=["system", "run_id", "segment_id", "length"])
    seg = rng.normal(0, 1.0, n_seg)
    sys_sd = dict(zip(SYSTEMS, rng.uniform(0.05, 0.6, len(SYSTEMS)), strict=True))
    run_eff = {rid: rng.normal(0, sys_sd[rid.split(":")[0]]) for rid in df["run_id"].unique()}
    run_slope = {rid: rng.normal(0, 0.01) for rid in df["run_id"].unique()}
    df["length_c"] = df["length"] - df["length"].mean()
    df["length_bin"] = pd.cut(df["length"], [0, 20, 40, 100], labels=["short", "mid", "long"])
    df["length_bin"] = df["length_bin"].astype(str)
    df["score"] = (
        df["segment_id"].str[1:].astype(int).map(lambda s: seg[s])
        + df["system"].map(dict(zip(SYSTEMS, rng.normal(0, 0.3, len(SYSTEMS)), strict=True)))
        + 0.02 * df["length"]
        + df["run_id"].map(run_eff)
        + df["run_id"].map(run_slope) * df["length_c"]
        + rng.normal(0, 0.5, len(df))
    )
    return df


RUN_TERMS = " + ".join(f'(0 + dummy(system, "{s}")|run_id)' for s in SYSTEMS)
FORMULAS = {
    "numeric": f"score ~ system * length + (1|segment_id) + {RUN_TERMS} + (0 + length_c | run_id)",
    "binned": f"score ~ system * length_bin + (1|segment_id) + {RUN_TERMS} + (1|run_id:length_bin)",
}


@pytest.mark.parametrize("kind", sorted(FORMULAS))
def test_criterion_gradient_and_solution_equal_the_segments_first_ones(kind: str) -> None:
    df = _runs()
    prep = _prepare(FORMULAS[kind], df, None, None)
    arrow, dense = _devfun(prep, True, "arrow"), _devfun(prep, True, "dense")
    assert (arrow.path, dense.path) == ("arrow", "dense")
    rng = np.random.default_rng(1)
    k = len(prep.terms)
    for trial in range(4):
        theta = rng.uniform(0.05, 1.5, k)
        theta[-1] = 0.01 if kind == "numeric" else theta[-1]
        if trial == 1:
            theta[2] = 0.0  # a system's run variance on the boundary
        va, ga = arrow.value_and_grad(theta)
        vd, gd = dense.value_and_grad(theta)
        assert va == pytest.approx(vd, rel=1e-12)
        np.testing.assert_allclose(ga, gd, rtol=1e-7, atol=1e-7 * np.max(np.abs(gd)))
        sa, sd = arrow.solve(theta), dense.solve(theta)
        np.testing.assert_allclose(sa.beta, sd.beta, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(sa.unscaled_cov, sd.unscaled_cov, rtol=1e-8, atol=1e-14)
        for ba, bd in zip(sa.b, sd.b, strict=True):
            np.testing.assert_allclose(ba, bd, rtol=1e-8, atol=1e-12)
        assert (sa.r2, sa.logdet_l, sa.logdet_rx) == pytest.approx(
            (sd.r2, sd.logdet_l, sd.logdet_rx), rel=1e-10
        )


def test_a_fit_on_the_arrow_path_equals_the_segments_first_fit() -> None:
    df = _runs(seed=3)
    formula = FORMULAS["numeric"]
    arrow = fit(formula, df, path="arrow")
    dense = fit(formula, df, path="dense")
    assert arrow.path.startswith("arrow (6 parts")
    assert arrow.criterion == pytest.approx(dense.criterion, rel=1e-10)
    np.testing.assert_allclose(arrow.theta, dense.theta, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arrow.fixed_effects, dense.fixed_effects, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(arrow.fixed_cov, dense.fixed_cov, rtol=1e-4, atol=1e-12)


def test_a_large_run_slope_is_evaluated_by_the_segments_first_elimination() -> None:
    """A system's fixed columns lie in the span of its runs' columns: at a large run-slope
    theta their pivot cancels (ARROW_PIVOT_MIN) and the other elimination takes over, so the
    criterion is the same number, not one off by 1e-9 of itself."""
    df = _runs(seed=5)
    prep = _prepare(FORMULAS["numeric"], df, None, None)
    arrow, dense = _devfun(prep, True, "arrow"), _devfun(prep, True, "dense")
    theta = np.full(len(prep.terms), 0.5)
    theta[-1] = 100.0
    assert arrow(theta) == dense(theta)
    assert arrow._arrow_core(theta) is None
    theta[-1] = 0.001
    assert arrow._arrow_core(theta) is not None


def test_the_arrow_path_needs_reml_and_a_partition() -> None:
    df = _runs()
    prep = _prepare(FORMULAS["numeric"], df, None, None)
    with pytest.raises(ValueError, match="REML"):
        _devfun(prep, False, "arrow")
    shared = _prepare("score ~ system + (1|segment_id) + (1|run_id)", df, None, None)
    with pytest.raises(ValueError, match="part the rows"):
        _devfun(shared, True, "arrow")
    assert _devfun(shared, True, "auto").path != "arrow"


def test_row_parts_by_dummy_term_and_by_its_level() -> None:
    a = np.array([1.0, 1.0, 0.0, 0.0])
    b = np.array([0.0, 0.0, 1.0, 1.0])
    runs = np.array([0, 1, 0, 0])
    coarse, fine = row_parts([runs, runs, runs, runs], [None, a, b, b.copy()], 4)
    np.testing.assert_array_equal(coarse, [0, 0, 1, 1])
    np.testing.assert_array_equal(fine, [0, 1, 2, 2])  # by system, then run
    one_run = row_parts([runs] * 2, [a, b], 4)
    assert len(one_run) == 2
    # rows of no dummy() term (systems with one run): one more part
    c = np.array([0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(row_parts([runs] * 2, [a, c], 4)[0], [0, 0, 1, 2])
    assert row_parts([runs], [a], 4) and not row_parts([runs], [None], 4)
    assert not row_parts([runs] * 2, [a, np.array([0.0, 1.0, 1.0, 1.0])], 4)  # a row twice
    assert not row_parts([runs], [np.array([0.0, 0.0, 2.0, 1.0])], 4)  # a slope parts nothing


def test_treatment_contrasts_are_confined_by_a_unipotent_map() -> None:
    """The intercept minus every other system's indicator is the baseline's indicator: each
    column of X A lies in one system's rows, and det A = 1 keeps log|R_X|^2."""
    parts = np.repeat([0, 1, 2], 4)
    d = np.arange(12, dtype=float)
    ind = [(parts == s).astype(float) for s in range(3)]
    X = np.column_stack([np.ones(12), ind[1], ind[2], d, ind[1] * d, ind[2] * d])
    a = confine_fixed(X, parts)
    assert np.linalg.det(a) == pytest.approx(1.0)
    xa = X @ a
    np.testing.assert_array_equal(mapped(X, a), xa)
    for j in range(X.shape[1]):
        assert len(np.unique(parts[xa[:, j] != 0])) == 1, j
    np.testing.assert_array_equal(xa[:, 0], ind[0])
    np.testing.assert_array_equal(xa[:, 3], ind[0] * d)


def test_systems_with_one_run_share_one_part() -> None:
    """Two systems with one run have no run term (conditional.run_intercepts, headline_formula);
    their rows form one more part, and the fit is the segments-first one's."""
    df = _runs(seed=7)
    df = df[~df["run_id"].isin(["E:1", "E:2", "F:1", "F:2"])].reset_index(drop=True)
    terms = " + ".join(f'(0 + dummy(system, "{s}")|run_id)' for s in SYSTEMS[:4])
    formula = f"score ~ system + (1|segment_id) + {terms}"
    arrow = fit(formula, df, path="arrow")
    dense = fit(formula, df, path="dense")
    assert arrow.path.startswith("arrow (5 parts")
    assert arrow.criterion == pytest.approx(dense.criterion, rel=1e-10)
    np.testing.assert_allclose(arrow.fixed_cov, dense.fixed_cov, rtol=1e-4, atol=1e-12)


def test_many_runs_per_system_are_parted_by_run() -> None:
    """Two systems with 40 runs each: by system, a block holds 82 columns (runs^3 per
    evaluation); by run, two, the four fixed columns in the rest. The cheaper is taken, and
    the fit is the segments-first one's."""
    rng = np.random.default_rng(11)
    rows = [
        (s, f"{s}:{r}", f"g{g:02d}", float(g % 7))
        for s in ("A", "B")
        for r in range(40)
        for g in range(20)
        if rng.random() > 0.05
    ]
    df = pd.DataFrame(rows, columns=["system", "run_id", "segment_id", "x"])
    df["x_c"] = df["x"] - df["x"].mean()
    df["score"] = (
        df["segment_id"].str[1:].astype(int) * 0.1
        + df["run_id"].map({r: rng.normal(0, 0.3) for r in df["run_id"].unique()})
        + rng.normal(0, 0.5, len(df))
    )
    formula = (
        'score ~ system * x + (1|segment_id) + (0 + dummy(system, "A")|run_id)'
        ' + (0 + dummy(system, "B")|run_id) + (0 + x_c | run_id)'
    )
    arrow = fit(formula, df, path="arrow")
    dense = fit(formula, df, path="dense")
    assert arrow.path.startswith("arrow (80 parts, block size 2,"), arrow.path
    assert arrow.criterion == pytest.approx(dense.criterion, rel=1e-10)
    np.testing.assert_allclose(arrow.fixed_cov, dense.fixed_cov, rtol=1e-4, atol=1e-12)


def test_where_the_other_elimination_is_sparse_its_gradient_is_by_differences() -> None:
    df = _runs(seed=5)
    prep = _prepare(FORMULAS["numeric"], df, None, None)
    arrow, dense = _devfun(prep, True, "arrow"), _devfun(prep, True, "dense")
    args = list(arrow._schur_args)
    args[5] = "sparse"
    arrow._impl = profiled._schur(*args, arrow.layout)
    assert not arrow.impl.has_gradient
    theta = np.full(len(prep.terms), 0.5)
    theta[-1] = 10.0  # the arrowhead would lose digits: the sparse elimination evaluates
    assert arrow._arrow_core(theta) is None
    va, ga = arrow.value_and_grad(theta)
    vd, gd = dense.value_and_grad(theta)
    assert va == arrow.impl.criterion(*_pieces(arrow.impl.core(theta)))
    assert va == pytest.approx(vd, rel=1e-10)  # the sparse and the dense elimination
    np.testing.assert_allclose(ga, gd, rtol=1e-3, atol=1e-4 * np.max(np.abs(gd)))


def _pieces(core: profiled.Core) -> tuple[float, np.ndarray]:
    return core.logdet_l, core.lx


def test_auto_looks_for_the_arrowhead_only_where_an_evaluation_is_costly(monkeypatch) -> None:
    """Below ARROW_MIN_WORK of segments-first work per evaluation a fit does not build the
    partition and joint cross-products (a pass over its rows) to compare; above, the cheaper."""
    df = _runs()
    prep = _prepare(FORMULAS["binned"], df, None, None)
    assert _devfun(prep, True, "auto").path == "dense"
    monkeypatch.setattr(profiled, "ARROW_MIN_WORK", 0.0)
    monkeypatch.setattr(profiled, "ARROW_GAIN", 1e9)  # any arrowhead counts as cheaper
    assert _devfun(prep, True, "auto").path == "arrow"
    assert _devfun(prep, False, "auto").path == "dense"  # ML: never


def test_a_partition_whose_shared_columns_cannot_fit_builds_no_joint_matrix(monkeypatch) -> None:
    """shared_levels counts the random columns with rows in several parts (the segments, in
    every system's rows), a lower bound of the rest's width: at or above ARROW_WIDTH_MAX the
    partition is dropped before [Z X y] is built (4,000,000 rows at 100,000 segments), and the
    fit takes the segments-first elimination (with the default cap the same fit takes the
    arrowhead: the test above)."""
    from infrepro.lmm.arrow import shared_levels

    df = _runs()
    prep = _prepare(FORMULAS["binned"], df, None, None)
    segments = df["segment_id"].nunique()
    parts = row_parts(prep.codes, prep.weights, len(df))
    assert parts and all(shared_levels(prep.codes, prep.weights, p) >= segments for p in parts)
    monkeypatch.setattr(profiled, "ARROW_MIN_WORK", 0.0)
    monkeypatch.setattr(profiled, "ARROW_GAIN", 1e9)
    monkeypatch.setattr(profiled, "ARROW_WIDTH_MAX", segments)

    def refused(*_: object) -> None:
        raise AssertionError("the joint matrix was built for a partition that cannot fit")

    monkeypatch.setattr(profiled, "joint_matrix", refused)
    assert _devfun(prep, True, "auto").path == "dense"
