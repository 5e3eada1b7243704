"""Likelihood ratio tests: statistic, df, chi-square p, and the refusals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from infrepro.lmm import LmmError, LrtResult, fit, lrt


def _data(seed: int = 11, n_seg: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "seg": np.repeat([f"s{i}" for i in range(n_seg)], 6),
            "system": ["base", "comp", "alt"] * (2 * n_seg),
        }
    )
    df["y"] = (
        np.repeat(rng.normal(0, 1, n_seg), 6)
        + 0.15 * (df.system == "comp")
        + rng.normal(0, 0.5, len(df))
    )
    return df


def test_lrt_statistic_df_and_p() -> None:
    df = _data()
    m1 = fit("y ~ system + (1|seg)", df, reml=False)
    m0 = fit("y ~ 1 + (1|seg)", df, reml=False)
    out = lrt(m0, m1)
    assert isinstance(out, LrtResult)
    assert out.df == 2
    assert out.lr_stat == pytest.approx(2 * (m1.loglik - m0.loglik), rel=1e-12)
    assert out.p_value == pytest.approx(stats.chi2.sf(out.lr_stat, 2), rel=1e-12)


def test_lrt_refusals() -> None:
    df = _data()
    m1 = fit("y ~ system + (1|seg)", df, reml=False)
    m0 = fit("y ~ 1 + (1|seg)", df, reml=False)
    with pytest.raises(LmmError, match="more fixed effects"):
        lrt(m1, m0)
    r1 = fit("y ~ system + (1|seg)", df, reml=True)
    r0 = fit("y ~ 1 + (1|seg)", df, reml=True)
    with pytest.raises(LmmError, match="REML fits with different fixed effects"):
        lrt(r0, r1)
    with pytest.raises(LmmError, match="ML fit with a REML fit"):
        lrt(m0, r1)
    small = fit("y ~ system + (1|seg)", df.iloc[:-6], reml=False)
    with pytest.raises(LmmError, match="different numbers of rows"):
        lrt(m0, small)
    other = fit("y ~ system + (1|seg)", df.assign(y=df.y * 2), reml=False)
    with pytest.raises(LmmError, match="different responses"):
        lrt(m0, other)
    df2 = df.assign(run=np.tile(["r1", "r2", "r3", "r4", "r5", "r6"], len(df) // 6))
    run_aware = fit("y ~ system + (1|seg) + (1|run)", df2, reml=False)
    with pytest.raises(LmmError, match="random terms differ"):
        lrt(m0, run_aware)


def test_lrt_clips_tiny_negative_noise() -> None:
    df = _data()
    m1 = fit("y ~ system + (1|seg)", df, reml=False)
    m0 = fit("y ~ 1 + (1|seg)", df, reml=False)
    noisy = replace(m0, loglik=m1.loglik + 1e-9)
    out = lrt(noisy, m1)
    assert out.lr_stat == 0.0 and out.p_value == 1.0
    worse = replace(m0, loglik=m1.loglik + 5.0)
    with pytest.raises(LmmError, match="not nested"):
        lrt(worse, m1)


def test_kreutzer_reference_lrt(kreutzer_dir: Path) -> None:
    """R lme4 values from resources/kreutzer2020/README.md."""
    df = pd.read_csv(
        kreutzer_dir / "data_ter.csv.gz",
        dtype={"sentence_id": str, "system": str, "replication": str},
    )
    m1 = fit("ter ~ system + (1|sentence_id)", df, reml=False)
    m0 = fit("ter ~ 1 + (1|sentence_id)", df, reml=False)
    out = lrt(m0, m1)
    assert m1.loglik == pytest.approx(7746.77674, abs=1e-5)
    assert m0.loglik == pytest.approx(7729.73199, abs=1e-5)
    assert out.df == 2
    assert out.lr_stat == pytest.approx(34.09, abs=5e-3)
    assert out.p_value == pytest.approx(3.959e-08, rel=1e-3)
    assert m1.sigma == pytest.approx(0.0590451, rel=1e-5)
    assert m1.variance_components["sentence_id"] == pytest.approx(0.0640118, rel=1e-5)
    length = df["src_length"]
    df["len_class"] = np.where(
        length <= 15, "short", np.where(length <= 55, "typical", "very long")
    )
    joint = fit("ter ~ system * len_class + (1|sentence_id)", df, reml=False)
    additive = fit("ter ~ system + len_class + (1|sentence_id)", df, reml=False)
    inter = lrt(additive, joint)
    assert inter.df == 4
    assert inter.lr_stat == pytest.approx(32.435, abs=5e-3)
    assert inter.p_value == pytest.approx(1.559e-06, rel=1e-3)
