"""Model matrices: factor coding, the fixed-effect matrix X (R's model.matrix rules) and
grouping-factor codes (with per-row weights for slopes and dummy() terms) for the random terms.

Factors use treatment coding. Level order: the caller's reference level first, then the others
sorted as strings (R's C-locale default). Whether a factor inside a term gets contrasts or full
indicator columns follows R's ``TermCode`` heuristic, so names and columns match R exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from infrepro.lmm.errors import LmmError
from infrepro.lmm.formula import ParsedFormula, RandomTerm

RANK_TOL = 1e-7  # R's qr() tolerance, as used by lm() and lme4


def is_categorical(series: pd.Series) -> bool:
    """True for object, string, category and bool columns; numeric columns are covariates."""
    dtype = series.dtype
    return bool(
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
    )


def _level_strings(values: np.ndarray) -> list[str]:
    out = []
    for v in values:
        if isinstance(v, bool | np.bool_):
            out.append("TRUE" if v else "FALSE")
        else:
            out.append(str(v))
    return out


def encode_factor(
    series: pd.Series, name: str, reference: str | None = None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes and level labels of a categorical column.

    Values are compared as strings; levels are the present values sorted as strings with
    ``reference`` (if given) moved first. Missing values raise LmmError naming the column.
    """
    codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    n_missing = int(np.count_nonzero(codes < 0))
    if n_missing:
        raise LmmError(f"column {name!r} has {n_missing} missing value(s); drop them first")
    labels = np.array(_level_strings(np.asarray(uniques, dtype=object)), dtype=object)
    levels, inverse = np.unique(labels, return_inverse=True)
    level_list = [str(v) for v in levels]
    if reference is not None:
        ref = str(reference)
        if ref not in level_list:
            raise LmmError(
                f"reference level {ref!r} is not a level of {name!r} (levels: {level_list})"
            )
        order = [ref] + [v for v in level_list if v != ref]
        rank = {v: i for i, v in enumerate(order)}
        remap = np.array([rank[v] for v in level_list], dtype=np.int64)
        inverse = remap[inverse]
        level_list = order
    return inverse.astype(np.int64)[codes], tuple(level_list)


def combine_codes(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, int]:
    """Codes of the interaction of several factors (present combinations only)."""
    key = np.zeros(len(parts[0]), dtype=np.int64)
    for codes in parts:
        width = int(codes.max()) + 1 if len(codes) else 1
        key = key * width + codes
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.astype(np.int64), len(uniq)


@dataclass(frozen=True)
class Variable:
    """A fixed-part variable: a factor (with levels) or a numeric covariate (with its mean)."""

    name: str
    levels: tuple[str, ...] | None = None
    mean: float = 0.0

    @property
    def is_factor(self) -> bool:
        return self.levels is not None


@dataclass(frozen=True)
class FixedDesign:
    """Everything needed to rebuild X for new rows: variables, terms and their coding."""

    intercept: bool
    terms: tuple[tuple[str, ...], ...]
    variables: Mapping[str, Variable]
    # per term, per variable: True for full indicator coding, False for contrasts
    full_coding: tuple[tuple[bool, ...], ...]
    columns: tuple[str, ...] = field(default=())

    def factor_names(self) -> list[str]:
        """Factors used in the fixed part, in order of appearance."""
        return [v.name for v in self.variables.values() if v.is_factor]

    def _width(self, term: tuple[str, ...], full: tuple[bool, ...]) -> int:
        width = 1
        for var_name, is_full in zip(term, full, strict=True):
            var = self.variables[var_name]
            if var.is_factor:
                assert var.levels is not None
                width *= len(var.levels) - (0 if is_full else 1)
        return width

    def matrix(self, values: Mapping[str, np.ndarray], nrows: int) -> np.ndarray:
        """X for rows given as factor codes (int arrays) and numeric values (float arrays).

        Each term's columns are written straight into X (no per-term blocks stacked at the
        end: X can be the largest array of a fit)."""
        pairs = list(zip(self.terms, self.full_coding, strict=True))
        widths = [self._width(term, full) for term, full in pairs]
        X = np.empty((nrows, int(self.intercept) + sum(widths)))
        off = 0
        if self.intercept:
            X[:, 0] = 1.0
            off = 1
        for (term, full), width in zip(pairs, widths, strict=True):
            cols: np.ndarray | None = None  # the product of the earlier variables (None: 1)
            for k, (var_name, is_full) in enumerate(zip(term, full, strict=True)):
                var = self.variables[var_name]
                v = values[var_name]
                if var.is_factor:
                    assert var.levels is not None
                    first = 0 if is_full else 1
                    # boolean indicators: a product with them (bool cast to 0.0 / 1.0) is the
                    # product with float indicators, at an eighth of the memory traffic
                    ind = v[:, None] == np.arange(first, len(var.levels))[None, :]
                else:
                    ind = np.asarray(v, dtype=float)[:, None]
                # earlier variables vary fastest, as in R
                shape = (nrows, ind.shape[1], 1 if cols is None else cols.shape[1])
                if k == len(term) - 1:  # the last variable: the product goes into X
                    target = X[:, off : off + width].reshape(shape)  # a view: splits columns
                    assert width == 0 or np.may_share_memory(target, X)
                    if cols is None:  # 1.0 * x is x: a copy
                        np.copyto(target, ind[:, :, None])
                    else:
                        np.multiply(cols[:, None, :], ind[:, :, None], out=target)
                elif cols is None:  # 1.0 * x is x: no product (no n x levels copy)
                    cols = ind
                else:
                    cols = (cols[:, None, :] * ind[:, :, None]).reshape(nrows, -1)
            off += width
        return X


def term_column_names(
    term: tuple[str, ...], full: tuple[bool, ...], variables: Mapping[str, Variable]
) -> list[str]:
    names = [""]
    for var_name, is_full in zip(term, full, strict=True):
        var = variables[var_name]
        if var.is_factor:
            assert var.levels is not None
            labels = [var_name + lev for lev in (var.levels if is_full else var.levels[1:])]
        else:
            labels = [var_name]
        names = [f"{a}:{b}" if a else b for b in labels for a in names]
    return names


def _term_codes(parsed: ParsedFormula, variables: Mapping[str, Variable]) -> list[tuple[bool, ...]]:
    """R's TermCode heuristic: contrasts if the term without the variable is empty or is
    contained in a preceding term; otherwise indicators. Without an intercept, the first
    factor of the first term containing a factor gets indicators."""
    out: list[tuple[bool, ...]] = []
    first_factor_done = parsed.intercept
    for j, term in enumerate(parsed.fixed_terms):
        flags = []
        for v in term:
            rest = set(term) - {v}
            contrasts = not rest or any(rest <= set(t) for t in parsed.fixed_terms[:j])
            full = not contrasts
            if variables[v].is_factor and not first_factor_done:
                full = True
                first_factor_done = True
            flags.append(full)
        out.append(tuple(flags))
    return out


def _encode_variable(
    data: pd.DataFrame, name: str, factor: bool, reference: str | None
) -> tuple[Variable, np.ndarray]:
    """A fixed-part variable and its values: factor codes, or a numeric covariate's floats."""
    col = data[name]
    if factor or is_categorical(col):
        codes, levels = encode_factor(col, name, reference)
        return Variable(name, levels=levels), codes
    x = pd.to_numeric(col, errors="raise").to_numpy(dtype=float)
    bad = int(np.count_nonzero(~np.isfinite(x)))
    if bad:
        raise LmmError(f"covariate {name!r} has {bad} missing or infinite value(s)")
    return Variable(name, mean=float(np.mean(x)) if len(x) else 0.0), x


def build_fixed(
    parsed: ParsedFormula,
    data: pd.DataFrame,
    factors: Sequence[str],
    reference_levels: Mapping[str, str],
    cache: dict[tuple[object, ...], tuple[Variable, np.ndarray]] | None = None,
) -> tuple[FixedDesign, np.ndarray]:
    """Encode the fixed-part variables and build X (rows in data order). ``cache`` keeps the
    encoded variables for other fits to the same data."""
    variables: dict[str, Variable] = {}
    values: dict[str, np.ndarray] = {}
    for name in parsed.fixed_variables:
        key = (name, name in factors, reference_levels.get(name))
        if cache is not None and key in cache:
            variables[name], values[name] = cache[key]
            continue
        variables[name], values[name] = _encode_variable(data, *key)
        if cache is not None:
            cache[key] = (variables[name], values[name])
    unknown = set(reference_levels) - set(parsed.fixed_variables)
    if unknown:
        raise LmmError(f"reference_levels given for {sorted(unknown)}, not fixed-effect factors")
    for name, ref in reference_levels.items():
        if not variables[name].is_factor:
            raise LmmError(f"reference level {ref!r} given for numeric covariate {name!r}")
    full = _term_codes(parsed, variables)
    columns: list[str] = ["(Intercept)"] if parsed.intercept else []
    for term, flags in zip(parsed.fixed_terms, full, strict=True):
        columns.extend(term_column_names(term, flags, variables))
    design = FixedDesign(
        intercept=parsed.intercept,
        terms=parsed.fixed_terms,
        variables=variables,
        full_coding=tuple(full),
        columns=tuple(columns),
    )
    X = design.matrix(values, len(data))
    return design, X


QR_DIRECT_MAX = 4_000_000  # entries of X up to which its R factor comes from one QR
COMPRESS_MIN_COLUMNS = 16  # a large X this wide is checked on its distinct rows if it can


def distinct_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct rows of X (indices of first occurrences) and how often each occurs, when
    there are at most a quarter as many as rows (factor-coded designs have a few hundred);
    else None. Rows are grouped by two random projections and the grouping is then checked
    exactly, so equal projections of different rows (vanishingly unlikely) only cost the
    compression, never a wrong result."""
    n, p = X.shape
    if n < 8 or p == 0:
        return None
    projections = X @ np.random.default_rng(20_240_614).standard_normal((p, 2))
    key = projections[:, 0] + 1j * projections[:, 1]  # one sortable key per row
    _, first, inverse, counts = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    if 4 * len(first) > n:
        return None
    representative = first[inverse.reshape(-1)]
    step = max(1, QR_DIRECT_MAX // p)
    for i in range(0, n, step):
        if not np.array_equal(X[i : i + step], X[representative[i : i + step]]):
            return None
    return first, counts


def _r_factor(
    X: np.ndarray,
    keep: list[int],
    scale: np.ndarray,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """R of the QR decomposition of X[:, keep] / scale (up to the signs of its rows).

    A large X is decomposed by blocks of rows (the R factors of the blocks, stacked, have the
    same R), so no scaled copy of all of X is made; when its rows are ``rows`` (distinct rows,
    counts), from those rows weighted by the square roots of their counts (the same R'R = X'X).
    """
    n = X.shape[0]
    if n * len(keep) <= QR_DIRECT_MAX:
        return np.linalg.qr(X[:, keep] / scale, mode="r")
    if rows is not None:
        first, counts = rows
        return np.linalg.qr(X[np.ix_(first, keep)] * (np.sqrt(counts)[:, None] / scale), mode="r")
    step = max(len(keep), QR_DIRECT_MAX // len(keep))
    parts = [np.linalg.qr(X[i : i + step, keep] / scale, mode="r") for i in range(0, n, step)]
    return np.linalg.qr(np.vstack(parts), mode="r")


FULL_RANK_CLEAR = 1e-3  # Cholesky diagonal of the scaled X'X above which no QR is needed


def clearly_full_rank(gram: np.ndarray) -> bool:
    """Whether X (given by X'X) has full column rank by a wide margin.

    The Cholesky factor R of X'X scaled to unit diagonal has R[j, j] = the distance of column
    j / |column j| from the span of the earlier columns, the quantity ``aliased_columns``
    compares with ``RANK_TOL``. Its rounding errors are many orders of magnitude below
    FULL_RANK_CLEAR, so when every R[j, j] exceeds it no column is aliased, as the QR would
    find; otherwise (or when the factorization fails) the QR decides.
    """
    norms = np.sqrt(np.diagonal(gram))
    if not np.all(norms > 0.0):
        return False
    try:
        r = np.linalg.cholesky(gram / norms[:, None] / norms[None, :])
    except np.linalg.LinAlgError:
        return False
    return bool(np.all(np.diagonal(r) > FULL_RANK_CLEAR))


SPARSE_GRAM_MIN = 4_000_000  # entries of X from which X'X is taken over its non-zeros
SPARSE_GRAM_FILL = 0.25  # ... when at most this share of them is non-zero


def gram(X: np.ndarray) -> np.ndarray:
    """X'X. A wide X of treatment contrasts is mostly zeros (a system's indicator is zero off
    its rows): over its non-zeros the product is linear in the systems, not quadratic (200
    systems' conditional model, 240,000 x 400: 5 s dense)."""
    if X.size >= SPARSE_GRAM_MIN:
        nz = np.count_nonzero(X)
        if nz <= SPARSE_GRAM_FILL * X.size:
            xs = sp.csc_matrix(X)
            return np.asarray((xs.T @ xs).toarray())
    return X.T @ X


def aliased_columns(
    X: np.ndarray, tol: float = RANK_TOL, gram: np.ndarray | None = None
) -> list[int]:
    """Indices of columns of X that are linear combinations of earlier columns.

    Like R's ``lm``: a column is aliased when its distance from the span of the earlier
    (non-aliased) columns is below ``tol`` times its own norm. Found by repeated QR, unless
    ``gram`` (X'X, when the caller has it) shows full rank by a wide margin
    (``clearly_full_rank``).
    """
    p = X.shape[1]
    if p == 0:
        return []
    if gram is not None and clearly_full_rank(gram):
        return []
    norms = np.sqrt(np.einsum("ij,ij->j", X, X))
    aliased: list[int] = [j for j in range(p) if norms[j] == 0.0]
    # a few columns: the QR by blocks is cheap; many: look for repeated rows first
    rows = distinct_rows(X) if X.size > QR_DIRECT_MAX and p >= COMPRESS_MIN_COLUMNS else None
    while True:
        keep = [j for j in range(p) if j not in aliased]
        if not keep:
            return aliased
        r = _r_factor(X, keep, norms[keep], rows)
        diag = np.abs(np.diag(r))
        bad = np.flatnonzero(diag < tol)
        if len(bad) == 0:
            return sorted(aliased)
        aliased.append(keep[int(bad[0])])


def encode_groups(
    data: pd.DataFrame, variables: Sequence[str], cache: dict[str, np.ndarray]
) -> tuple[np.ndarray, int]:
    """Codes of a random-effects grouping factor (a column or an interaction of columns)."""
    parts = []
    for v in variables:
        if v not in cache:
            codes, _ = pd.factorize(data[v], sort=False, use_na_sentinel=True)
            n_missing = int(np.count_nonzero(codes < 0))
            if n_missing:
                raise LmmError(
                    f"grouping column {v!r} has {n_missing} missing value(s); drop them first"
                )
            cache[v] = codes.astype(np.int64)
        parts.append(cache[v])
    if len(parts) == 1:
        codes = parts[0]
        return codes, int(codes.max()) + 1 if len(codes) else 0
    return combine_codes(parts)


def _level_mask(column: pd.Series, level: str) -> np.ndarray:
    """Rows whose value, as a level string (``_level_strings``), is ``level``: the distinct
    values are converted, not every row."""
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
    labels = np.asarray(_level_strings(np.asarray(uniques, dtype=object)), dtype=object)
    mask = np.isin(codes, np.flatnonzero(labels == level))
    missing = codes < 0
    if missing.any():  # a missing value's string ("nan", "None") could be the level
        first = column.to_numpy(dtype=object)[np.flatnonzero(missing)[:1]]
        if _level_strings(first)[0] == level:
            mask |= missing & (
                np.asarray(_level_strings(column.to_numpy(dtype=object)), dtype=object) == level
            )
    return mask


@dataclass(frozen=True)
class RandomColumns:
    """Z of one random term in compact form: row i has ``weights[i]`` (1 when None) in the
    column of level ``codes[i]``. Levels whose column is all zero are dropped."""

    codes: np.ndarray
    nlevels: int
    weights: np.ndarray | None


def random_columns(
    data: pd.DataFrame,
    term: RandomTerm,
    cache: dict[str, np.ndarray],
    masks: dict[str, np.ndarray] | None = None,
) -> RandomColumns:
    """Codes and weights of one random term's columns (see RandomColumns).

    A dummy() term reads its grouping variables on its own rows only, so a facet that is
    missing for the other rows (a lambda the baseline lacks) can group one system's runs.
    ``cache`` keeps the codes of grouping columns, ``masks`` the rows of dummy() levels, for
    the other terms of the same data.
    """
    masks = {} if masks is None else masks
    if not term.weighted:
        codes, q = encode_groups(data, term.variables, cache)
        return RandomColumns(codes, q, None)
    slope = None
    if term.slope is not None:
        col = data[term.slope]
        if is_categorical(col):
            raise LmmError(f"random slope {term.slope!r} in {term.written} must be numeric")
        slope = pd.to_numeric(col, errors="raise").to_numpy(dtype=float)
        bad = int(np.count_nonzero(~np.isfinite(slope)))
        if bad:
            raise LmmError(f"random slope {term.slope!r} has {bad} missing or infinite value(s)")
    if term.indicator is None:
        assert slope is not None
        codes, q = encode_groups(data, term.variables, cache)
        w = slope
    else:
        factor, level = term.indicator
        key = f"{factor}\x00{level}"  # the cache also holds the rows of each dummy() level
        if key not in masks:
            masks[key] = _level_mask(data[factor], level)
        mask = masks[key]
        if not mask.any():
            raise LmmError(f"level {level!r} does not occur in column {factor!r} ({term.written})")
        sub_codes, q = encode_groups(data.loc[mask, list(term.variables)], term.variables, {})
        codes = np.zeros(len(data), dtype=np.int64)
        codes[mask] = sub_codes
        w = mask.astype(float) if slope is None else mask * slope
    # keep only levels with a non-zero column; rows with weight 0 point at level 0
    used = np.bincount(codes, weights=np.abs(w), minlength=q) > 0
    remap = np.cumsum(used) - 1
    return RandomColumns(np.where(w != 0, remap[codes], 0), int(used.sum()), w)
