"""Cross-check against statsmodels MixedLM on small designs (ML and REML).

statsmodels' optimizer stops a little earlier than ours, so its log-likelihood may be slightly
lower (never higher beyond noise) and its estimates agree to about 1e-5..1e-4.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from infrepro.lmm import fit


def _one_factor(seed: int = 5, n_g: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "g": np.repeat([f"g{i:02d}" for i in range(n_g)], 6),
            "system": ["A", "B", "C"] * (2 * n_g),
        }
    )
    df["x"] = rng.normal(size=len(df))
    df["y"] = (
        1
        + 0.3 * (df.system == "B")
        + 0.5 * df.x
        + np.repeat(rng.normal(0, 0.7, n_g), 6)
        + rng.normal(0, 0.5, len(df))
    )
    drop = rng.choice(len(df), 20, replace=False)  # unbalanced
    return df.drop(drop).reset_index(drop=True)


def _crossed(seed: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        [(f"s{i:02d}", f"r{j}") for i in range(15) for j in range(4)], columns=["s", "r"]
    )
    s_eff = dict(zip(df.s.unique(), rng.normal(0, 1, 15), strict=True))
    r_eff = dict(zip(df.r.unique(), rng.normal(0, 0.5, 4), strict=True))
    df["y"] = df.s.map(s_eff) + df.r.map(r_eff) + rng.normal(0, 0.3, len(df))
    df["one"] = 1
    return df


def _statsmodels_fit(reml: bool, formula: str, df: pd.DataFrame, **model: object):
    """statsmodels' MixedLM fit of the same model, its convergence warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return smf.mixedlm(formula, df, **model).fit(reml=reml)


def _check_loglik(ours: float, theirs: float) -> None:
    assert ours >= theirs - 1e-9 * abs(theirs)
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("reml", [False, True])
def test_random_intercept_matches_statsmodels(reml: bool) -> None:
    df = _one_factor()
    ours = fit("y ~ system + x + (1|g)", df, reml=reml)
    sm = _statsmodels_fit(reml, "y ~ system + x", df, groups=df["g"])
    _check_loglik(ours.loglik, float(sm.llf))
    np.testing.assert_allclose(
        ours.fixed_effects.to_numpy(), sm.fe_params.to_numpy(), rtol=1e-4, atol=1e-5
    )
    assert ours.variance_components["g"] == pytest.approx(float(sm.cov_re.iloc[0, 0]), rel=1e-3)
    assert ours.variance_components["Residual"] == pytest.approx(float(sm.scale), rel=1e-3)
    np.testing.assert_allclose(ours.fixed_se.to_numpy(), sm.bse_fe.to_numpy(), rtol=1e-2)
    # conditional residuals y - X beta - Z b
    np.testing.assert_allclose(ours.residuals, sm.resid.to_numpy(), atol=1e-3)


@pytest.mark.parametrize("reml", [False, True])
def test_crossed_factors_match_statsmodels(reml: bool) -> None:
    df = _crossed()
    ours = fit("y ~ 1 + (1|s) + (1|r)", df, reml=reml)
    vc = {"s": "0 + C(s)", "r": "0 + C(r)"}
    sm = _statsmodels_fit(reml, "y ~ 1", df, groups="one", vc_formula=vc, re_formula="0")
    _check_loglik(ours.loglik, float(sm.llf))
    vcomp = dict(zip(sm.model.exog_vc.names, sm.vcomp, strict=True))
    assert ours.variance_components["s"] == pytest.approx(vcomp["s"], rel=1e-3)
    assert ours.variance_components["r"] == pytest.approx(vcomp["r"], rel=1e-3)
    assert ours.variance_components["Residual"] == pytest.approx(float(sm.scale), rel=1e-3)
    assert ours.fixed_effects["(Intercept)"] == pytest.approx(float(sm.fe_params.iloc[0]), rel=1e-4)
