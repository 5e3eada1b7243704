"""Cross-products of the random-effect indicators with each other and with [X y], computed once.

Layout (see layout.py): B = primary factor plus terms nested in it, arranged as ``nb`` blocks
of ``m`` slots; R = the rest terms' columns (``qr``) followed by the p columns of X and y.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from infrepro.lmm.cache import memo as _memo
from infrepro.lmm.layout import Layout


@dataclass
class CrossProducts:
    """Z'Z, Z'[X y] and [X y]'[X y] arranged by the layout."""

    cbb: np.ndarray  # (nb, m, m) block-diagonal part of Z_B'Z_B
    cby: np.ndarray  # (nb * m, p + 1) Z_B'[X y]
    cfy: np.ndarray  # (qr, p + 1) Z_R'[X y]
    cyy: np.ndarray  # (p + 1, p + 1) [X y]'[X y]
    cbf_dense: np.ndarray | None  # (nb, m, qr) Z_B'Z_R when dense
    cff_dense: np.ndarray | None  # (qr, qr)
    cbf_sparse: sp.csr_matrix | None  # (nb * m, qr) when sparse
    cff_sparse: sp.csr_matrix | None


GRAM_STACK_MAX = 4_000_000  # [X y] entries up to which cyy is one product of the stacked matrix


class XyColumns:
    """The columns of [X y] without stacking them into a copy of X (n x p) plus y."""

    def __init__(self, X: np.ndarray, y: np.ndarray, xtx: np.ndarray | None = None) -> None:
        self.X, self.y, self.xtx = X, y, xtx  # xtx: X'X when known
        self.shape = (X.shape[0], X.shape[1] + 1)

    def __getitem__(self, key: tuple[slice, int]) -> np.ndarray:
        j = key[1]
        return self.y if j == self.X.shape[1] else self.X[:, j]

    def gram(self) -> np.ndarray:
        """[X y]'[X y]. Small: the product of the stacked matrix (as it has always been
        computed); large: by blocks, without the stacked copy."""
        X, y = self.X, self.y
        p = X.shape[1]
        if X.size + y.size <= GRAM_STACK_MAX:
            Xy = np.column_stack([X, y]) if p else y[:, None].astype(float)
            return Xy.T @ Xy
        out = np.empty((p + 1, p + 1))
        out[:p, :p] = X.T @ X if self.xtx is None else self.xtx
        out[:p, p] = out[p, :p] = X.T @ y
        out[p, p] = y @ y
        return out


def _count_matrix(
    rows: list[np.ndarray],
    cols: list[np.ndarray],
    shape: tuple[int, int],
    row_w: list[np.ndarray | None] | None = None,
    col_w: list[np.ndarray | None] | None = None,
) -> sp.csr_matrix:
    """Sparse co-occurrence counts (weighted: sums of w_row * w_col) over all (row codes,
    column codes) pairs.

    Weighted: each pair of terms contributes its rows where both weights are non-zero (the
    others add zeros), and a pair with no such row nothing, so the work is in the rows two
    terms share, not (pairs of terms) x (rows): with a run term per system that was
    (systems)^2 copies of the rows (230 GB at 200 systems). Each entry is the sum of its
    products in the order of the pairs, then of the rows (0/1 weights: integer counts, the
    same in any order)."""
    if not rows or not cols:
        return sp.csr_matrix(shape)
    rw = row_w if row_w is not None else [None] * len(rows)
    cw = col_w if col_w is not None else [None] * len(cols)
    if all(w is None for w in rw) and all(w is None for w in cw):
        keys = [r * shape[1] + c for r in rows for c in cols]
        uk, cnt = np.unique(np.concatenate(keys), return_counts=True)
        return sp.csr_matrix((cnt.astype(float), (uk // shape[1], uk % shape[1])), shape=shape)
    n = len(rows[0])
    col_rows = [None if w is None else np.flatnonzero(w) for w in cw]
    keys, vals = [], []
    for r, wr in zip(rows, rw, strict=True):
        in_r = None if wr is None else wr != 0
        row_rows = np.arange(n) if in_r is None else np.flatnonzero(in_r)
        for c, wc, cr in zip(cols, cw, col_rows, strict=True):
            # the rows where both weights are non-zero, in row order
            both = row_rows if cr is None else (cr if in_r is None else cr[in_r[cr]])
            if len(both) == 0:
                continue
            keys.append(r[both] * shape[1] + c[both])
            wr_both = None if wr is None else wr[both]
            vals.append(_product(wr_both, None if wc is None else wc[both], len(both)))
    if not keys:
        return sp.csr_matrix(shape)
    present, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=np.concatenate(vals), minlength=len(present))
    return sp.csr_matrix((sums, (present // shape[1], present % shape[1])), shape=shape)


def _product(a: np.ndarray | None, b: np.ndarray | None, n: int) -> np.ndarray:
    """Row-wise product of two optional weight vectors (None = all ones)."""
    if a is None and b is None:
        return np.ones(n)
    if a is None:
        return np.asarray(b, dtype=float)
    if b is None:
        return np.asarray(a, dtype=float)
    return a * b


def _indicator_cross(zt: sp.csr_matrix, Xy: np.ndarray | XyColumns) -> np.ndarray:
    """(nbins, ncol): ``Z'[X y]`` of an indicator term (``zt`` = Z', _indicator_transpose), the
    sums of its rows of [X y] per level, as one sparse product instead of a pass per column.

    Each sum adds its rows in increasing row order starting from 0, as ``np.bincount`` does, so
    the result is bit-for-bit the per-column bincount's.
    """
    if not isinstance(Xy, XyColumns):
        return np.asarray(zt @ Xy)
    out = np.empty((zt.shape[0], Xy.shape[1]))
    out[:, :-1] = zt @ Xy.X
    out[:, -1] = zt @ Xy.y
    return out


def _indicator_transpose(codes: np.ndarray, rows: np.ndarray, nbins: int, n: int) -> sp.csr_matrix:
    """Z' (nbins x n) of an indicator term: 1 at (codes[i], i) for the rows ``rows``."""
    return sp.csr_matrix((np.ones(len(rows)), (codes[rows], rows)), shape=(nbins, n))


def _term_cross(
    codes: np.ndarray,
    w: np.ndarray | None,
    nbins: int,
    Xy: np.ndarray | XyColumns,
    products: dict | None = None,
) -> np.ndarray:
    """(nbins, ncol): ``Z'[X y]`` of one term, Z with ``w[i]`` (1 when None) in row i's column.

    Rows with weight 0 add only zeros and are skipped (adding a zero never changes a sum that
    starts at +0); 0/1 weights go through ``_indicator_cross``, other weights through a
    per-column bincount of the products, as before.
    """
    n, ncol = Xy.shape
    if w is None:
        zt = _memo(
            products,
            [codes],
            ("zt", nbins, n),
            lambda: _indicator_transpose(codes, np.arange(n), nbins, n),
        )
        return _indicator_cross(zt, Xy)
    rows = np.flatnonzero(w)
    if np.all(w[rows] == 1.0):
        zt = _memo(
            products,
            [codes, w],
            ("zt", nbins, n),
            lambda: _indicator_transpose(codes, rows, nbins, n),
        )
        return _indicator_cross(zt, Xy)
    out = np.empty((nbins, ncol))
    every = len(rows) == n  # no zero weights: no copies of the rows
    cr, wr = (codes, w) if every else (codes[rows], w[rows])
    for j in range(ncol):
        x = Xy[:, j] if every else Xy[:, j][rows]
        out[:, j] = np.bincount(cr, weights=wr * x, minlength=nbins)
    return out


def _rest_cells(rest_cols: list[np.ndarray], qr: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Compress rows to the distinct combinations of rest-term levels when there are few.

    Returns (cell code per row, cell x rest-column indicator matrix), or None.
    """
    if not rest_cols:
        return None
    radix = [int(c.max()) + 1 for c in rest_cols]
    if float(np.prod(radix, dtype=float)) > 2_000_000:
        return None
    key = np.zeros(len(rest_cols[0]), dtype=np.int64)
    for c, r in zip(rest_cols, radix, strict=True):
        key = key * r + c
    present = np.bincount(key, minlength=int(np.prod(radix)))
    cells = np.flatnonzero(present)
    if len(cells) > 20_000:
        return None
    index = np.full(len(present), -1, dtype=np.int64)
    index[cells] = np.arange(len(cells))
    cell_of_row = index[key]
    # decode each cell's rest columns from the mixed-radix key (first row of each cell)
    first = np.full(len(cells), -1, dtype=np.int64)
    first[cell_of_row[::-1]] = np.arange(len(key))[::-1]
    ind = np.zeros((len(cells), qr))
    for c in rest_cols:
        ind[np.arange(len(cells)), c[first]] = 1.0
    return cell_of_row, ind


CELLS_MAX = 20_000  # distinct combinations of rest columns up to which counts go by cells


def _count_cells(
    rest_cols: list[np.ndarray], rest_w: list[np.ndarray | None], qr: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows grouped by their combination of rest columns, for rest terms whose Z entries are
    all 0 or 1 (a weight-0 row has no column in that term): (cell of every row, cell x column
    indicator matrix), or None when there are more than CELLS_MAX cells.

    Z_R'Z_R and Z_B'Z_R of such terms are counts, sums of integers: summed over the cells they
    are exactly the per-row bincounts, in any order.
    """
    n = len(rest_cols[0])
    present = [
        c if w is None else np.where(w != 0, c, qr) for c, w in zip(rest_cols, rest_w, strict=True)
    ]
    cell = np.zeros(n, dtype=np.int64)
    for code in present:
        cell, uniques = pd.factorize(cell * (qr + 1) + code)
        if len(uniques) > CELLS_MAX:
            return None
    nc = int(cell.max()) + 1
    row = np.zeros(nc, dtype=np.int64)
    row[cell] = np.arange(n)  # a row of each cell (all its rows share their columns)
    ind = np.zeros((nc, qr + 1))
    for code in present:
        ind[np.arange(nc), code[row]] = 1.0
    return cell.astype(np.int64), ind[:, :qr]


def _cell_counts(
    rows_b: list[np.ndarray], cell: np.ndarray, ind: np.ndarray, nbm: int
) -> np.ndarray:
    """Z_B'Z_R (nbm x qr) from the rows' cells: counts of rows per (block slot, cell) summed
    over each rest column's cells (``ind``: one column per term in each row, so sparse).
    Integer counts: the same numbers in any order of summation."""
    nc, qr = ind.shape
    ind_t = sp.csr_matrix(ind.T)
    cbf = np.zeros((nbm, qr))
    for rb in rows_b:
        counts = np.bincount(rb * nc + cell, minlength=nbm * nc).reshape(nbm, nc)
        cbf += (ind_t @ counts.T.astype(float)).T
    return cbf


def _row_slots(layout: Layout, codes: list[np.ndarray]) -> list[np.ndarray]:
    """Per block term: the slot of every row within its block."""
    return [slots[codes[t]] for t, slots in zip(layout.block_terms, layout.level_slot, strict=True)]


def block_cross_products(layout: Layout, codes: list[np.ndarray]) -> np.ndarray:
    """The block-diagonal part of Z_B'Z_B, (nb, m, m): counts of rows per pair of slots."""
    m, nb = layout.m, layout.n_blocks
    block = codes[layout.primary]
    row_slot = _row_slots(layout, codes)
    cbb = np.zeros(nb * m * m)
    for sa in row_slot:
        for sb in row_slot:
            cbb += np.bincount(block * (m * m) + sa * m + sb, minlength=nb * m * m)
    return cbb.reshape(nb, m, m)


def _dense_from_cells(
    out: CrossProducts,
    cells: tuple[np.ndarray, np.ndarray],
    rows_b: list[np.ndarray],
    layout: Layout,
) -> None:
    """C_FF = I' diag(cell counts) I and C_BF from the cells of the rest terms (``cell`` the
    cell of each row, ``ind`` the cells' 0/1 indicators of the rest columns)."""
    cell, ind = cells
    nc = ind.shape[0]
    nbm = layout.n_blocks * layout.m
    out.cff_dense = ind.T @ (np.bincount(cell, minlength=nc)[:, None] * ind)
    out.cbf_dense = _cell_counts(rows_b, cell, ind, nbm).reshape(
        layout.n_blocks, layout.m, layout.n_rest
    )


def _add_sums(out: np.ndarray, key: np.ndarray, weights: np.ndarray | None) -> None:
    """``out += np.bincount(key, weights, minlength=out.size)`` (``out`` contiguous, the sums
    by flat index), touching only the keys present: each key's rows are summed in row order
    from +0 as bincount sums them, and the other entries would only get +0 added (no entry is
    -0: every sum starts at +0), so the result is bit for bit the same. A full bincount per
    pair of rest terms costs q_R^2 each: with a run term per system, (systems)^4 in all."""
    if len(key) == 0:
        return
    present, inverse = np.unique(key, return_inverse=True)
    flat = out.reshape(-1)
    assert np.may_share_memory(flat, out)
    flat[present] += np.bincount(inverse.reshape(-1), weights=weights, minlength=len(present))


def _weighted_dense(
    rest_cols: list[np.ndarray],
    rest_w: list[np.ndarray | None],
    rows_b: list[np.ndarray],
    size_bf: int,
    qr: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Dense C_FF = Z_F'Z_F and flat C_BF = Z_B'Z_F with weighted rest terms, by bincount;
    rows where a weight is 0 add zeros only: each sum runs over the other rows, and a pair of
    terms with no row in common (the run terms of two systems) adds nothing."""
    n = len(rest_cols[0]) if rest_cols else 0
    nonzero = [None if w is None else np.flatnonzero(w) for w in rest_w]
    cff = np.zeros((qr, qr))
    for ca, wa, ra in zip(rest_cols, rest_w, nonzero, strict=True):
        in_a = None
        if ra is not None:
            in_a = np.zeros(n, dtype=bool)
            in_a[ra] = True
        for cb, wb, rb_ in zip(rest_cols, rest_w, nonzero, strict=True):
            if wa is None and wb is None:
                _add_sums(cff, ca * qr + cb, None)
                continue
            if ra is None or rb_ is None:
                both = rb_ if ra is None else ra
            elif ca is cb:
                both = ra
            else:
                assert in_a is not None  # the rows where both weights are non-zero, in order
                both = rb_[in_a[rb_]]
            w = _product(None if wa is None else wa[both], None if wb is None else wb[both], 0)
            _add_sums(cff, ca[both] * qr + cb[both], w)
    cbf = np.zeros(size_bf)
    for rb in rows_b:
        for ca, wa, ra in zip(rest_cols, rest_w, nonzero, strict=True):
            if wa is None:
                _add_sums(cbf, rb * qr + ca, None)
            else:
                _add_sums(cbf, rb[ra] * qr + ca[ra], wa[ra])
    return cff, cbf


def cross_products(
    layout: Layout,
    codes: list[np.ndarray],
    Xy: np.ndarray | XyColumns,
    dense: bool,
    weights: list[np.ndarray | None] | None = None,
    cbb: np.ndarray | None = None,
    memo: dict | None = None,
) -> CrossProducts:
    """All cross-products needed by the profiled deviance, by bincount over the rows.

    ``weights[k]`` scales term k's Z entries (slopes, dummy() terms; rest terms only);
    ``cbb``: block_cross_products() when the caller has it already; ``memo``: the products
    memo of a FitCache (Z' of indicator terms, Z_B'[X y] and [X y]'[X y] of the same arrays).
    """
    wts = list(weights) if weights is not None else [None] * len(codes)
    rest_w = [wts[t] for t in layout.rest_terms]
    assert all(wts[t] is None for t in layout.block_terms)
    m, nb, qr = layout.m, layout.n_blocks, layout.n_rest
    ncol = Xy.shape[1]
    block = codes[layout.primary]
    row_slot = _row_slots(layout, codes)
    rows_b = [block * m + sa for sa in row_slot] if m > 1 else [block]
    if cbb is None:
        cbb = block_cross_products(layout, codes)

    def block_cross() -> np.ndarray:
        cby = np.zeros((nb * m, ncol))
        for rb in rows_b:
            cby += _term_cross(rb, None, nb * m, Xy, memo)
        return cby

    columns = [Xy.X, Xy.y] if isinstance(Xy, XyColumns) else [Xy]
    cby = _memo(memo, [*columns, *rows_b], ("cby", nb * m), block_cross)
    rest_cols = [
        codes[t] + off for t, off in zip(layout.rest_terms, layout.rest_offsets, strict=True)
    ]
    plain = all(w is None for w in rest_w)
    cells = _rest_cells(rest_cols, qr) if dense and plain else None
    if cells is not None and nb * m * cells[1].shape[0] > 10_000_000:
        cells = None
    cfy = np.zeros((qr, ncol))
    cyy = _memo(
        memo, columns, ("cyy",), Xy.gram if isinstance(Xy, XyColumns) else lambda: Xy.T @ Xy
    )
    out = CrossProducts(cbb.reshape(nb, m, m), cby, cfy, cyy, None, None, None, None)
    if cells is not None:
        cell, ind = cells
        nc = ind.shape[0]
        cell_y = np.column_stack(
            [np.bincount(cell, weights=Xy[:, j], minlength=nc) for j in range(ncol)]
        )
        out.cfy[:] = ind.T @ cell_y
        _dense_from_cells(out, cells, rows_b, layout)
        return out
    for ca, wa in zip(rest_cols, rest_w, strict=True):
        out.cfy += _term_cross(ca, wa, qr, Xy, memo)
    zero_one = all(w is None or bool(np.all((w == 0.0) | (w == 1.0))) for w in rest_w)
    counted = _count_cells(rest_cols, rest_w, qr) if dense and zero_one and qr else None
    if counted is not None and nb * m * counted[1].shape[0] <= 10_000_000:
        _dense_from_cells(out, counted, rows_b, layout)
    elif dense:
        cff, cbf = _weighted_dense(rest_cols, rest_w, rows_b, nb * m * qr, qr)
        out.cff_dense = cff
        out.cbf_dense = cbf.reshape(nb, m, qr)
    else:
        out.cbf_sparse = _count_matrix(rows_b, rest_cols, (nb * m, qr), None, rest_w)
        out.cff_sparse = _count_matrix(rest_cols, rest_cols, (qr, qr), rest_w, rest_w)
    return out
