"""Cross-products of the random-effect indicators with each other and with [X y], computed once.

Layout (see layout.py): B = primary factor plus terms nested in it, arranged as ``nb`` blocks
of ``m`` slots; R = the rest terms' columns (``qr``) followed by the p columns of X and y.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .layout import Layout


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


def _count_matrix(
    rows: list[np.ndarray], cols: list[np.ndarray], shape: tuple[int, int]
) -> sp.csr_matrix:
    """Sparse co-occurrence counts summed over all (row codes, column codes) pairs."""
    keys = [r * shape[1] + c for r in rows for c in cols]
    if not keys:
        return sp.csr_matrix(shape)
    uk, cnt = np.unique(np.concatenate(keys), return_counts=True)
    return sp.csr_matrix((cnt.astype(float), (uk // shape[1], uk % shape[1])), shape=shape)


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


def cross_products(
    layout: Layout, codes: list[np.ndarray], Xy: np.ndarray, dense: bool
) -> CrossProducts:
    """All cross-products needed by the profiled deviance, by bincount over the rows."""
    m, nb, qr = layout.m, layout.n_blocks, layout.n_rest
    ncol = Xy.shape[1]
    block = codes[layout.primary]
    row_slot = [
        slots[codes[t]] for t, slots in zip(layout.block_terms, layout.level_slot, strict=True)
    ]
    rows_b = [block * m + sa for sa in row_slot] if m > 1 else [block]
    cbb = np.zeros(nb * m * m)
    for sa in row_slot:
        for sb in row_slot:
            cbb += np.bincount(block * (m * m) + sa * m + sb, minlength=nb * m * m)
    cby = np.zeros((nb * m, ncol))
    for rb in rows_b:
        for j in range(ncol):
            cby[:, j] += np.bincount(rb, weights=Xy[:, j], minlength=nb * m)
    rest_cols = [
        codes[t] + off for t, off in zip(layout.rest_terms, layout.rest_offsets, strict=True)
    ]
    cells = _rest_cells(rest_cols, qr) if dense else None
    if cells is not None and nb * m * cells[1].shape[0] > 10_000_000:
        cells = None
    cfy = np.zeros((qr, ncol))
    cyy = Xy.T @ Xy
    out = CrossProducts(cbb.reshape(nb, m, m), cby, cfy, cyy, None, None, None, None)
    if cells is not None:
        cell, ind = cells
        nc = ind.shape[0]
        cell_y = np.column_stack(
            [np.bincount(cell, weights=Xy[:, j], minlength=nc) for j in range(ncol)]
        )
        out.cfy[:] = ind.T @ cell_y
        out.cff_dense = ind.T @ (np.bincount(cell, minlength=nc)[:, None] * ind)
        cbf = np.zeros((nb * m, qr))
        for rb in rows_b:
            counts = np.bincount(rb * nc + cell, minlength=nb * m * nc).reshape(nb * m, nc)
            cbf += counts @ ind
        out.cbf_dense = cbf.reshape(nb, m, qr)
        return out
    for ca in rest_cols:
        for j in range(ncol):
            out.cfy[:, j] += np.bincount(ca, weights=Xy[:, j], minlength=qr)
    if dense:
        cff = np.zeros((qr, qr))
        for ca in rest_cols:
            for cb in rest_cols:
                cff += np.bincount(ca * qr + cb, minlength=qr * qr).reshape(qr, qr)
        cbf = np.zeros(nb * m * qr)
        for rb in rows_b:
            for ca in rest_cols:
                cbf += np.bincount(rb * qr + ca, minlength=nb * m * qr)
        out.cff_dense = cff
        out.cbf_dense = cbf.reshape(nb, m, qr)
    else:
        out.cbf_sparse = _count_matrix(rows_b, rest_cols, (nb * m, qr))
        out.cff_sparse = _count_matrix(rest_cols, rest_cols, (qr, qr))
    return out
