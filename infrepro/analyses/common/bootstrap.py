"""Parametric bootstrap of a likelihood-ratio test (Halekoh & Hojsgaard 2014, pbkrtest's
PBmodcomp), the optional check of the headline comparison (``analyses.bootstrap_lrt``).

Responses are simulated from the REML fit of H0 (fixed effects, every random term and the
residual at their estimates), both models are refitted by ML on each, and
p = (1 + #{LR* >= LR}) / (1 + samples): the reference distribution of LR under H0 without the
chi-square approximation, whose small-sample error it checks (docs/method.md §4b).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from infrepro.lmm import LmmError, fit, lrt


@dataclass(frozen=True)
class BootstrapLrt:
    """Observed LR, its df, the bootstrap p, the number of samples that were fitted and the
    number whose ML refit failed (dropped from p, reported)."""

    lr_stat: float
    df: int
    p_value: float
    samples: int
    failed: int = 0

    @property
    def method(self) -> str:
        """``parametric bootstrap (98 of 100 samples; 2 refits failed)``."""
        total = self.samples + self.failed
        return (
            f"parametric bootstrap ({self.samples} of {total} samples; {self.failed} refits failed)"
        )


def bootstrap_lrt(
    rows: pd.DataFrame,
    h1: str,
    h0: str,
    *,
    samples: int,
    seed: int,
    reference_levels: Mapping[str, str] | None = None,
) -> BootstrapLrt:
    """The parametric-bootstrap p of the ML LR test of ``h1`` against ``h0`` (seeded)."""
    levels = dict(reference_levels or {})

    def lr(data: pd.DataFrame) -> tuple[float, int]:
        m1 = fit(h1, data, reml=False, reference_levels=levels)
        m0 = fit(h0, data, reml=False)
        test = lrt(m0, m1)
        return test.lr_stat, test.df

    observed, df = lr(rows)
    null = fit(h0, rows, reml=True, keep_design=True)
    core = null.ddf_core
    if core is None:
        raise LmmError("the H0 fit carries no model core")
    lam = np.zeros(core.Z.shape[1])
    for k, cols in enumerate(core.term_cols):
        lam[cols] = core.theta[k] * core.sigma
    mean = core.X @ core.beta
    rng = np.random.default_rng(seed)
    work = rows.copy()
    count = fitted = 0
    for _ in range(samples):
        y = mean + core.Z @ (lam * rng.standard_normal(len(lam)))
        work[null.response] = y + core.sigma * rng.standard_normal(len(y))
        try:
            value, _ = lr(work)
        except LmmError:
            continue
        fitted += 1
        count += value >= observed
    return BootstrapLrt(observed, df, (count + 1) / (fitted + 1), fitted, samples - fitted)
