"""infrepro.lmm against R lme4 1.1-31 golden fits (tests/golden/fixtures/*.json).

Acceptance rule, per fixture:
- our criterion evaluated at lme4's theta equals lme4's ``deviance_criterion`` (1e-9 relative):
  the objective is lme4's, independently of any optimizer;
- log-likelihood within 1e-6 relative of lme4's and never lower than lme4's - 1e-6 |loglik|;
- fixed effects 1e-4 relative, nobs and ngroups exact;
- variance components 1e-4 relative (1e-8 absolute for components at zero), fixed-effect
  standard errors 1e-4 relative and the singular flag equal, **unless lme4 stopped early**:
  lme4's optimizer (default nloptwrap/BOBYQA) stops along flat directions, typically a facet
  with 2 or 3 levels or two confounded facets. We call lme4's end point early when our own
  criterion is lower at our optimum than at lme4's theta by more than evaluation noise. Then
  only the residual variance and the total variance are compared (1e-3 relative), since the
  flat direction trades variance between facets.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infrepro.lmm import LmmResult, deviance_function, fit

GOLDEN = Path(__file__).resolve().parent
RESOURCES = Path(__file__).resolve().parents[2] / "resources"  # data.source "resources"
FIXTURES = sorted((GOLDEN / "fixtures").glob("*.json"))
assert FIXTURES, "no golden fixtures in tests/golden/fixtures"

LL_REL = 1e-6
COEF_REL = 1e-4
VC_ABS_ZERO = 1e-8
CRIT_REL = 1e-9
FLAT_REL = 1e-3


def _early_tol(dev: float) -> float:
    """Criterion differences below this are evaluation noise."""
    return 1e-9 + 1e-13 * abs(dev)


def _load_fixture(path: Path) -> dict:
    return json.loads(path.read_text())


@lru_cache(maxsize=4)
def _read_csv(path: str, string_cols: tuple[str, ...]) -> pd.DataFrame:
    return pd.read_csv(
        path, dtype={c: str for c in string_cols}, keep_default_na=False, na_values=[""]
    )


def load_case_data(fx: dict) -> pd.DataFrame:
    """The golden loader contract (make_golden.R): factor and filter columns as strings,
    filter rows, then apply the recipe."""
    spec = fx["data"]
    base = {"resources": RESOURCES, "local": GOLDEN}[spec["source"]]
    filt = spec.get("filter") or {}
    cols = tuple(sorted(set(fx["factors"]) | set(filt)))
    df = _read_csv(str(base / spec["path"]), cols)
    for col, allowed in filt.items():
        df = df[df[col].astype(str).isin([str(a) for a in allowed])]
    df = df.reset_index(drop=True)
    if spec.get("recipe") == "len_class":
        length = df["src_length"].astype(float)
        df = df.assign(
            len_class=np.where(
                length <= 15, "short", np.where(length <= 55, "typical", "very long")
            )
        )
    elif spec.get("recipe") is not None:
        raise AssertionError(f"unknown recipe {spec['recipe']!r}")
    return df


@cache
def _fitted(case_path: str) -> tuple[dict, LmmResult, float, float]:
    """Our fit, our criterion at lme4's theta, and our criterion at our theta."""
    fx = _load_fixture(Path(case_path))
    df = load_case_data(fx)
    res = fit(fx["formula"], df, reml=fx["reml"], factors=fx["factors"])
    crit = deviance_function(fx["formula"], df, reml=fx["reml"], factors=fx["factors"])
    lme4_theta = dict(zip(fx["theta_names"], fx["theta"], strict=True))
    theta = np.array([lme4_theta[name] for name in res.theta_names])
    return fx, res, crit(theta), crit(res.theta)


@pytest.fixture(params=FIXTURES, ids=[p.stem for p in FIXTURES])
def case(request: pytest.FixtureRequest) -> tuple[dict, LmmResult, float, float]:
    return _fitted(str(request.param))


def _lme4_early(fx: dict, ours_at_lme4: float, ours_at_ours: float) -> bool:
    return ours_at_lme4 - ours_at_ours > _early_tol(fx["deviance_criterion"])


def test_criterion_at_lme4_theta(case: tuple) -> None:
    fx, _, at_lme4, _ = case
    ref = fx["deviance_criterion"]
    assert at_lme4 == pytest.approx(ref, rel=CRIT_REL, abs=1e-9)


def test_loglik(case: tuple) -> None:
    fx, res, _, _ = case
    ref = fx["loglik"]
    assert res.converged
    assert res.loglik >= ref - LL_REL * abs(ref)
    assert res.loglik == pytest.approx(ref, rel=LL_REL)
    assert res.loglik == pytest.approx(-0.5 * res.criterion)


def test_fixed_effects(case: tuple) -> None:
    fx, res, _, _ = case
    assert list(res.fixed_effects.index) == list(fx["fixed_effects"])
    for name, ref in fx["fixed_effects"].items():
        assert res.fixed_effects[name] == pytest.approx(ref, rel=COEF_REL, abs=1e-12), name


def test_counts(case: tuple) -> None:
    fx, res, _, _ = case
    assert res.nobs == fx["nobs"]
    assert res.ngroups == fx["ngroups"]
    assert res.n_fixed == len(fx["fixed_effects"])


def test_variance_components(case: tuple) -> None:
    fx, res, at_lme4, at_ours = case
    ref = pd.Series(fx["variance_components"], dtype=float)
    ours = res.variance_components
    assert list(ours.index) == list(ref.index)
    if _lme4_early(fx, at_lme4, at_ours):
        assert ours["Residual"] == pytest.approx(ref["Residual"], rel=FLAT_REL)
        assert ours.sum() == pytest.approx(ref.sum(), rel=FLAT_REL)
        return
    for name, value in ref.items():
        if value < VC_ABS_ZERO:
            assert abs(ours[name] - value) <= VC_ABS_ZERO, name
        else:
            assert ours[name] == pytest.approx(value, rel=COEF_REL), name
    assert res.sigma == pytest.approx(fx["sigma"], rel=COEF_REL)
    assert res.singular == fx["singular"]


def test_fixed_se_and_cov(case: tuple) -> None:
    fx, res, at_lme4, at_ours = case
    rel = FLAT_REL * 10 if _lme4_early(fx, at_lme4, at_ours) else COEF_REL
    for name, ref in fx["fixed_se"].items():
        assert res.fixed_se[name] == pytest.approx(ref, rel=rel), name
    cov_ref = np.array(fx["fixed_cov"], dtype=float)
    scale = np.sqrt(np.outer(np.diag(cov_ref), np.diag(cov_ref)))
    assert np.max(np.abs(res.fixed_cov.to_numpy() - cov_ref) / scale) <= rel * 2
