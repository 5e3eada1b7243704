"""``fit``: validate data, build the model matrices, optimize the profiled deviance, report."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from infrepro.lmm import ddf
from infrepro.lmm.cache import FitCache, memo
from infrepro.lmm.ddf import DdfCore
from infrepro.lmm.design import (
    FixedDesign,
    RandomColumns,
    aliased_columns,
    build_fixed,
    gram,
    random_columns,
)
from infrepro.lmm.errors import LmmError
from infrepro.lmm.formula import ParsedFormula, parse_formula
from infrepro.lmm.optimize import OptimResult, minimize_theta
from infrepro.lmm.profiled import LOG_2PI, ProfiledDeviance, Solution
from infrepro.lmm.result import SINGULAR_TOL, LmmResult
from infrepro.plumbing.blas import single_threaded_blas

FEW_LEVELS = 5  # docs/method.md §4.6: facets with fewer levels are flagged


_single_threaded_blas = single_threaded_blas


def _response(data: pd.DataFrame, name: str) -> np.ndarray:
    col = data[name]
    if not (pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col)):
        raise LmmError(f"response {name!r} must be numeric (dtype {col.dtype})")
    y = col.to_numpy(dtype=float)
    n_nan = int(np.count_nonzero(np.isnan(y)))
    if n_nan:
        raise LmmError(
            f"response {name!r} has {n_nan} missing value(s) (NaN) of {len(y)}; "
            "drop those rows before fitting"
        )
    n_inf = int(np.count_nonzero(~np.isfinite(y)))
    if n_inf:
        raise LmmError(f"response {name!r} has {n_inf} infinite value(s)")
    if len(y) and np.all(y == y[0]):
        raise LmmError(f"response {name!r} is constant ({float(y[0]):g}); nothing to model")
    return y


@dataclass(frozen=True)
class _Prepared:
    """Validated model inputs: parsed formula, X (with names), y and grouping codes."""

    parsed: ParsedFormula
    design: FixedDesign
    X: np.ndarray
    y: np.ndarray
    beta0: np.ndarray  # OLS start; y_centred = y - X beta0 is what the deviance sees
    y_centred: np.ndarray
    terms: list[RandomColumns]
    xtx: np.ndarray | None  # X'X (None without fixed effects)

    @property
    def codes(self) -> list[np.ndarray]:
        return [t.codes for t in self.terms]

    @property
    def nlevels(self) -> list[int]:
        return [t.nlevels for t in self.terms]

    @property
    def weights(self) -> list[np.ndarray | None]:
        return [t.weights for t in self.terms]


def _fixed_part(
    parsed: ParsedFormula,
    data: pd.DataFrame,
    reference_levels: Mapping[str, str] | None,
    factors: Sequence[str] | None,
    cache: FitCache | None,
) -> tuple[np.ndarray, FixedDesign, np.ndarray, np.ndarray | None]:
    """y, the fixed design, X and X'X (None without fixed effects), X checked for full rank;
    from ``cache`` when a fit of the same fixed part to the same rows made them."""
    levels = dict(reference_levels or {})
    forced = list(factors or [])
    key = (parsed.response, parsed.intercept, parsed.fixed_terms, tuple(forced))
    key += (tuple(sorted(levels.items())),)
    if cache is not None and key in cache.fixed:
        return cache.fixed[key]
    y = _response(data, parsed.response)
    codes = cache.factors if cache is not None else None
    design, X = build_fixed(parsed, data, forced, levels, codes)
    p = X.shape[1]
    xtx = gram(X) if p else None  # X'X: the rank check, the OLS start and the cross-products
    aliased = aliased_columns(X, gram=xtx)
    if aliased:
        raise LmmError(
            "fixed-effect model matrix is rank deficient: coefficient(s) "
            f"{[design.columns[j] for j in aliased]} are aliased with earlier columns "
            "(empty cells or collinear covariates)"
        )
    if cache is not None:
        cache.fixed[key] = (y, design, X, xtx)
    return y, design, X, xtx


def _prepare(
    formula: str,
    data: pd.DataFrame,
    reference_levels: Mapping[str, str] | None,
    factors: Sequence[str] | None,
    cache: FitCache | None = None,
) -> _Prepared:
    parsed = parse_formula(formula)
    if not isinstance(data, pd.DataFrame):
        raise LmmError("data must be a pandas DataFrame")
    needed = [parsed.response, *parsed.fixed_variables]
    for term in parsed.random_terms:
        needed.extend(term.variables)
        needed.extend([term.slope] if term.slope is not None else [])
        needed.extend([term.indicator[0]] if term.indicator is not None else [])
    missing = sorted({c for c in needed if c not in data.columns})
    if missing:
        raise LmmError(f"column(s) {missing} used in {formula!r} are not in the data")
    n = len(data)
    if n == 0:
        raise LmmError("data has no rows")
    y, design, X, xtx = _fixed_part(parsed, data, reference_levels, factors, cache)
    p = X.shape[1]
    if n - p <= 0:
        raise LmmError(f"{n} observations cannot identify {p} fixed effects and a residual")
    groups: dict[str, np.ndarray] = {} if cache is None else cache.groups
    masks: dict[str, np.ndarray] = {} if cache is None else cache.masks
    terms: list[RandomColumns] = []
    for term in parsed.random_terms:
        if cache is not None and term in cache.terms:
            cols = cache.terms[term]
        else:
            cols = random_columns(data, term, groups, masks)
            if cache is not None:
                cache.terms[term] = cols
        q = cols.nlevels
        if q < 2 and not term.weighted:
            raise LmmError(
                f"grouping factor of random term (1|{term.name}) has {q} level; it needs at least 2"
            )
        if q >= n:
            raise LmmError(
                f"grouping factor of random term {term.written} has {q} levels "
                f"for {n} observations; the number of levels must be < the number of "
                "observations"
            )
        terms.append(cols)

    # centre y on its OLS fit: r2 is unchanged by any shift within the column space of X,
    # and the cancellation in y'y - ... becomes much smaller (X has full rank here)
    def ols_start() -> tuple[np.ndarray, np.ndarray]:
        beta0 = np.linalg.solve(xtx, X.T @ y) if xtx is not None else np.zeros(0)
        return beta0, (y - X @ beta0 if p else y)

    beta0, y_c = memo(None if cache is None else cache.products, [X, y], ("ols",), ols_start)
    if float(y_c @ y_c) <= 1e-24 * float(y @ y):
        raise LmmError(f"response {parsed.response!r} is exactly fitted by the fixed effects")
    return _Prepared(parsed, design, X, y, beta0, y_c, terms, xtx)


def _z_matrix(terms: list[RandomColumns], n: int) -> tuple[sp.csc_matrix, list[np.ndarray]]:
    """The random-effects model matrix Z (n x q) and the columns of each term."""
    blocks, cols, off = [], [], 0
    rows = np.arange(n)
    for t in terms:
        w = np.ones(n) if t.weights is None else t.weights
        blocks.append(sp.csc_matrix((w, (rows, t.codes)), shape=(n, t.nlevels)))
        cols.append(np.arange(off, off + t.nlevels))
        off += t.nlevels
    return sp.hstack(blocks, format="csc"), cols


def _devfun(
    prep: _Prepared, reml: bool, path: str, cache: FitCache | None = None
) -> ProfiledDeviance:
    """lme4's ``mkLmerDevfun``: the profiled deviance d(theta) of the prepared model,

    -2 l(theta) = log|L_theta|^2 + n (1 + log(2 pi r2(theta) / n))            (ML)
    -2 l_R(theta) = log|L_theta|^2 + log|R_X|^2 + (n-p)(1 + log(2 pi r2 / (n-p)))   (REML)
    """
    return ProfiledDeviance(
        prep.codes,
        prep.nlevels,
        prep.X,
        prep.y_centred,
        reml=reml,
        path=path,
        weights=prep.weights,
        xtx=prep.xtx,
        memo=None if cache is None else cache.products,
    )


def deviance_function(
    formula: str,
    data: pd.DataFrame,
    reml: bool = True,
    reference_levels: Mapping[str, str] | None = None,
    factors: Sequence[str] | None = None,
    path: str = "auto",
) -> Callable[[np.ndarray], float]:
    """lme4's profiled criterion (``deviance`` for ML, ``REMLcrit`` for REML) as a function of
    theta, ordered as the formula's random terms. For checks against lme4 and for profiling."""
    dev = _devfun(_prepare(formula, data, reference_levels, factors), reml, path)

    def criterion(theta: np.ndarray) -> float:
        with _single_threaded_blas(), np.errstate(divide="ignore", invalid="ignore"):
            return dev(np.asarray(theta, dtype=float))

    return criterion


def _digest(y: np.ndarray) -> str:
    """A cheap fingerprint of the response, so lrt() can refuse models fitted to other data."""
    step = max(1, len(y) // 4096)
    parts = np.concatenate([[len(y), float(np.sum(y)), float(np.sum(y * y))], y[::step]])
    return hashlib.sha1(parts.tobytes()).hexdigest()


def _optimize(dev: ProfiledDeviance, n_terms: int, theta: np.ndarray | None) -> OptimResult:
    """lme4's ``optimizeLmer``: theta-hat = argmin d(theta) over theta >= 0, or the given
    theta evaluated as is (``lmerControl(optimizer = NULL)``)."""
    if theta is None:
        return minimize_theta(dev, n_terms)
    given = np.abs(np.asarray(theta, dtype=float))
    if given.shape != (n_terms,):
        raise LmmError(f"theta has {given.size} values for {n_terms} random terms")
    return OptimResult(given, dev(given), True, 1, ["theta given, not optimized"])


@dataclass(frozen=True)
class _Estimates:
    """The fit at theta-hat: beta = beta0 + delta, residuals, sigma^2 and the criterion."""

    beta: np.ndarray
    resid: np.ndarray
    sigma2: float
    crit: float
    cov: np.ndarray


def _estimates(prep: _Prepared, sol: Solution, reml: bool) -> _Estimates:
    """Residuals e = y - X beta - Z b straight from the rows (exact at the optimum),
    r2 = e'e + |u|^2, sigma^2 = r2 / dof (dof = n - p for REML, n for ML),
    criterion = log|L|^2 [+ log|R_X|^2] + dof (1 + log(2 pi) + log(r2 / dof)),
    Var(beta-hat) = sigma^2 (R_X' R_X)^-1."""
    n, p = prep.X.shape
    beta = prep.beta0 + sol.beta
    fitted_re = np.zeros(n)
    for c, b, w in zip(prep.codes, sol.b, prep.weights, strict=True):
        fitted_re += b[c] if w is None else b[c] * w
    resid = prep.y - prep.X @ beta - fitted_re
    r2 = float(resid @ resid) + sol.u_sq
    dof = n - p if reml else n
    crit = sol.logdet_l + (sol.logdet_rx if reml else 0.0)
    crit += dof * (1.0 + LOG_2PI + np.log(r2 / dof))
    sigma2 = r2 / dof
    return _Estimates(beta, resid, sigma2, float(crit), sigma2 * sol.unscaled_cov)


@dataclass(frozen=True)
class _Status:
    """Singular (any theta < SINGULAR_TOL, as lme4's isSingular), converged, and the messages."""

    singular: bool
    converged: bool
    messages: list[str]


def _fit_messages(prep: _Prepared, opt: OptimResult, theta: np.ndarray, sigma2: float) -> _Status:
    """The optimizer's verdict and messages plus warnings on degenerate fits and facets with
    few levels. A degenerate fit (residual variance numerically zero) has not converged: the
    criterion decreases without bound as sigma^2 -> 0 there (docs/method.md §4.6.1)."""
    n = len(prep.y)
    singular = bool(np.any(theta < SINGULAR_TOL))
    messages = list(opt.messages)
    converged = opt.converged
    if singular:
        messages.append("boundary (singular) fit: see help('isSingular')")
    if sigma2 <= 1e-12 * float(prep.y_centred @ prep.y_centred) / n:
        converged = False
        messages.append(
            "residual variance is numerically zero: the random effects reproduce "
            "the response exactly (degenerate fit: the criterion has no minimum)"
        )
    for term, q in zip(prep.parsed.random_terms, prep.nlevels, strict=True):
        if q < FEW_LEVELS:
            messages.append(
                f"random term {term.written} has only {q} levels: its variance is poorly estimated"
            )
    return _Status(singular, converged, messages)


def _ddf_core(
    prep: _Prepared,
    dev: ProfiledDeviance,
    est: _Estimates,
    theta: np.ndarray,
    reml: bool,
    keep_design: bool | None,
) -> DdfCore:
    """What Satterthwaite and Kenward-Roger need later: the deviance pieces, the block
    cross-products (REML fits KR can handle) and, when kept, X and a lazily built Z."""
    n, p = prep.X.shape
    term_cols, off = [], 0
    for q in prep.nlevels:
        term_cols.append(np.arange(off, off + q))
        off += q
    if keep_design is None:
        keep_design = reml and off <= ddf.DENSE_KR_MAX_COLUMNS
    terms = prep.terms
    return DdfCore(
        pieces=dev.pieces,
        products=dev.block_products if reml and ddf.kr_fits(dev.layout, p) else None,
        n=n,
        p=p,
        q=off,
        design=(prep.X, lambda: _z_matrix(terms, n)[0]) if keep_design else None,
        term_cols=term_cols,
        theta=theta.copy(),
        sigma=float(np.sqrt(est.sigma2)),
        beta=est.beta,
        vcov=est.cov,
        reml=reml,
    )


def fit(
    formula: str,
    data: pd.DataFrame,
    reml: bool = True,
    reference_levels: Mapping[str, str] | None = None,
    factors: Sequence[str] | None = None,
    path: str = "auto",
    theta: np.ndarray | None = None,
    keep_design: bool | None = None,
    cache: FitCache | None = None,
) -> LmmResult:
    """Fit an LMM as lme4's ``lmer`` does (REML by default, like lmer), in lme4's stages:
    ``_prepare`` (lFormula), ``_devfun`` (mkLmerDevfun), ``_optimize`` (optimizeLmer), then
    ``_estimates``/``_ddf_core`` and the LmmResult (mkMerMod).

    ``reference_levels`` sets the baseline level of fixed-effect factors; ``factors`` forces
    numeric columns to be categorical. ``path`` ("auto", "dense", "sparse") selects how the
    Schur complement of the non-primary random terms is factored (for testing). ``theta``
    evaluates the model at given relative SDs instead of optimizing (lme4's
    ``lmer(..., start = theta, control = lmerControl(optimizer = NULL))``), to compare
    everything downstream of the optimizer with a reference fit.
    ``keep_design``: keep X and (built on first use) Z in ``ddf_core`` for Kenward-Roger or a
    parametric bootstrap; by default only REML fits within ddf.DENSE_KR_MAX_COLUMNS keep them
    (KR's dense reference), so a result does not hold model matrices with a row per
    observation that nothing will use (Satterthwaite and the structured KR need only the
    cross-products).
    ``cache``: a FitCache of earlier fits to the same (unmodified) ``data``, whose data
    preparation this fit reuses where it coincides (bit-for-bit the same numbers).
    Raises LmmError for unsupported formulas and degenerate data.
    """
    prep = _prepare(formula, data, reference_levels, factors, cache)
    with _single_threaded_blas(), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dev = _devfun(prep, reml, path, cache)
        opt = _optimize(dev, len(prep.terms), theta)
        sol = dev.solve(opt.theta)
    est = _estimates(prep, sol, reml)
    theta = sol.theta
    status = _fit_messages(prep, opt, theta, est.sigma2)
    rnames = list(prep.parsed.random_names)
    names = list(prep.design.columns)
    sigma2, cov = est.sigma2, est.cov
    vc = pd.Series([*(sigma2 * theta**2), sigma2], index=[*rnames, "Residual"], dtype=float)
    return LmmResult(
        ddf_core=_ddf_core(prep, dev, est, theta, reml, keep_design),
        formula=formula,
        reml=reml,
        response=prep.parsed.response,
        loglik=-0.5 * est.crit,
        criterion=est.crit,
        fixed_effects=pd.Series(est.beta, index=names, dtype=float),
        fixed_cov=pd.DataFrame(cov, index=names, columns=names),
        fixed_se=pd.Series(np.sqrt(np.diag(cov)), index=names, dtype=float),
        variance_components=vc,
        sigma=float(np.sqrt(sigma2)),
        theta=theta.copy(),
        theta_names=tuple(rnames),
        converged=status.converged,
        singular=status.singular,
        nobs=len(prep.y),
        ngroups=dict(zip(rnames, prep.nlevels, strict=True)),
        residuals=est.resid,
        messages=status.messages,
        n_evals=opt.n_evals,
        path=dev.describe(rnames),
        design=prep.design,
        response_digest=_digest(prep.y),
    )
