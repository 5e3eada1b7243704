"""The fitted model: estimates, diagnostics, estimated marginal means, contrasts, predictions."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from infrepro.lmm.ddf import (
    KENWARD_ROGER,
    SATTERTHWAITE,
    ContrastTest,
    DdfCore,
    contest,
    contest_rows,
)
from infrepro.lmm.design import FixedDesign, is_categorical
from infrepro.lmm.errors import LmmError
from infrepro.plumbing.blas import single_threaded_blas

SINGULAR_TOL = 1e-4  # lme4's isSingular() tolerance on theta (docs/method.md §4.6.1)


@dataclass(frozen=True, eq=False)
class LmmResult:
    """A fitted random-intercept linear mixed model (the names are a stable contract).

    ``loglik`` is lme4's: the ML log-likelihood, or for REML fits minus half the REML
    criterion. ``variance_components`` is indexed by the random term as written in the formula
    (nested ``(1|a/b)`` gives ``a`` and ``a:b``) plus ``Residual``.
    """

    formula: str
    reml: bool
    response: str
    loglik: float
    criterion: float
    fixed_effects: pd.Series
    fixed_cov: pd.DataFrame
    fixed_se: pd.Series
    variance_components: pd.Series
    sigma: float
    theta: np.ndarray
    theta_names: tuple[str, ...]
    converged: bool
    singular: bool
    nobs: int
    ngroups: dict[str, int]
    residuals: np.ndarray
    messages: list[str]
    n_evals: int = 0
    path: str = ""
    design: FixedDesign | None = field(default=None, repr=False)
    response_digest: str = field(default="", repr=False)
    ddf_core: DdfCore | None = field(default=None, repr=False)

    @property
    def reported_components(self) -> pd.Series:
        """``variance_components`` with every term at the boundary (theta_k < SINGULAR_TOL,
        lme4's isSingular tolerance) set to exactly 0: what the tables report (§4.6.1)."""
        at_boundary = dict(zip(self.theta_names, self.theta < SINGULAR_TOL, strict=True))
        return self.variance_components.where(
            [not at_boundary.get(name, False) for name in self.variance_components.index], 0.0
        )

    @property
    def n_fixed(self) -> int:
        """Number of fixed-effect parameters."""
        return len(self.fixed_effects)

    # ------------------------------------------------------------------ marginal means
    def _require_factor(self, factor: str) -> FixedDesign:
        design = self.design
        if design is None or factor not in design.variables:
            raise LmmError(f"{factor!r} is not a fixed-effect variable of {self.formula!r}")
        if not design.variables[factor].is_factor:
            raise LmmError(f"{factor!r} is a numeric covariate, not a factor")
        return design

    def _emm_weights(self, factor: str) -> tuple[tuple[str, ...], np.ndarray]:
        """Rows L_l such that L_l beta is the marginal mean of each level (emmeans' default)."""
        design = self._require_factor(factor)
        factors = design.factor_names()
        levels = {f: design.variables[f].levels or () for f in factors}
        grid = list(itertools.product(*[range(len(levels[f])) for f in factors]))
        ngrid = len(grid)
        values: dict[str, np.ndarray] = {}
        for j, f in enumerate(factors):
            values[f] = np.array([g[j] for g in grid], dtype=np.int64)
        for name, var in design.variables.items():
            if not var.is_factor:
                values[name] = np.full(ngrid, var.mean)
        xg = design.matrix(values, ngrid)
        target = values[factor]
        lev = levels[factor]
        weights = np.vstack([xg[target == i].mean(axis=0) for i in range(len(lev))])
        return lev, weights

    def emmeans(self, factor: str) -> pd.DataFrame:
        """Estimated marginal means of a factor's levels with standard errors.

        Equal weights over the levels of the other fixed-effect factors, numeric covariates at
        their mean (emmeans' defaults); standard errors from ``fixed_cov``.
        """
        levels, weights = self._emm_weights(factor)
        est, var = self.combinations(weights)
        return pd.DataFrame({"level": list(levels), "estimate": est, "se": np.sqrt(var)})

    def contrasts(self, factor: str) -> pd.DataFrame:
        """All pairwise differences of marginal means, level1 - level2 in level order.

        z = estimate / se and a two-sided normal p-value (no multiplicity adjustment).
        """
        from scipy import stats  # deferred: scipy.stats is slow to import

        levels, weights = self._emm_weights(factor)
        beta = self.fixed_effects.to_numpy()
        cov = self.fixed_cov.to_numpy()
        rows = []
        for i, j in itertools.combinations(range(len(levels)), 2):
            d = weights[i] - weights[j]
            est = float(d @ beta)
            se = float(np.sqrt(d @ cov @ d))
            z = est / se if se > 0 else np.nan
            p = float(2.0 * stats.norm.sf(abs(z))) if se > 0 else np.nan
            rows.append((levels[i], levels[j], est, se, z, p))
        return pd.DataFrame(rows, columns=["level1", "level2", "estimate", "se", "z", "p_value"])

    # ------------------------------------------------------------------ small-sample tests
    def contrast_matrix(self, rows: list[dict[str, float]] | dict[str, float]) -> np.ndarray:
        """L from rows given as {coefficient name: weight} (unnamed coefficients weigh 0)."""
        names = list(self.fixed_effects.index)
        rows = [rows] if isinstance(rows, dict) else rows
        L = np.zeros((len(rows), len(names)))
        for i, row in enumerate(rows):
            for name, w in row.items():
                if name not in names:
                    raise LmmError(f"{name!r} is not a fixed effect of {self.formula!r}")
                L[i, names.index(name)] = w
        return L

    def contest(
        self, L: np.ndarray | list[dict[str, float]] | dict[str, float], method: str = KENWARD_ROGER
    ) -> ContrastTest:
        """Test L beta = 0 with Kenward-Roger or Satterthwaite denominator df (lmerTest's
        ``contest``): t for one row, F for several. KR needs a REML fit (any size: the
        structured computation of kr.py is linear in the number of segments)."""
        if self.ddf_core is None:
            raise LmmError("this result carries no model core; refit to test contrasts")
        if isinstance(L, dict | list):
            L = self.contrast_matrix(L)
        return contest(self.ddf_core, np.asarray(L, dtype=float), method)

    def contest_rows(self, L: np.ndarray, method: str = KENWARD_ROGER) -> list[ContrastTest]:
        """The t test of each row of L, equal to ``contest`` of each row alone (Kenward-Roger's
        traces of all rows computed together: many contrasts of one fit cost a few products)."""
        if self.ddf_core is None:
            raise LmmError("this result carries no model core; refit to test contrasts")
        return contest_rows(self.ddf_core, np.asarray(L, dtype=float), method)

    def contrast_cov(self, L: np.ndarray, method: str = KENWARD_ROGER) -> np.ndarray:
        """Cov(L β̂) as the tests of ``method`` use it: L Φ_A Lᵀ with pbkrtest's bias-adjusted
        Φ_A for Kenward-Roger (as emmeans with ``lmer.df = "kenward-roger"``), L Cov(β̂) Lᵀ for
        Satterthwaite; the correlation of a family's estimates (docs/method.md §4c.10)."""
        if self.ddf_core is None:
            raise LmmError("this result carries no model core; refit to test contrasts")
        L = np.atleast_2d(np.asarray(L, dtype=float))
        if method not in (KENWARD_ROGER, SATTERTHWAITE):
            raise LmmError(f"unknown df method {method!r}: {SATTERTHWAITE!r} or {KENWARD_ROGER!r}")
        with single_threaded_blas():
            phi = self.ddf_core.kr_parts()[0] if method == KENWARD_ROGER else self.ddf_core.vcov
            return L @ phi @ L.T

    def term_columns(self, *variables: str) -> list[str]:
        """The coefficient names of the fixed term made of exactly these variables."""
        from infrepro.lmm.design import term_column_names

        design = self.design
        if design is not None:
            for term, full in zip(design.terms, design.full_coding, strict=True):
                if set(term) == set(variables):
                    return term_column_names(term, full, design.variables)
        raise LmmError(f"{':'.join(variables)} is not a fixed term of {self.formula!r}")

    def kr_feasible(self) -> bool:
        """Whether Kenward-Roger is available: a REML fit whose structured KR fits in memory
        (ddf.KR_MAX_ENTRIES); ML fits have no KR and are tested by Satterthwaite."""
        core = self.ddf_core
        return core is not None and self.reml and core.products is not None

    # ------------------------------------------------------------------ prediction
    def predict(self, newdata: pd.DataFrame) -> pd.DataFrame:
        """Fixed-part predictions X beta for new rows, with standard errors from fixed_cov."""
        est, var = self.combinations(self.design_matrix(newdata))
        return pd.DataFrame({"estimate": est, "se": np.sqrt(var)}, index=newdata.index)

    def combinations(self, weights: np.ndarray | sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Each row's ``weights @ beta`` and its variance w' C w (C = fixed_cov), in one
        matrix product (BLAS; einsum's unblocked loop over rows x p^2 took 12 of a
        meta-parameter job's 117 s at 300 facet levels). Sparse weights (differences of
        cells, a few non-zeros a row) cost their non-zeros x p."""
        cov = self.fixed_cov.to_numpy()
        estimates = np.asarray(weights @ self.fixed_effects.to_numpy()).reshape(-1)
        if sp.issparse(weights):
            variances = np.asarray(weights.multiply(weights @ cov).sum(axis=1)).reshape(-1)
        else:
            variances = np.sum((weights @ cov) * weights, axis=1)
        return estimates, variances

    def design_matrix(self, newdata: pd.DataFrame) -> np.ndarray:
        """The fixed-effect model matrix of new rows, coded as in the fit (for contrasts)."""
        design = self.design
        if design is None:
            raise LmmError("this result carries no design; cannot predict")
        values: dict[str, np.ndarray] = {}
        for name, var in design.variables.items():
            if name not in newdata.columns:
                raise LmmError(f"newdata lacks column {name!r}")
            col = newdata[name]
            if var.is_factor:
                assert var.levels is not None
                index = {lev: i for i, lev in enumerate(var.levels)}
                labels = ["TRUE" if v is True else "FALSE" if v is False else str(v) for v in col]
                unknown = sorted({lab for lab in labels if lab not in index})
                if unknown:
                    raise LmmError(f"newdata column {name!r} has unknown level(s) {unknown}")
                values[name] = np.array([index[lab] for lab in labels], dtype=np.int64)
            else:
                if is_categorical(col):
                    raise LmmError(f"newdata column {name!r} must be numeric")
                values[name] = col.to_numpy(dtype=float)
        return design.matrix(values, len(newdata))

    def summary(self) -> str:
        """A short text summary (for logs)."""
        lines = [
            f"{'REML' if self.reml else 'ML'} fit: {self.formula}",
            f"nobs={self.nobs} ngroups={self.ngroups} loglik={self.loglik:.6f} "
            f"converged={self.converged} singular={self.singular}",
            "fixed effects:",
            pd.DataFrame({"estimate": self.fixed_effects, "se": self.fixed_se}).to_string(),
            "variance components:",
            self.variance_components.to_string(),
        ]
        lines += [f"note: {m}" for m in self.messages]
        return "\n".join(lines)
