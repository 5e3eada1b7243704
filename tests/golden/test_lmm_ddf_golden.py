"""Run-aware models and small-sample df against R (lme4 + lmerTest + pbkrtest).

Fixtures: tests/golden/fixtures_ddf/*.json, made by tests/golden/make_golden_ddf.R. Two checks:
- at lme4's own theta, every variance component, fixed effect, Satterthwaite and Kenward-Roger
  df, t/F statistic and p agrees with R (df 1e-3, p 1e-4 relative: the issue's tolerances; the
  df code is a port, so it agrees far more closely);
- our optimizer's fit is at least as good as lme4's (REML criterion no higher); where lme4
  converged, the fit and every test agree at our theta as well (variance components and SEs
  1e-4, df 1e-3, p 1e-4 relative); where lme4 stopped early (our criterion lower by more than
  evaluation noise), residual and total variance 1e-3 and df/p 1e-2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infrepro.lmm import fit

GOLDEN = Path(__file__).parent
CASES = sorted((GOLDEN / "fixtures_ddf").glob("*.json"))


def _load(case: Path) -> tuple[dict, pd.DataFrame]:
    spec = json.loads(case.read_text())
    data = pd.read_csv(GOLDEN / spec["data"]["path"])
    for col in spec["factors"]:
        data[col] = data[col].astype(str)
    return spec, data


def _our_theta(spec: dict, names: tuple[str, ...]) -> np.ndarray:
    """lme4's theta in our term order (lme4 orders terms by decreasing number of levels)."""
    keyed = dict(zip(spec["theta_terms"], spec["theta"], strict=True))
    return np.array([keyed[n if "|" in n else f"(Intercept)|{n}"] for n in names])


def _variance_key(name: str) -> str:
    return name if name == "Residual" or "|" in name else f"(Intercept)|{name}"


def _check_tests(spec: dict, result, df_rel: float, p_rel: float, se_rel: float) -> None:
    names = list(result.fixed_effects.index)
    assert names == spec["fixed_effect_names"]
    for test in spec["tests"]:
        L = np.asarray(test["L"], dtype=float)
        ours = result.contest(L, test["method"])
        label = f"{test['name']} ({test['method']})"
        assert ours.dendf == pytest.approx(test["df"], rel=df_rel), label
        assert ours.p_value == pytest.approx(test["p"], rel=p_rel), label
        if test["type"] == "t":
            assert ours.estimate == pytest.approx(test["estimate"], rel=1e-6, abs=1e-12), label
            assert ours.se == pytest.approx(test["se"], rel=se_rel), label
            assert ours.statistic == pytest.approx(test["t"], rel=se_rel), label
        else:
            assert ours.numdf == test["numdf"], label
            f_value = ours.statistic**2 if ours.numdf == 1 else ours.statistic  # F(1, .) = t^2
            assert f_value == pytest.approx(test["F"], rel=2 * se_rel), label


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_at_lme4_theta_everything_matches_r(case: Path) -> None:
    spec, data = _load(case)
    probe = fit(spec["formula"], data, reml=spec["reml"])
    theta = _our_theta(spec, probe.theta_names)
    result = fit(spec["formula"], data, reml=spec["reml"], theta=theta)
    assert result.criterion == pytest.approx(spec["reml_criterion"], rel=1e-9)
    for name, value in result.variance_components.items():
        expected = spec["variance_components"][_variance_key(str(name))]
        assert value == pytest.approx(expected, rel=1e-6, abs=1e-12), name
    _check_tests(spec, result, df_rel=1e-5, p_rel=1e-5, se_rel=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_our_optimum_is_at_least_as_good_and_agrees_where_lme4_converged(case: Path) -> None:
    spec, data = _load(case)
    result = fit(spec["formula"], data, reml=spec["reml"])
    reference = spec["reml_criterion"]
    noise = 1e-9 + 1e-13 * abs(reference)  # evaluation noise, as in test_lmm_golden.py
    assert result.criterion <= reference + noise
    if result.criterion < reference - noise:
        # lme4 stopped early along a flat direction: ours is higher, as the bar asks; the flat
        # direction trades variance between components, so compare residual and total only
        if any("failed to converge" in m for m in spec["lme4_messages"]):
            return  # lme4 warned that it did not converge; a converged twin fixture checks us
        ours, ref = result.variance_components, spec["variance_components"]
        assert ours["Residual"] == pytest.approx(ref["Residual"], rel=1e-3)
        assert ours.sum() == pytest.approx(sum(ref.values()), rel=1e-3)
        _check_tests(spec, result, df_rel=1e-2, p_rel=1e-2, se_rel=1e-3)
        return
    for name, value in result.variance_components.items():
        expected = spec["variance_components"][_variance_key(str(name))]
        assert value == pytest.approx(expected, rel=1e-4, abs=1e-9), name
    _check_tests(spec, result, df_rel=1e-3, p_rel=1e-4, se_rel=1e-4)


def test_cases_cover_both_methods_and_both_new_term_kinds() -> None:
    specs = [json.loads(c.read_text()) for c in CASES]
    methods = {t["method"] for s in specs for t in s["tests"]}
    assert methods == {"Satterthwaite", "Kenward-Roger"}
    formulas = " ".join(s["formula"] for s in specs)
    assert "dummy(" in formulas and "||" in formulas
    assert len(specs) >= 6


KR_CASES = [c for c in CASES if any(t["method"] == "Kenward-Roger" for t in _load(c)[0]["tests"])]


@pytest.mark.parametrize("how", ["dense", "structured"])
@pytest.mark.parametrize("case", KR_CASES, ids=[c.stem for c in KR_CASES])
def test_both_kenward_roger_computations_equal_pbkrtest(case: Path, how: str) -> None:
    """At lme4's theta, the dense reference and the structured KR (infrepro/lmm/kr.py) each
    give pbkrtest's ddf (1e-4 relative; the issue's tolerance) and p (1e-4)."""
    spec, data = _load(case)
    probe = fit(spec["formula"], data, reml=True)
    result = fit(spec["formula"], data, reml=True, theta=_our_theta(spec, probe.theta_names))
    result.ddf_core.kr_how = how
    assert np.allclose(result.ddf_core.kr_parts()[0], spec["vcov_beta_kr"], rtol=1e-6, atol=0)
    for test in spec["tests"]:
        if test["method"] != "Kenward-Roger":
            continue
        ours = result.contest(np.asarray(test["L"], dtype=float), "Kenward-Roger")
        assert ours.dendf == pytest.approx(test["df"], rel=1e-4), test["name"]
        assert ours.p_value == pytest.approx(test["p"], rel=1e-4), test["name"]


def test_kenward_roger_goldens_cover_a_boundary_fit_and_thousands_of_rows() -> None:
    specs = [_load(c)[0] for c in KR_CASES]
    assert len(specs) >= 5
    assert any(s["singular"] and 0.0 in s["theta"] for s in specs)
    assert max(s["nobs"] for s in specs) >= 3000


PER_SYSTEM = [c for c in CASES if "dummy(" in json.loads(c.read_text())["formula"]]


@pytest.mark.parametrize("case", PER_SYSTEM, ids=[c.stem for c in PER_SYSTEM])
def test_the_arrowhead_elimination_matches_r(case: Path) -> None:
    """A run variance per system, forced onto the arrowhead elimination (lmm/arrow.py, which
    auto picks at a hundred systems and more): at lme4's theta every number agrees with R as
    the segments-first elimination's do, and its own optimum is at least as good as lme4's."""
    spec, data = _load(case)
    assert spec["reml"]
    own = fit(spec["formula"], data, reml=True, path="arrow")
    assert own.path.startswith("arrow ("), own.path
    assert own.criterion <= spec["reml_criterion"] + 1e-9 + 1e-13 * abs(spec["reml_criterion"])
    theta = _our_theta(spec, own.theta_names)
    result = fit(spec["formula"], data, reml=True, theta=theta, path="arrow")
    assert result.criterion == pytest.approx(spec["reml_criterion"], rel=1e-9)
    for name, value in result.variance_components.items():
        expected = spec["variance_components"][_variance_key(str(name))]
        assert value == pytest.approx(expected, rel=1e-6, abs=1e-12), name
    vcov = np.asarray(spec["vcov_beta"], dtype=float)
    np.testing.assert_allclose(result.fixed_cov.to_numpy(), vcov, rtol=1e-6, atol=1e-14)
    _check_tests(spec, result, df_rel=1e-5, p_rel=1e-5, se_rel=1e-6)


def test_arrowhead_goldens_exist() -> None:
    assert len(PER_SYSTEM) >= 2
