"""The single-step max-t (docs/method.md §4c.10) against emmeans' ``adjust = "mvt"`` and mvtnorm.

Fixtures: tests/golden/fixtures_mvt/*.json, made by tests/golden/make_golden_mvt.R: model M of
§4c.1 on four designs (3, 5, 6 and 8 systems), ``emmeans(m, "system", lmer.df =
"kenward-roger")``, the contrasts with the baseline (``trt.vs.ctrl``) and all pairs, at lme4's
default fit and at the tight refit. Our engine evaluates M at lme4's theta (``default``) or at its
own optimum (``tight``), takes the contrasts and their Kenward-Roger covariance
(``LmmResult.contrast_cov``) and runs ``max_t``. Tolerances:

- estimates, SE 1e-6 / 1e-4 relative, df 1e-3 relative, the contrasts' covariance 1e-4 relative
  (as tests/golden/test_summary_golden.py), the integer df exactly;
- emmeans' adjusted p and CI bounds within 1e-3 absolute (emmeans integrates with mvtnorm's
  default abseps 1e-3 and finds its quantile to ptol 1e-3); where emmeans' own bound is more
  than 5e-4 from the precise reference (1-df contrasts), its critical value is checked on the
  probability scale instead: our P(max|T| ≥ q_emmeans) = α ± (2e-3 + our error);
- the precise reference (mvtnorm at abseps 1e-5 to 1e-4 by family size, uniroot to 1e-9):
  |p − p_ref| within our integration error (``MaxT.error``, three standard errors) plus the
  reference's reported error plus 2e-5 for the fit's last digits; the critical value on the same
  scale: our P(max|T| ≥ q_ref) equals α within that tolerance (the CI bounds then follow, as
  against emmeans).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infrepro.core.vocabulary import SYSTEM
from infrepro.lmm import KENWARD_ROGER, fit
from infrepro.stats.simultaneous import emmeans_df, max_t

GOLDEN = Path(__file__).parent
CASES = sorted((GOLDEN / "fixtures_mvt").glob("*.json"), key=lambda p: p.name)
FIT_SLACK = 2e-5  # p moved by the fit's last digits (df 1e-3 relative at most)


def _fitted(spec: dict, block: dict):
    """M at lme4's theta for the default fit, at our own optimum for the tight one."""
    frame = pd.read_csv(GOLDEN / spec["data"]["path"], dtype={"segment_id": str, "run_id": str})
    levels = {SYSTEM: spec["baseline"]}
    if block["fit"] == "tight":
        return fit(spec["formula"], frame, reml=True, reference_levels=levels)
    probe = fit(spec["formula"], frame, reml=True, reference_levels=levels)
    keyed = dict(zip(block["theta_terms"], block["theta"], strict=True))
    theta = np.array([keyed[n if "|" in n else f"(Intercept)|{n}"] for n in probe.theta_names])
    return fit(spec["formula"], frame, reml=True, reference_levels=levels, theta=theta)


def _cases() -> list[tuple[Path, int, int]]:
    out = []
    for path in CASES:
        spec = json.loads(path.read_text())
        for b, block in enumerate(spec["fits"]):
            out.extend((path, b, f) for f in range(len(block["families"])))
    return out


def _case_id(case: tuple[Path, int, int]) -> str:
    path, b, f = case
    spec = json.loads(path.read_text())
    block = spec["fits"][b]
    return f"{path.stem}-{block['fit']}-{block['families'][f]['family']}"


@pytest.fixture(scope="module", params=_cases(), ids=_case_id)
def family(request) -> tuple[dict, dict, object, np.ndarray]:
    """One family of one fit: its fixture, our contrasts' L, the fit and max_t inputs."""
    path, b, f = request.param
    spec = json.loads(path.read_text())
    block = spec["fits"][b]
    fam = block["families"][f]
    fitted = _fitted(spec, block)
    rows = []
    for row in fam["contrasts"]:
        weights = {}
        for system, sign in ((row["first"], 1.0), (row["second"], -1.0)):
            if system != spec["baseline"]:
                weights[f"{SYSTEM}{system}"] = weights.get(f"{SYSTEM}{system}", 0.0) + sign
        rows.append(weights)
    L = fitted.contrast_matrix(rows)
    return spec, fam, fitted, L


def test_contrasts_and_covariance(family) -> None:
    """Estimates, SE, df of each contrast and Cov(L β̂) under Kenward-Roger equal emmeans'."""
    _, fam, fitted, L = family
    cov = fitted.contrast_cov(L, KENWARD_ROGER)
    np.testing.assert_allclose(cov, np.array(fam["cov"]), rtol=1e-4, atol=1e-12)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(corr, np.array(fam["corr"]), rtol=1e-4, atol=1e-6)
    for j, (row, contrast) in enumerate(zip(fam["contrasts"], L, strict=True)):
        test = fitted.contest(contrast[None, :], KENWARD_ROGER)
        assert test.se**2 == pytest.approx(cov[j, j], rel=1e-12), row["label"]
        assert test.estimate == pytest.approx(row["estimate"], rel=1e-6, abs=1e-9), row["label"]
        assert test.se == pytest.approx(row["se"], rel=1e-4), row["label"]
        assert test.dendf == pytest.approx(row["df"], rel=1e-3), row["label"]


def test_integer_df(family) -> None:
    """emmeans' .fix.df on R's own df gives R's integer df."""
    _, fam, _, _ = family
    df = np.array([row["df"] for row in fam["contrasts"]])
    np.testing.assert_array_equal(emmeans_df(df), [row["df_mvt"] for row in fam["contrasts"]])


def _max_t(family):
    _, fam, fitted, L = family
    cov = fitted.contrast_cov(L, KENWARD_ROGER)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    tests = [fitted.contest(row[None, :], KENWARD_ROGER) for row in L]
    t = np.array([test.statistic for test in tests])
    df = np.array([test.dendf for test in tests])
    return tests, corr, df, max_t(t, df, corr, 0.05)


def test_against_emmeans(family) -> None:
    """Adjusted p and the simultaneous CI equal emmeans' summary/confint(adjust = "mvt"), 1e-3
    absolute. emmeans' own bounds stray further from the precise reference where the df is 1
    (its qmvt stops at ptol 1e-3, one call per contrast: sys5's D − E 9.6e-4, sys6's D − A
    1.6e-3): there its critical value must be what its contract allows, our P(max|T| ≥ q) =
    α ± (1e-3 abseps + 1e-3 ptol + our error)."""
    spec, fam, _, _ = family
    tests, corr, df, result = _max_t(family)
    q_emmeans = np.array([(r["upper_emmeans"] - r["estimate"]) / r["se"] for r in fam["contrasts"]])
    at_q = max_t(q_emmeans, df, corr, spec["alpha"])
    for j, row in enumerate(fam["contrasts"]):
        assert result.p_adjusted[j] == pytest.approx(row["p_emmeans"], abs=1e-3), row["label"]
        if abs(row["lower_emmeans"] - row["lower_ref"]) > 5e-4:
            slack = 2e-3 + result.error
            assert at_q.p_adjusted[j] == pytest.approx(spec["alpha"], abs=slack), row["label"]
            continue
        half = result.critical[j] * tests[j].se
        assert tests[j].estimate - half == pytest.approx(row["lower_emmeans"], abs=1e-3)
        assert tests[j].estimate + half == pytest.approx(row["upper_emmeans"], abs=1e-3)


def test_against_reference(family) -> None:
    """Adjusted p equal mvtnorm's at a tight abseps within both integrations' errors, and our
    family probability at the reference's critical value is α."""
    spec, fam, _, _ = family
    tests, corr, df, result = _max_t(family)
    for j, row in enumerate(fam["contrasts"]):
        slack = result.error + row["p_ref_error"] + FIT_SLACK
        assert result.p_adjusted[j] == pytest.approx(row["p_ref"], abs=slack), row["label"]
    for nu in np.unique(result.df_used):
        j = int(np.flatnonzero(result.df_used == nu)[0])
        q = fam["contrasts"][j]["critical_ref"]
        at_q = max_t(np.full(df.size, q), df, corr, spec["alpha"])
        slack = result.error + fam["contrasts"][j]["p_ref_error"] + FIT_SLACK
        assert at_q.p_adjusted[j] == pytest.approx(spec["alpha"], abs=slack), nu
