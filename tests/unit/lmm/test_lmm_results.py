"""Estimated marginal means, contrasts and predictions against hand computations."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from infrepro.lmm import LmmError, fit


def _balanced(seed: int = 3, n_seg: int = 40) -> pd.DataFrame:
    """Every segment sees every (system, bin) cell once: GLS = OLS, so cell means are exact."""
    rng = np.random.default_rng(seed)
    rows = [
        (f"s{s:02d}", sysname, b)
        for s in range(n_seg)
        for sysname in ("base", "compA", "compB")
        for b in ("hi", "lo")
    ]
    df = pd.DataFrame(rows, columns=["seg", "system", "bin"])
    seg_eff = dict(zip(df.seg.unique(), rng.normal(0, 0.3, n_seg), strict=True))
    sys_eff = {"base": 0.5, "compA": 0.45, "compB": 0.6}
    bin_eff = {"hi": 0.0, "lo": 0.1}
    df["y"] = (
        df.seg.map(seg_eff)
        + df.system.map(sys_eff)
        + df.bin.map(bin_eff)
        + 0.05 * (df.system == "compB") * (df.bin == "lo")
        + rng.normal(0, 0.1, len(df))
    )
    df["x"] = rng.uniform(5, 50, len(df))
    return df


def test_emmeans_balanced_equal_marginal_means() -> None:
    df = _balanced()
    res = fit("y ~ system * bin + (1|seg)", df, reml=False, reference_levels={"system": "base"})
    emm = res.emmeans("system")
    assert list(emm["level"]) == ["base", "compA", "compB"]
    raw = df.groupby("system")["y"].mean()
    np.testing.assert_allclose(emm["estimate"], raw[emm["level"]].to_numpy(), rtol=1e-10)
    # standard error from the hand-built linear combination of coefficients
    b = res.fixed_effects
    v = res.fixed_cov
    lvec = pd.Series(0.0, index=b.index)
    lvec["(Intercept)"] = 1.0
    lvec["systemcompB"] = 1.0
    lvec["binlo"] = 0.5
    lvec["systemcompB:binlo"] = 0.5
    row = emm.set_index("level").loc["compB"]
    assert row["estimate"] == pytest.approx(float(lvec @ b), rel=1e-12)
    assert row["se"] == pytest.approx(float(np.sqrt(lvec @ v @ lvec)), rel=1e-12)


def test_contrasts_all_pairs_in_level_order() -> None:
    df = _balanced()
    res = fit("y ~ system + bin + (1|seg)", df, reml=False, reference_levels={"system": "base"})
    con = res.contrasts("system")
    assert list(zip(con.level1, con.level2, strict=True)) == list(
        itertools.combinations(["base", "compA", "compB"], 2)
    )
    b, v = res.fixed_effects, res.fixed_cov
    # base - compA = -beta_compA ; compA - compB = beta_compA - beta_compB
    first = con.iloc[0]
    assert first["estimate"] == pytest.approx(-b["systemcompA"], rel=1e-12)
    assert first["se"] == pytest.approx(np.sqrt(v.loc["systemcompA", "systemcompA"]), rel=1e-12)
    last = con.iloc[2]
    d = b["systemcompA"] - b["systemcompB"]
    var = (
        v.loc["systemcompA", "systemcompA"]
        + v.loc["systemcompB", "systemcompB"]
        - 2 * v.loc["systemcompA", "systemcompB"]
    )
    assert last["estimate"] == pytest.approx(d, rel=1e-12)
    assert last["se"] == pytest.approx(np.sqrt(var), rel=1e-12)
    assert last["z"] == pytest.approx(d / np.sqrt(var), rel=1e-12)
    assert last["p_value"] == pytest.approx(2 * stats.norm.sf(abs(d / np.sqrt(var))), rel=1e-9)


def test_emmeans_with_covariate_at_its_mean() -> None:
    df = _balanced()
    res = fit("y ~ system * x + (1|seg)", df, reml=True, reference_levels={"system": "base"})
    b = res.fixed_effects
    xbar = df["x"].mean()
    emm = res.emmeans("system").set_index("level")["estimate"]
    assert emm["base"] == pytest.approx(b["(Intercept)"] + b["x"] * xbar, rel=1e-12)
    expected = b["(Intercept)"] + b["systemcompA"] + (b["x"] + b["systemcompA:x"]) * xbar
    assert emm["compA"] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(LmmError, match="numeric covariate"):
        res.emmeans("x")
    with pytest.raises(LmmError, match="not a fixed-effect variable"):
        res.emmeans("bin")


def test_predict_matches_hand_rows() -> None:
    df = _balanced()
    res = fit("y ~ system * x + (1|seg)", df, reml=False, reference_levels={"system": "base"})
    new = pd.DataFrame(
        {"system": ["base", "compB", "compB"], "x": [10.0, 10.0, 40.0]}, index=[7, 8, 9]
    )
    pred = res.predict(new)
    assert list(pred.index) == [7, 8, 9]
    b, v = res.fixed_effects, res.fixed_cov
    for i, (sysname, x) in enumerate(zip(new.system, new.x, strict=True)):
        row = pd.Series(0.0, index=b.index)
        row["(Intercept)"] = 1.0
        row["x"] = x
        if sysname == "compB":
            row["systemcompB"] = 1.0
            row["systemcompB:x"] = x
        assert pred["estimate"].iloc[i] == pytest.approx(float(row @ b), rel=1e-12)
        assert pred["se"].iloc[i] == pytest.approx(float(np.sqrt(row @ v @ row)), rel=1e-12)
    with pytest.raises(LmmError, match="unknown level"):
        res.predict(pd.DataFrame({"system": ["nope"], "x": [1.0]}))
    with pytest.raises(LmmError, match="lacks column 'x'"):
        res.predict(pd.DataFrame({"system": ["base"]}))


def test_result_fields_are_consistent() -> None:
    df = _balanced()
    res = fit("y ~ system + (1|seg)", df, reml=True)
    assert res.reml and res.formula == "y ~ system + (1|seg)"
    assert res.nobs == len(df) and res.ngroups == {"seg": 40} and res.n_fixed == 3
    vc = res.variance_components
    assert list(vc.index) == ["seg", "Residual"]
    assert vc["Residual"] == pytest.approx(res.sigma**2)
    assert vc["seg"] == pytest.approx((res.theta[0] * res.sigma) ** 2)
    assert np.allclose(res.fixed_se, np.sqrt(np.diag(res.fixed_cov)))
    assert res.residuals.shape == (len(df),)
    assert abs(res.residuals.mean()) < 1e-10
    assert res.converged and not res.singular and res.messages == []
    # REML is the default, as in lmer
    assert fit("y ~ system + (1|seg)", df).loglik == pytest.approx(res.loglik, rel=1e-12)
