"""Moderated run variances (docs/method.md §4b.12) against R's limma::squeezeVar.

Fixtures: tests/golden/fixtures_limma/*.json, made by tests/golden/make_golden_limma.R (1 to 30
variances, df 1 to 5, prior df finite, infinite and near 0, a zero variance, a single variance).
Tolerances: prior df, prior scale and posterior variances 1e-6 relative; the posterior df with
eBayes' cap min(f + d0, Σ f) 1e-6 relative.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from infrepro.stats.calibrated import squeeze_var

GOLDEN = Path(__file__).parent
CASES = sorted((GOLDEN / "fixtures_limma").glob("*.json"), key=lambda p: p.name)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_fixtures_cover_the_cases() -> None:
    prior_dfs = [float(_load(p)["df_prior"]) for p in CASES]
    assert len(CASES) >= 8
    assert any(math.isinf(d) for d in prior_dfs)
    assert any(0.0 < d < 0.2 for d in prior_dfs)
    assert any(2.0 < d < math.inf for d in prior_dfs)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_squeeze_var_equals_limma(path: Path) -> None:
    case = _load(path)
    got = squeeze_var(case["var"], case["df"])
    d0 = float(case["df_prior"])
    if math.isinf(d0):
        assert math.isinf(got.d0)
    else:
        assert got.d0 == pytest.approx(d0, rel=1e-6, abs=1e-12)
    assert got.s0_squared == pytest.approx(case["var_prior"], rel=1e-6)
    np.testing.assert_allclose(got.var_post, case["var_post"], rtol=1e-6)
    np.testing.assert_allclose(got.df_post, case["df_total"], rtol=1e-6)
