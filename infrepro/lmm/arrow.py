"""The REML criterion by an arrowhead elimination of the joint [Z Lambda, X] columns.

A model with a variance per level of a factor (one ``(0 + dummy(f, "l") | g)`` term per level,
the standard lme4 idiom, e.g. a run variance per system) splits its rows into parts, one per
dummy() term. Every column, random or fixed, whose rows lie in one part (that system's run
intercepts and slopes, its fixed effects) is confined to that part; the others (segments, the
intercept, shared covariates) form the rest. Ordered parts first, rest last, the joint matrix

    M(theta) = Lt' [Z X]'[Z X] Lt + It,   Lt = diag(Lambda, I_p),   It = diag(I_q, 0_p)

is an arrowhead: small dense blocks per part (batched Cholesky) bordering one dense rest block
whose width does not grow with the number of parts. So one evaluation is linear in the parts,
where eliminating the segments first (profiled.py) leaves every run and fixed column in one
dense block (its Cholesky cubic in the systems).

REML needs only the joint determinant and r2 (Bates et al. 2015, eq. 42):

    log|M| = log|L|^2 + log|R_X|^2,   d_R(theta) = log|M| + (n - p)(1 + log(2 pi r2 / (n - p)))

with y bordered last (r2 the square of the factor's last diagonal element). Its gradient, from
dM/dtheta_k = E_k C Lt + Lt C E_k and Lt C Lt = M - It (E_k: term k's columns),

    d d_R / d theta_k = (2 / theta_k) (q_k - tr_k(M^-1) - (n - p) |u_k|^2 / r2),

needs the diagonal of M^-1 on the random columns only: for the arrowhead M = [[D, B], [B', R]]
with Schur complement T = R - B'D^-1 B, diag(M^-1)_b = diag(D_b^-1) + diag(W_b T^-1 W_b'),
W_b = D_b^-1 B_b, and diag(T^-1) on the rest. (R_X'R_X)^-1 is M^-1's fixed block, built once
per solve; log|R_X|^2 = -log|(R_X'R_X)^-1| splits log|M| into lme4's two pieces.

ML needs log|L|^2 alone at every evaluation, so ML fits keep profiled.py's elimination.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from infrepro.lmm.kr import BlockProducts

LOG_2PI = float(np.log(2.0 * np.pi))
ARROW_WIDTH_MAX = 5000  # the dense rest block (its w x w inverse per gradient: 200 MB)
ARROW_ENTRIES_MAX = 10_000_000  # the parts' dense block x rest products (floats)
# A part's fixed columns lie in the span of its random ones (a system's indicator is the sum of
# its runs' intercepts), so their pivot in D_b is the cancellation c'Cc - theta^2 c'C(..)^-1 Cc,
# which shrinks as theta grows (a run slope's theta at 10: 2e-8 of the diagonal, the criterion
# then off by 9e-12 relative, at 100 by 5e-10). Below this share the evaluation is left to
# the segments-first elimination, which takes the fixed columns last (ArrowInaccurate)
ARROW_PIVOT_MIN = 1e-6


class ArrowInaccurate(ArithmeticError):
    """A fixed column's pivot in a part's block lost more digits than ARROW_PIVOT_MIN allows."""


@dataclass(frozen=True)
class ArrowLayout:
    """Which joint column sits where: per part a block of ``m`` slots, then the rest.

    Joint columns: the random terms' columns in term order, then X's columns.
    """

    n_parts: int
    m: int
    slot_col: np.ndarray  # (n_parts, m) joint column of every slot, -1 for padding
    rest_cols: np.ndarray  # joint columns of the rest, random ones first, then fixed

    @property
    def width(self) -> int:
        """The rest block's width, with y bordered last."""
        return len(self.rest_cols) + 1

    def fits(self) -> bool:
        """Whether the rest block and the parts' products stay within the memory caps."""
        return self.width <= ARROW_WIDTH_MAX and self.n_parts * self.m * self.width <= (
            ARROW_ENTRIES_MAX
        )

    def work(self) -> float:
        """Multiply-adds per evaluation: the blocks, their Schur update, the rest's Cholesky."""
        nb, m, w = self.n_parts, self.m, self.width
        return float(nb) * m**3 + float(nb) * m * w * w + float(w) ** 3 / 3.0


def row_parts(
    codes: list[np.ndarray], weights: list[np.ndarray | None], n: int
) -> list[np.ndarray]:
    """Ways to part the rows: by which dummy() term's rows (0/1 weights; terms on the same rows
    count once) hold a row, the rows of none one more part; and finer, by that term's level too
    (a system's runs). None when a row is in two such row sets or there is one part.

    By system, a system's fixed columns are confined to its part (a rest block the width of
    the segments whatever the systems); by run, the blocks stay small whatever the runs (a run's
    intercept and slope) but the fixed columns are the rest's. ``_arrow`` takes the cheaper."""
    labels = np.full(n, -1, dtype=np.int64)
    level = np.zeros(n, dtype=np.int64)
    covered = np.zeros(n, dtype=np.int64)
    seen: set[bytes] = set()
    for c, w in zip(codes, weights, strict=True):
        if w is None:
            continue
        on = w != 0
        key = np.packbits(on).tobytes()
        if on.all() or key in seen or not np.all((w == 0) | (w == 1)):
            continue
        seen.add(key)
        labels[on] = len(seen) - 1
        level[on] = c[on]
        covered += on
    if np.any(covered > 1):
        return []
    if np.any(covered == 0):  # systems with one run have no run term: one part for them all
        labels[covered == 0] = len(seen)
        seen.add(b"")
    if len(seen) < 2:
        return []
    fine = np.unique(labels * (int(level.max()) + 1) + level, return_inverse=True)[1]
    return [labels, fine.reshape(-1)] if fine.max() > labels.max() else [labels]


def shared_levels(
    codes: list[np.ndarray], weights: list[np.ndarray | None], parts: np.ndarray
) -> int:
    """How many random-effect columns have rows in more than one part: a lower bound of the
    rest block's width, from the codes alone (the segments, in every system's rows), so that
    a partition whose rest cannot fit is dropped before [Z X y] is built (4,000,000 rows at
    100,000 segments)."""
    count = 0
    for c, w in zip(codes, weights, strict=True):
        on = slice(None) if w is None else np.flatnonzero(w)
        levels, part = c[on], parts[on]
        size = int(levels.max()) + 1 if len(levels) else 0
        lo = np.full(size, np.iinfo(np.int64).max)
        hi = np.full(size, -1)
        np.minimum.at(lo, levels, part)
        np.maximum.at(hi, levels, part)
        count += int(np.sum((hi >= 0) & (lo != hi)))
    return count


def confine_fixed(X: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """A unipotent A (det 1) with every column of X A confined to one part where X allows.

    Treatment contrasts overlap the parts: the intercept equals each system's indicator on that
    system's rows, a covariate its interaction column. Eliminated after those, the intercept's
    Schur complement is n - (n - n_baseline): digits lost by cancellation, more with more
    systems. A shared column minus every confined column of a part that equals it on that part
    (the intercept minus the systems' indicators: the baseline's indicator) is confined, and
    the criterion is unchanged: X A spans X's columns and log|R_X|^2 moves by 2 log|det A| = 0.
    beta = A beta' and (R_X'R_X)^-1 = A (R_X'R_X)'^-1 A' map the solution back."""
    n, p = X.shape
    a = np.eye(p)
    if p == 0:
        return a
    order = np.argsort(parts, kind="stable")
    bounds = np.searchsorted(parts[order], np.arange(int(parts.max()) + 2))
    xs = sp.csc_matrix(X)
    starts, lengths = xs.indptr[:-1], np.diff(xs.indptr)
    part_of = parts[xs.indices]
    lo = np.minimum.reduceat(part_of, np.minimum(starts, max(len(part_of) - 1, 0)))
    hi = np.maximum.reduceat(part_of, np.minimum(starts, max(len(part_of) - 1, 0)))
    owner = np.where((lengths > 0) & (lo == hi), lo, -1)
    for r in np.flatnonzero(owner < 0):
        for b in np.unique(part_of[xs.indptr[r] : xs.indptr[r + 1]]):
            rows = order[bounds[b] : bounds[b + 1]]
            xr = X[rows, r]
            for j in np.flatnonzero(owner == b):
                if np.array_equal(X[rows, j], xr):
                    a[j, r] = -1.0
                    break
    return a


def mapped(X: np.ndarray, a: np.ndarray) -> np.ndarray:
    """X A for confine_fixed's A (identity but for a few -1s): X plus X (A - I)'s non-zero
    columns, one matrix-vector product each (X read by rows), not a dense product (240,000 x
    400 by 400 x 400 is 38 GFlop) nor a column of X at a time (strided: 23 s at 200 systems)."""
    out = X.copy()
    d = a - np.eye(a.shape[0])
    for r in np.flatnonzero(np.any(d != 0.0, axis=0)):
        out[:, r] += X @ d[:, r]
    return out


def joint_matrix(
    codes: list[np.ndarray],
    nlevels: list[int],
    weights: list[np.ndarray | None],
    X: np.ndarray,
    y: np.ndarray,
) -> sp.csc_matrix:
    """[Z X y] as one sparse matrix (n x (q + p + 1)); X's zeros are not stored."""
    n = len(y)
    rows, cols, vals = [], [], []
    off = 0
    for c, q, w in zip(codes, nlevels, weights, strict=True):
        if w is None:
            rows.append(np.arange(n))
            cols.append(off + c)
            vals.append(np.ones(n))
        else:
            on = np.flatnonzero(w)
            rows.append(on)
            cols.append(off + c[on])
            vals.append(w[on])
        off += q
    xr, xc = np.nonzero(X)
    rows += [xr, np.arange(n)]
    cols += [off + xc, np.full(n, off + X.shape[1])]
    vals += [X[xr, xc], np.asarray(y, dtype=float)]
    return sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n, off + X.shape[1] + 1),
    )


def arrow_layout(joint: sp.csc_matrix, parts: np.ndarray) -> ArrowLayout:
    """Confine every column (not y) whose rows lie in one part to that part's block."""
    ncol = joint.shape[1] - 1
    indptr = joint.indptr
    lengths = np.diff(indptr)[:ncol]
    part_of = parts[joint.indices[: indptr[ncol]]]
    starts = indptr[:ncol]
    lo = np.minimum.reduceat(part_of, starts) if ncol else np.zeros(0, dtype=np.int64)
    hi = np.maximum.reduceat(part_of, starts) if ncol else np.zeros(0, dtype=np.int64)
    confined = (lengths > 0) & (lo == hi)
    n_parts = int(parts.max()) + 1
    block_cols = np.flatnonzero(confined)
    owner = lo[block_cols]
    counts = np.bincount(owner, minlength=n_parts)
    m = int(counts.max()) if len(block_cols) else 0
    order = np.argsort(owner, kind="stable")  # within a part: random columns, then fixed
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(len(block_cols)) - firsts[owner[order]]
    slot_col = np.full((n_parts, max(m, 1)), -1, dtype=np.int64)
    slot_col[owner[order], slot] = block_cols[order]
    return ArrowLayout(n_parts, max(m, 1), slot_col, np.flatnonzero(~confined))


@dataclass(frozen=True)
class ArrowCore:
    """The factorization at one theta."""

    tb: np.ndarray  # scale of every slot (theta for random columns, 1 for fixed, 0 padding)
    ainv: np.ndarray  # D_b^-1 per part (n_parts, m, m)
    tr: np.ndarray  # scale of every rest column, y last
    lt: np.ndarray  # Cholesky factor of the rest's Schur complement, y bordered last
    logdet_m: float  # log|M| = log|L|^2 + log|R_X|^2

    @property
    def r2(self) -> float:
        return float(self.lt[-1, -1]) ** 2


class ArrowSchur:
    """REML criterion, gradient and solution on the arrowhead of ``ArrowLayout``."""

    has_gradient = True

    def __init__(
        self,
        joint: sp.csc_matrix,
        layout: ArrowLayout,
        nlevels: list[int],
        n: int,
        fixed_map: np.ndarray,
    ) -> None:
        """``joint``: [Z, X A, y] (joint_matrix); ``fixed_map``: A (confine_fixed)."""
        p = fixed_map.shape[0]
        self.layout, self.nlevels, self.n, self.p = layout, list(nlevels), n, p
        self.fixed_map = fixed_map
        self.k = k = len(nlevels)
        q = int(sum(nlevels))
        self.q = q
        col_term = np.concatenate([np.repeat(np.arange(k), nlevels), np.full(p, k), [k]]).astype(
            np.int64
        )  # fixed columns and y: index k (scale 1); padding: k + 1 (scale 0)
        nb, m = layout.n_parts, layout.m
        pad = layout.slot_col < 0
        self.slot_term = np.where(pad, k + 1, col_term[np.maximum(layout.slot_col, 0)])
        self.slot_random = (self.slot_term < k) | pad  # +1 on the diagonal (padding too)
        rest = np.append(layout.rest_cols, q + p)  # y last
        self.rest_term = col_term[rest]
        self.rest_random = rest < q
        w = len(rest)
        # where every joint column sits: (part, slot) or rest position
        ncol = q + p + 1
        part_of = np.full(ncol, -1, dtype=np.int64)
        slot_of = np.zeros(ncol, dtype=np.int64)
        rows, slots = np.nonzero(~pad)
        part_of[layout.slot_col[rows, slots]] = rows
        slot_of[layout.slot_col[rows, slots]] = slots
        rest_of = np.full(ncol, -1, dtype=np.int64)
        rest_of[rest] = np.arange(w)
        gram = (joint.T @ joint).tocoo()
        i, j, v = gram.row, gram.col, gram.data
        pi, pj = part_of[i], part_of[j]
        if np.any((pi >= 0) & (pj >= 0) & (pi != pj)):
            raise ValueError("columns of two parts share a row")
        self.cbb = np.zeros((nb, m, m))
        same = (pi >= 0) & (pj >= 0)
        self.cbb[pi[same], slot_of[i[same]], slot_of[j[same]]] = v[same]
        self.cbr = np.zeros((nb, m, w))
        br = (pi >= 0) & (pj < 0)
        self.cbr[pi[br], slot_of[i[br]], rest_of[j[br]]] = v[br]
        self.crr = np.zeros((w, w))
        rr = (pi < 0) & (pj < 0)
        self.crr[rest_of[i[rr]], rest_of[j[rr]]] = v[rr]
        self.width = w
        self._rest_cols = layout.rest_cols

    # -- one evaluation --------------------------------------------------------------------
    def core(self, theta: np.ndarray) -> ArrowCore:
        """D_b = Lt C_bb Lt + It per part; T = Lt (C_RR - sum_b C_bR' Lt D_b^-1 Lt C_bR) Lt +
        It on the rest, y bordered last; log|M| = sum_b log|D_b| + log|T without y|."""
        scale = np.concatenate([theta, [1.0, 0.0]])
        tb = scale[self.slot_term]
        a = tb[:, :, None] * self.cbb * tb[:, None, :]
        idx = np.arange(self.layout.m)
        a[:, idx, idx] += self.slot_random
        lb = np.linalg.cholesky(a)
        pivots = np.diagonal(lb, axis1=1, axis2=2)
        fixed = self.slot_term == self.k
        if np.any(pivots[fixed] ** 2 < ARROW_PIVOT_MIN * a[:, idx, idx][fixed]):
            raise ArrowInaccurate
        logdet_b = 2.0 * float(np.sum(np.log(pivots)))
        lbinv = np.linalg.inv(lb)
        ainv = np.swapaxes(lbinv, 1, 2) @ lbinv
        mats = tb[:, :, None] * ainv * tb[:, None, :]
        w = self.width
        tmp = mats @ self.cbr
        wtw = self.cbr.reshape(-1, w).T @ tmp.reshape(-1, w)
        tr = scale[self.rest_term]
        t = (self.crr - wtw) * tr[:, None] * tr[None, :]
        t[np.flatnonzero(self.rest_random), np.flatnonzero(self.rest_random)] += 1.0
        lt = np.linalg.cholesky(t)
        logdet = logdet_b + 2.0 * float(np.sum(np.log(np.diagonal(lt)[:-1])))
        return ArrowCore(tb=tb, ainv=ainv, tr=tr, lt=lt, logdet_m=logdet)

    def criterion(self, c: ArrowCore) -> float:
        """The REML criterion d_R(theta)."""
        nmp = self.n - self.p
        return c.logdet_m + nmp * (1.0 + LOG_2PI + np.log(c.r2 / nmp))

    def _modes(self, c: ArrowCore) -> tuple[np.ndarray, np.ndarray]:
        """The joint solution (u for random columns, beta for fixed ones) of the rest and of
        every part's slots: x_R = T^-1 t_y, x_b = D_b^-1 Lt_b C_bR' (-Lt_R x_R, 1)."""
        l0 = c.lt[:-1, :-1]
        x_r = sla.solve_triangular(l0, c.lt[-1, :-1], lower=True, trans="T", check_finite=False)
        v = np.append(-c.tr[:-1] * x_r, 1.0)
        x_b = np.einsum("bij,bj->bi", c.ainv, c.tb * (self.cbr @ v))
        return x_r, x_b

    def _tinv(self, c: ArrowCore) -> np.ndarray:
        """T^-1 without y, from its Cholesky factor."""
        w0 = self.width - 1
        linv = sla.solve_triangular(c.lt[:-1, :-1], np.eye(w0), lower=True, check_finite=False)
        return linv.T @ linv

    def _w(self, c: ArrowCore) -> np.ndarray:
        """W_b = D_b^-1 B_b, B_b = Lt_b C_bR Lt_R (without y)."""
        b = c.tb[:, :, None] * self.cbr[:, :, :-1] * c.tr[None, None, :-1]
        return c.ainv @ b

    def gradient(self, theta: np.ndarray, c: ArrowCore) -> np.ndarray:
        k, nmp = self.k, self.n - self.p
        tinv = self._tinv(c)
        wb = self._w(c)
        nb, m, w0 = wb.shape
        diag_b = np.diagonal(c.ainv, axis1=1, axis2=2) + np.sum(
            (wb.reshape(-1, w0) @ tinv).reshape(nb, m, w0) * wb, axis=2
        )
        x_r, x_b = self._modes(c)
        trace = np.bincount(self.slot_term.ravel(), weights=diag_b.ravel(), minlength=k + 2)
        usq = np.bincount(self.slot_term.ravel(), weights=(x_b**2).ravel(), minlength=k + 2)
        rt = self.rest_term[:-1]
        trace += np.bincount(rt, weights=np.diagonal(tinv), minlength=k + 2)
        usq += np.bincount(rt, weights=x_r**2, minlength=k + 2)
        val = np.asarray(self.nlevels, dtype=float) - trace[:k] - nmp * usq[:k] / c.r2
        grad = np.zeros(k)
        nz = theta != 0.0
        grad[nz] = 2.0 * val[nz] / theta[nz]
        return grad

    # -- the solution ----------------------------------------------------------------------
    def fixed_inverse(self, c: ArrowCore) -> np.ndarray:
        """(R_X'R_X)^-1: M^-1's block of the fixed columns, in X's column order."""
        q, p = self.q, self.p
        tinv = self._tinv(c)
        rest_fixed = np.flatnonzero(~self.rest_random[:-1])
        parts, slots = np.nonzero(self.slot_term == self.k)
        xb = self.layout.slot_col[parts, slots] - q
        xr = self._rest_cols[rest_fixed] - q
        e = self._w(c)[parts, slots, :]  # (p_b, w0)
        et = e @ tinv
        cov = np.zeros((p, p))
        cov[np.ix_(xr, xr)] = tinv[np.ix_(rest_fixed, rest_fixed)]
        cross = -et[:, rest_fixed]
        cov[np.ix_(xb, xr)] = cross
        cov[np.ix_(xr, xb)] = cross.T
        within = et @ e.T
        same = parts[:, None] == parts[None, :]
        within[same] += c.ainv[parts[:, None], slots[:, None], slots[None, :]][same]
        cov[np.ix_(xb, xb)] = within
        return cov

    def block_products(self) -> BlockProducts | None:
        """Z'Z, Z'X and X'X in this arrowhead's layout for Kenward-Roger (kr.py): the parts'
        slots as its block part B, the rest's random columns then X as its R'. Only where
        every slot holds a random column and X is unmapped (parts by run: the fixed columns
        all in the rest), else None. Runs as B leave the segments as the rest, where the
        segments-first layout leaves every run column in one dense rest block (4 systems x
        300 runs: 2,400 columns against 400)."""
        k = self.k
        if np.any(self.slot_term == k) or not np.array_equal(self.fixed_map, np.eye(self.p)):
            return None
        w = self.width - 1  # y, bordered last, is not KR's
        return BlockProducts(
            cbb=self.cbb,
            cbr=self.cbr[:, :, :w],
            crr=self.crr[:w, :w],
            slot_term=np.where(self.slot_term == k + 1, k, self.slot_term),
            rest_term=self.rest_term[:-1][self.rest_random[:-1]],
            n_terms=k,
        )

    def solution_parts(
        self, c: ArrowCore
    ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, float]:
        """beta, (R_X'R_X)^-1, log|R_X|^2, u per random column (q,) and |u|^2."""
        q, p = self.q, self.p
        x_r, x_b = self._modes(c)
        x = np.zeros(q + p)
        filled = self.layout.slot_col >= 0
        x[self.layout.slot_col[filled]] = x_b[filled]
        x[self._rest_cols] = x_r
        cov = self.fixed_inverse(c)
        logdet_rx = 0.0
        if p:
            logdet_rx = -2.0 * float(np.sum(np.log(np.diagonal(np.linalg.cholesky(cov)))))
        u = x[:q]
        a = self.fixed_map
        return a @ x[q:], a @ cov @ a.T, logdet_rx, u, float(u @ u)
