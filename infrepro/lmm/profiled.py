"""lme4's profiled deviance for random-intercept models, evaluated on precomputed cross-products.

Notation as in Bates et al. (2015, JSS 67(1), section 3): ``y = X beta + Z Lambda u + e``,
``A = L L' = Lambda Z'Z Lambda + I``, ``r2`` the penalized residual sum of squares at the
conditional optimum of (beta, u), ``R_X`` the Cholesky factor of the Schur complement for beta.

    ML:   d(theta)   = log|L|^2 + n (1 + log(2 pi r2 / n))
    REML: d_R(theta) = log|L|^2 + log|R_X|^2 + (n - p)(1 + log(2 pi r2 / (n - p)))

Each evaluation works on the cross-products only. The block-diagonal part of A (primary factor
and terms nested in it, see layout.py) is eliminated block by block; the Schur complement of
the rest terms, bordered by the [X y] columns, is factored densely ("dense" path, a few dozen
to a few hundred columns) or as a sparse matrix ("sparse" path, a large crossed factor).
With y as the last bordered column, r2 is the square of the factor's last diagonal element.
Identical blocks (balanced designs) are grouped, so a balanced fit costs O(width^2) per
evaluation whatever the number of segments.

The dense path also returns the analytic gradient, from
    d log|A| / d theta_k    = (2 / theta_k) (q_k - tr_k(A^-1))
    d r2 / d theta_k        = -2 |u_k|^2 / theta_k
    d log|R_X|^2 / d theta_k = -(2 / theta_k) tr((R_X'R_X)^-1 U_Xk'U_Xk),  U_X = A^-1 Lambda Z'X
(u the conditional modes; all from the same factorization).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from infrepro.lmm.arrow import (
    ARROW_WIDTH_MAX,
    ArrowCore,
    ArrowInaccurate,
    ArrowLayout,
    ArrowSchur,
    arrow_layout,
    confine_fixed,
    joint_matrix,
    mapped,
    row_parts,
    shared_levels,
)
from infrepro.lmm.crossprod import CrossProducts, XyColumns, block_cross_products, cross_products
from infrepro.lmm.kr import BlockProducts
from infrepro.lmm.layout import Layout, choose_layout
from infrepro.lmm.optimize import central_gradient

LOG_2PI = float(np.log(2.0 * np.pi))
DENSE_REST_SMALL = 100  # rest blocks this narrow always use the dense path
DENSE_WORK_MAX = 50_000_000  # otherwise dense only while n_blocks * m * width^2 stays below
DENSE_ENTRIES_MAX = 10_000_000  # memory cap (floats) for the dense block x rest products
GROUP_ENTRIES_MAX = 5_000_000  # memory cap (floats) for the grouped block tensor
# a design whose blocks share few Z'Z patterns (balanced: one) costs O(width^2) per evaluation
# on the grouped dense path whatever the number of blocks: dense up to this many block x rest
# entries (floats) and this rest width
GROUPED_ENTRIES_MAX = 50_000_000
GROUPED_WIDTH_MAX = 2000
# a model with MANY_TERMS or more random terms (a run variance per system) takes the dense path
# while an evaluation's work stays below DENSE_WORK_MAX for each of the 2k + 1 evaluations a
# gradient costs on the sparse path (it has no analytic gradient; a Hessian by differences of
# values takes 2k^2 + 1), up to width DENSE_WIDTH_MANY_TERMS (its w x w matrices: 200 MB each).
# The run-aware conditional model at 200 systems (202 terms, the 1,800 runs x bins as blocks,
# width 1601) went sparse: 0.27 s an evaluation, 405 a gradient, hours a fit; dense, its value
# and gradient take 0.7 s
MANY_TERMS = 8
DENSE_WIDTH_MANY_TERMS = 5000
# ... and groups its blocks with a tensor of up to this many entries (200 MB): that model's
# three block patterns x 1601^2 halve its value and gradient (0.9 -> 0.5 s)
GROUP_ENTRIES_MANY_TERMS = 25_000_000


def slot_terms(layout: Layout, k: int) -> np.ndarray:
    """(nb, m): the term of every block slot (k marks padding)."""
    slot_term = np.full((layout.n_blocks, layout.m), k, dtype=np.int64)
    for t, slots, blocks in zip(
        layout.block_terms, layout.level_slot, layout.level_block, strict=True
    ):
        slot_term[blocks, slots] = t
    return slot_term


def block_groups(
    cbb: np.ndarray, slot_term: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks with identical Z'Z pattern: (first block, group of every block, group sizes)."""
    nb, m = slot_term.shape
    key = np.concatenate([cbb.reshape(nb, m * m), slot_term.astype(float)], axis=1)
    _, first, inverse, counts = np.unique(
        key, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inverse.reshape(-1), counts


def groups_well(n_groups: int, nb: int, m: int, width: int, cap: float | None = None) -> bool:
    """Whether _DenseSchur groups the blocks (the condition of _DenseSchur._group; ``cap``:
    the grouped tensor's entries at most, GROUP_ENTRIES_MAX by default)."""
    limit = GROUP_ENTRIES_MAX if cap is None else cap
    return n_groups * m * 2 <= nb and n_groups * m * m * width * width <= limit


# the arrowhead elimination (arrow.py) when its work per evaluation is below this share of the
# segments-first one's
ARROW_GAIN = 0.5
# ... and is not looked for below this much segments-first work per evaluation (a few hundredths
# of a second): the partition and the joint cross-products cost a pass over the rows per fit
ARROW_MIN_WORK = 5e7
SPARSE_DENSE_FACTOR_MAX = 3000  # sparse path: factor the rest block densely up to this size
DENSE_CBF_FILL = 0.25  # sparse path: C_BF this full (every run scores every segment) is dense
DENSE_CBF_ENTRIES_MAX = 20_000_000  # ... while it holds at most this many floats


@dataclass(frozen=True)
class Solution:
    """The conditional solution at one theta."""

    theta: np.ndarray
    beta: np.ndarray  # for the response passed in (centred by the caller)
    r2: float
    logdet_l: float
    logdet_rx: float
    unscaled_cov: np.ndarray  # (R_X' R_X)^{-1}
    b: list[np.ndarray]  # conditional modes b = Lambda u per term, per level
    u_sq: float  # ||u||^2


@dataclass(frozen=True)
class Core:
    """The factorization at one theta, as every path computes it."""

    tb: np.ndarray  # theta of each block slot (nb, m)
    ainv: np.ndarray  # A_b^{-1} per block (nb, m, m)
    tf: np.ndarray  # theta of each rest column (qr,)
    lx: np.ndarray  # Cholesky factor of the [X y] Schur complement
    logdet_l: float  # log|L|^2


@dataclass(frozen=True)
class DenseCore(Core):
    """Dense path: also the whole factor of the rest + [X y] block."""

    lt: np.ndarray


@dataclass(frozen=True)
class SparseCore(Core):
    """Sparse path: also C_BF Lambda_F and the rest-block solutions for [X y]."""

    cbf: sp.csr_matrix | np.ndarray  # dense when C_BF is full
    h: np.ndarray


class _Base:
    """Shared bookkeeping: sizes, the theta index of every block slot and rest column."""

    def __init__(self, layout: Layout, nlevels: list[int], n: int, p: int, reml: bool) -> None:
        self.layout = layout
        self.nlevels = nlevels
        self.k = len(nlevels)
        self.n, self.p, self.reml = n, p, reml
        self.m = layout.m
        self.nb = layout.n_blocks
        self.qr = layout.n_rest
        self.width = self.qr + p + 1
        self.slot_term = slot_terms(layout, self.k)
        rest_term = np.empty(self.qr, dtype=np.int64)
        for t, off in zip(layout.rest_terms, layout.rest_offsets, strict=True):
            rest_term[off : off + nlevels[t]] = t
        self.rest_term = rest_term

    def criterion(self, logdet_l: float, lx: np.ndarray) -> float:
        """The profiled deviance (ML) or REML criterion from log|L|^2 and the [X y] factor."""
        r2 = float(lx[-1, -1]) ** 2
        p = self.p
        if self.reml:
            logdet_rx = 2.0 * float(np.sum(np.log(np.diagonal(lx)[:p])))
            nmp = self.n - p
            return logdet_l + logdet_rx + nmp * (1.0 + LOG_2PI + np.log(r2 / nmp))
        return logdet_l + self.n * (1.0 + LOG_2PI + np.log(r2 / self.n))

    def _beta_cov(self, lx: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        p = self.p
        rx = lx[:p, :p]
        if p == 0:
            return np.zeros(0), np.zeros((0, 0)), 0.0
        beta = sla.solve_triangular(rx.T, lx[p, :p], lower=False, check_finite=False)
        cov = sla.cho_solve((rx, True), np.eye(p), check_finite=False)
        return beta, cov, 2.0 * float(np.sum(np.log(np.diagonal(rx))))

    def _blocks(
        self, theta: np.ndarray, slot: np.ndarray, cbb: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per block: theta by slot, A_b^{-1} and log|A_b|."""
        tb = np.append(theta, 0.0)[slot]
        if self.m == 1:
            a = tb[:, 0] ** 2 * cbb[:, 0, 0] + 1.0
            return tb, (1.0 / a)[:, None, None], np.log(a)
        a = tb[:, :, None] * cbb * tb[:, None, :]
        idx = np.arange(self.m)
        a[:, idx, idx] += 1.0
        lb = np.linalg.cholesky(a)
        logdet = 2.0 * np.sum(np.log(np.diagonal(lb, axis1=1, axis2=2)), axis=1)
        lbinv = np.linalg.inv(lb)
        ainv = np.swapaxes(lbinv, 1, 2) @ lbinv
        return tb, ainv, logdet

    def _solution(
        self,
        theta: np.ndarray,
        c: Core,
        beta_cov: tuple[np.ndarray, np.ndarray, float],
        parts: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> Solution:
        """The Solution from the factorization, ``_beta_cov``'s (beta, (R_X'R_X)^-1, log|R_X|^2)
        and ``parts`` = (theta per block slot, u_b, u_f): b = Lambda u,
        r2 = (last diagonal of the [X y] factor)^2, |u|^2 = |u_b|^2 + |u_f|^2."""
        beta, cov, logdet_rx = beta_cov
        tb, u_b, u_f = parts
        return Solution(
            theta=theta,
            beta=beta,
            r2=float(c.lx[-1, -1]) ** 2,
            logdet_l=c.logdet_l,
            logdet_rx=logdet_rx,
            unscaled_cov=cov,
            b=self._assemble(tb * u_b, c.tf * u_f),
            u_sq=float(np.sum(u_b**2) + np.sum(u_f**2)),
        )

    def _assemble(self, b_b: np.ndarray, b_f: np.ndarray) -> list[np.ndarray]:
        """Conditional modes per term from the block and rest parts."""
        b: list[np.ndarray] = [np.zeros(0)] * self.k
        lay = self.layout
        for t, slots, blocks in zip(lay.block_terms, lay.level_slot, lay.level_block, strict=True):
            b[t] = b_b[blocks, slots]
        for t, off in zip(lay.rest_terms, lay.rest_offsets, strict=True):
            b[t] = b_f[off : off + self.nlevels[t]]
        return b


class _DenseSchur(_Base):
    """Dense rest block; grouped identical blocks; analytic gradient."""

    has_gradient = True

    def __init__(self, base_args: tuple, cp: CrossProducts, group_cap: float | None = None) -> None:
        super().__init__(*base_args)
        self.group_cap = group_cap  # the grouped tensor's entries at most (groups_well)
        nb, m, qr, p, w = self.nb, self.m, self.qr, self.p, self.width
        assert cp.cbf_dense is not None and cp.cff_dense is not None
        self.cbr = np.concatenate([cp.cbf_dense, cp.cby.reshape(nb, m, p + 1)], axis=2)
        crr = np.zeros((w, w))
        crr[:qr, :qr] = cp.cff_dense
        crr[:qr, qr:] = cp.cfy
        crr[qr:, :qr] = cp.cfy.T
        crr[qr:, qr:] = cp.cyy
        self.crr = crr
        self.cbb = cp.cbb
        self._group()

    def _group(self) -> None:
        """Group blocks with identical Z'Z pattern: the Schur update is then sum_g M_g : T_g."""
        nb, m, w = self.nb, self.m, self.width
        first, inverse, counts = block_groups(self.cbb, self.slot_term)
        ng = len(first)
        self.grouped = groups_well(ng, nb, m, w, self.group_cap)
        if not self.grouped:
            self.rep_slot, self.rep_cbb = self.slot_term, self.cbb
            self.rep_count = np.ones(nb)
            return
        self.rep_slot, self.rep_cbb = self.slot_term[first], self.cbb[first]
        self.rep_count = counts.astype(float)
        tens = np.zeros((ng, m, m, w, w))
        order = np.argsort(inverse, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for g in range(ng):
            # (n_g, m, w); one group (a balanced design) is every block: no copy
            cg = self.cbr if ng == 1 else self.cbr[order[bounds[g] : bounds[g + 1]]]
            if m == 1:
                tens[g, 0, 0] = cg[:, 0, :].T @ cg[:, 0, :]
            else:
                tens[g] = np.einsum("biw,bjv->ijwv", cg, cg)
        self.tens = tens.reshape(ng * m * m, w * w)

    def _contract(self, mats: np.ndarray) -> np.ndarray:
        """sum over blocks of C_b' M_b C_b (w x w) for per-block (or per-group) m x m M."""
        w = self.width
        if self.grouped:
            return (mats.reshape(-1) @ self.tens).reshape(w, w)
        if self.m == 1:
            c = self.cbr[:, 0, :]
            return c.T @ (mats[:, 0, 0][:, None] * c)
        tmp = mats @ self.cbr
        return self.cbr.reshape(-1, w).T @ tmp.reshape(-1, w)

    def core(self, theta: np.ndarray) -> DenseCore:
        qr = self.qr
        tb, ainv, logdet_b = self._blocks(theta, self.rep_slot, self.rep_cbb)
        mats = tb[:, :, None] * ainv * tb[:, None, :]
        wtw = self._contract(mats)
        tf = theta[self.rest_term]
        tr = np.concatenate([tf, np.ones(self.p + 1)])
        t = (self.crr - wtw) * tr[:, None] * tr[None, :]
        t[np.arange(qr), np.arange(qr)] += 1.0
        lt = np.linalg.cholesky(t)
        logdet_l = float(self.rep_count @ logdet_b)
        logdet_l += 2.0 * float(np.sum(np.log(np.diagonal(lt)[:qr])))
        return DenseCore(tb=tb, ainv=ainv, tf=tf, lx=lt[qr:, qr:], logdet_l=logdet_l, lt=lt)

    def _rest_solutions(self, lt: np.ndarray) -> np.ndarray:
        """U_F = S^{-1} T_FY: rest-column solutions for each column of [X y]."""
        qr = self.qr
        if qr == 0:
            return np.zeros((0, self.p + 1))
        return sla.solve_triangular(
            lt[:qr, :qr], lt[qr:, :qr].T, lower=True, trans="T", check_finite=False
        )

    def gradient(self, theta: np.ndarray, c: DenseCore) -> np.ndarray:
        qr, p, m = self.qr, self.p, self.m
        lt, lx, tb, ainv, tf = c.lt, c.lx, c.tb, c.ainv, c.tf
        beta, qmat, _ = self._beta_cov(lx)
        coef = np.append(-beta, 1.0)
        r2 = float(lx[-1, -1]) ** 2
        dof = self.n - p if self.reml else self.n
        u_f = self._rest_solutions(lt)
        # per term: q_k - tr_k(A^-1) - dof |u_k|^2 / r2 [- tr(Q U_Xk'U_Xk) for REML]
        val = np.asarray(self.nlevels, dtype=float)
        if qr:
            lfinv = sla.solve_triangular(lt[:qr, :qr], np.eye(qr), lower=True, check_finite=False)
            sinv = lfinv.T @ lfinv
            per_row = np.diagonal(sinv) + dof * (u_f @ coef) ** 2 / r2
            if self.reml and p:
                ux = u_f[:, :p]
                per_row = per_row + np.sum((ux @ qmat) * ux, axis=1)  # diag(U_X Q U_X')
            val -= np.bincount(self.rest_term, weights=per_row, minlength=self.k + 1)[: self.k]
        else:
            sinv = np.zeros((0, 0))
        vmat = np.vstack([-tf[:, None] * u_f, np.eye(p + 1)])
        y = ainv * tb[:, None, :]  # A_b^{-1} Lambda_b
        diag = np.diagonal(ainv, axis1=1, axis2=2)
        for k in self.layout.block_terms:
            if theta[k] == 0.0:
                continue
            e = (self.rep_slot == k).astype(float)
            if m == 1:
                nmat = (y[:, 0, 0] ** 2 * e[:, 0])[:, None, None]
            else:
                nmat = np.einsum("rai,ra,raj->rij", y, e, y)
            kmat = self._contract(nmat)
            trace = float(self.rep_count @ np.sum(e * diag, axis=1))
            if qr:
                trace += float(np.sum(sinv * (tf[:, None] * kmat[:qr, :qr] * tf[None, :])))
            pk = vmat.T @ kmat @ vmat
            val[k] -= trace + dof * float(coef @ pk @ coef) / r2
            if self.reml and p:
                val[k] -= float(np.sum(qmat * pk[:p, :p]))
        grad = np.zeros(self.k)
        nz = theta != 0.0
        grad[nz] = 2.0 * val[nz] / theta[nz]
        return grad

    def solve(self, theta: np.ndarray) -> Solution:
        c = self.core(theta)
        beta_cov = self._beta_cov(c.lx)
        coef = np.append(-beta_cov[0], 1.0)
        u_f = self._rest_solutions(c.lt) @ coef
        v = np.concatenate([-c.tf * u_f, coef])
        tb, ainv, _ = self._blocks(theta, self.slot_term, self.cbb)
        rhs = tb * (self.cbr @ v)
        u_b = np.einsum("bij,bj->bi", ainv, rhs)
        return self._solution(theta, c, beta_cov, (tb, u_b, u_f))


class _SparseSchur(_Base):
    """Sparse rest block (a large factor crossing the primary one); gradients by differences."""

    has_gradient = False

    def __init__(self, base_args: tuple, cp: CrossProducts) -> None:
        super().__init__(*base_args)
        assert cp.cbf_sparse is not None and cp.cff_sparse is not None
        self.cbb = cp.cbb
        self.cbf = cp.cbf_sparse
        self.cff = cp.cff_sparse
        self.cby, self.cfy, self.cyy = cp.cby, cp.cfy, cp.cyy
        self.factor_dense = self.qr <= SPARSE_DENSE_FACTOR_MAX
        size = self.cbf.shape[0] * self.cbf.shape[1]
        # A full C_BF (a crossed run factor: every run scores every segment) multiplies far
        # faster as a dense array (BLAS) than as a sparse one, and S is then dense anyway
        full = self.cbf.nnz >= DENSE_CBF_FILL * size and size <= DENSE_CBF_ENTRIES_MAX
        self.cbf_full = self.cbf.toarray() if full and self.factor_dense else None

    def core(self, theta: np.ndarray) -> SparseCore:
        nb, m, qr = self.nb, self.m, self.qr
        tb, ainv, logdet_b = self._blocks(theta, self.slot_term, self.cbb)
        tf = theta[self.rest_term]
        # M_b = Lambda_b A_b^{-1} Lambda_b, applied as a block-diagonal sparse matrix
        mats = tb[:, :, None] * ainv * tb[:, None, :]
        if m == 1:
            mblk = sp.diags(mats[:, 0, 0])
        else:
            mblk = sp.bsr_matrix(
                (mats, np.arange(nb), np.arange(nb + 1)), shape=(nb * m, nb * m)
            ).tocsr()
        dtf = sp.diags(tf)
        if self.cbf_full is not None:
            cbf = self.cbf_full * tf[None, :]  # C_BF Lambda_F
            mc = np.asarray(mblk @ cbf)
            s = (dtf @ self.cff @ dtf).toarray() + np.eye(qr) - cbf.T @ mc
        else:
            cbf = self.cbf.copy()
            cbf.data *= tf[cbf.indices]
            mc = mblk @ cbf
            s = (dtf @ self.cff @ dtf + sp.identity(qr) - cbf.T @ mc).tocsc()
        g = tf[:, None] * self.cfy - mc.T @ self.cby
        myy = self.cyy - self.cby.T @ (mblk @ self.cby)
        if self.factor_dense:
            ls = np.linalg.cholesky(s if isinstance(s, np.ndarray) else s.toarray())
            logdet_f = 2.0 * float(np.sum(np.log(np.diagonal(ls))))

            def solve_s(v: np.ndarray) -> np.ndarray:
                return sla.cho_solve((ls, True), v)
        else:
            lu = spla.splu(
                s,
                permc_spec="MMD_AT_PLUS_A",
                diag_pivot_thresh=0.0,
                options={"SymmetricMode": True},
            )
            udiag = lu.U.diagonal()
            if np.any(udiag <= 0):
                raise np.linalg.LinAlgError("rest block is not positive definite")
            logdet_f = float(np.sum(np.log(udiag)))
            solve_s = lu.solve
        h = solve_s(g) if qr else np.zeros((0, self.p + 1))
        lx = np.linalg.cholesky(myy - g.T @ h)
        return SparseCore(
            tb=tb,
            ainv=ainv,
            tf=tf,
            lx=lx,
            logdet_l=float(np.sum(logdet_b)) + logdet_f,
            cbf=cbf,
            h=h,
        )

    def solve(self, theta: np.ndarray) -> Solution:
        c = self.core(theta)
        beta_cov = self._beta_cov(c.lx)
        coef = np.append(-beta_cov[0], 1.0)
        u_f = c.h @ coef
        # u_b = A_b^{-1} Lambda_b (C_bY coef - C_bF Lambda_F u_f)
        rhs = (self.cby @ coef - c.cbf @ u_f).reshape(self.nb, self.m)
        u_b = np.einsum("bij,bj->bi", c.ainv, c.tb * rhs)
        return self._solution(theta, c, beta_cov, (c.tb, u_b, u_f))


def _schur(
    codes: list[np.ndarray],
    nlevels: list[int],
    X: np.ndarray,
    y: np.ndarray,
    reml: bool,
    path: str,
    wts: list[np.ndarray | None],
    xtx: np.ndarray | None,
    memo: dict | None,
    layout: Layout,
) -> _DenseSchur | _SparseSchur:
    """The elimination with ``layout``'s primary factor first, on the dense or sparse path."""
    n, p = X.shape
    width = layout.n_rest + p + 1
    cbb = block_cross_products(layout, codes)
    group_cap: float | None = None  # GROUP_ENTRIES_MAX
    if path in ("auto", "arrow"):
        nb, m = layout.n_blocks, layout.m
        work = float(nb) * m * width * width
        small = layout.n_rest <= DENSE_REST_SMALL or work <= DENSE_WORK_MAX
        fits = nb * m * width <= DENSE_ENTRIES_MAX
        path = "dense" if small and fits else "sparse"
        if (
            path == "sparse"
            and width <= GROUPED_WIDTH_MAX
            and nb * m * width <= GROUPED_ENTRIES_MAX
        ):
            n_groups = len(block_groups(cbb, slot_terms(layout, len(codes)))[0])
            if groups_well(n_groups, nb, m, width):
                path = "dense"
        if (
            path == "sparse"
            and len(codes) >= MANY_TERMS
            and fits
            and width <= DENSE_WIDTH_MANY_TERMS
            and work <= (2 * len(codes) + 1) * DENSE_WORK_MAX
        ):
            path, group_cap = "dense", GROUP_ENTRIES_MANY_TERMS
    if path not in ("dense", "sparse"):
        raise ValueError(f"unknown path {path!r}")
    Xy = XyColumns(X, y, xtx)
    cp = cross_products(layout, codes, Xy, dense=path == "dense", weights=wts, cbb=cbb, memo=memo)
    args = (layout, list(nlevels), n, p, reml)
    return _DenseSchur(args, cp, group_cap) if path == "dense" else _SparseSchur(args, cp)


def _arrow(
    codes: list[np.ndarray],
    nlevels: list[int],
    wts: list[np.ndarray | None],
    X: np.ndarray,
    y: np.ndarray,
    layout: Layout,
    forced: bool,
) -> ArrowSchur | None:
    """The arrowhead elimination (arrow.py) when dummy() terms part the rows and it costs under
    ARROW_GAIN of the segments-first one per evaluation (always, when ``forced`` and possible)."""
    w = layout.n_rest + X.shape[1] + 1
    work = float(layout.n_blocks) * layout.m * w * w + float(w) ** 3 / 3.0
    if not forced and work < ARROW_MIN_WORK:
        return None
    best: tuple[float, sp.csc_matrix, ArrowLayout, np.ndarray] | None = None
    for parts in row_parts(codes, wts, len(y)):
        if shared_levels(codes, wts, parts) >= ARROW_WIDTH_MAX:
            continue
        fixed_map = confine_fixed(X, parts)
        joint = joint_matrix(codes, nlevels, wts, mapped(X, fixed_map), y)
        alay = arrow_layout(joint, parts)
        if alay.fits() and (best is None or alay.work() < best[0]):
            best = (alay.work(), joint, alay, fixed_map)
    if best is None:
        return None
    if not forced and best[0] > ARROW_GAIN * work:
        return None
    return ArrowSchur(best[1], best[2], nlevels, len(y), best[3])


def _kr_work(q_b: int, w: int) -> float:
    """Kenward-Roger's structured work: q_B w^2 + w^3 (q_B block columns, w = R' columns)."""
    return float(q_b) * w * w + float(w) ** 3


class ProfiledDeviance:
    """The profiled deviance (ML) or REML criterion as a function of theta.

    Calls are even in each theta_k (|theta| is used), return +inf where a factorization breaks
    down, and ``value_and_grad`` adds the analytic gradient on the dense path.
    """

    def __init__(
        self,
        codes: list[np.ndarray],
        nlevels: list[int],
        X: np.ndarray,
        y: np.ndarray,
        reml: bool,
        path: str = "auto",
        weights: list[np.ndarray | None] | None = None,
        xtx: np.ndarray | None = None,
        memo: dict | None = None,
    ) -> None:
        """``xtx``: X'X when the caller has it (it is not computed again); ``memo``: the
        products memo of a FitCache (cross-products shared with other fits, see cache.py)."""
        n, p = X.shape
        wts = list(weights) if weights is not None else [None] * len(codes)
        layout = choose_layout(codes, nlevels, p, [w is not None for w in wts])
        self.layout = layout
        self.m = layout.m
        y = np.asarray(y, dtype=float)
        self._schur_args = (codes, nlevels, X, y, reml, path, wts, xtx, memo)
        self.arrow: ArrowSchur | None = None
        if reml and path in ("auto", "arrow"):
            self.arrow = _arrow(codes, nlevels, wts, X, y, layout, forced=path == "arrow")
        if self.arrow is not None:
            self.path = "arrow"
            self.has_gradient = True
            self._impl: _DenseSchur | _SparseSchur | None = None
            return
        if path == "arrow":
            raise ValueError("the arrow path needs a REML fit whose dummy() terms part the rows")
        self._impl = _schur(*self._schur_args, layout)
        self.path = "dense" if isinstance(self._impl, _DenseSchur) else "sparse"
        self.has_gradient = self._impl.has_gradient

    @property
    def impl(self) -> _DenseSchur | _SparseSchur:
        """The elimination with the segments (primary factor) first; on the arrow path built on
        first use, for Kenward-Roger's block products."""
        if self._impl is None:
            self._impl = _schur(*self._schur_args, self.layout)
        return self._impl

    def _arrow_core(self, theta: np.ndarray) -> ArrowCore | None:
        """The arrowhead factorization at theta; None off the arrow path or where it would lose
        digits (then the segments-first elimination evaluates, ArrowInaccurate)."""
        if self.arrow is None:
            return None
        try:
            return self.arrow.core(theta)
        except ArrowInaccurate:
            return None

    def describe(self, names: list[str]) -> str:
        """The path, for LmmResult.path."""
        if self.arrow is not None:
            lay = self.arrow.layout
            return f"arrow ({lay.n_parts} parts, block size {lay.m}, rest {lay.width})"
        return f"{self.path} (primary {names[self.layout.primary]}, block size {self.m})"

    def __call__(self, theta: np.ndarray) -> float:
        theta = np.abs(np.asarray(theta, dtype=float))
        try:
            if self.arrow is not None:
                try:
                    val = self.arrow.criterion(self.arrow.core(theta))
                    return val if np.isfinite(val) else float("inf")
                except ArrowInaccurate:
                    pass
            c = self.impl.core(theta)
            val = self.impl.criterion(c.logdet_l, c.lx)
        except (np.linalg.LinAlgError, RuntimeError, ValueError):
            return float("inf")
        return val if np.isfinite(val) else float("inf")

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Criterion and its analytic gradient (dense path only)."""
        x = np.asarray(theta, dtype=float)
        ax = np.abs(x)
        try:
            ac = self._arrow_core(ax)
            if ac is not None and self.arrow is not None:
                val = self.arrow.criterion(ac)
                grad = self.arrow.gradient(ax, ac) * np.sign(x)
            elif not self.impl.has_gradient:
                return self(x), central_gradient(self, x)
            else:
                assert isinstance(self.impl, _DenseSchur)
                c = self.impl.core(ax)
                val = self.impl.criterion(c.logdet_l, c.lx)
                grad = self.impl.gradient(ax, c) * np.sign(x)
        except (np.linalg.LinAlgError, RuntimeError, ValueError):
            return float("inf"), np.zeros_like(x)
        if not np.isfinite(val):
            return float("inf"), np.zeros_like(x)
        return val, grad

    def pieces(self, theta: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        """log|L|^2, r2, log|R_X|^2 and (R_X'R_X)^-1 at theta (for the df computations)."""
        ac = self._arrow_core(np.abs(np.asarray(theta, dtype=float)))
        if ac is not None and self.arrow is not None:
            _, cov, logdet_rx, _, _ = self.arrow.solution_parts(ac)
            return ac.logdet_m - logdet_rx, ac.r2, logdet_rx, cov
        c = self.impl.core(np.abs(np.asarray(theta, dtype=float)))
        _, cov, logdet_rx = self.impl._beta_cov(c.lx)
        return c.logdet_l, float(c.lx[-1, -1]) ** 2, logdet_rx, cov

    def block_products(self) -> BlockProducts:
        """Z'Z, Z'X and X'X for Kenward-Roger (kr.py): dense B x R' and R' x R' parts (R' =
        rest columns, then X), in the arrowhead's layout where it has one (arrow.py
        ``block_products``) and its work, q_B w^2 + w^3 (w = R' columns), is the smaller, else
        in the segments-first one."""
        if self.arrow is not None and (arrow := self.arrow.block_products()) is not None:
            nb, m, w = arrow.cbr.shape
            first = self.layout  # segments first: their blocks, the rest's columns and X
            if _kr_work(nb * m, w) < _kr_work(
                first.n_blocks * first.m, first.n_rest + self.arrow.p
            ):
                return arrow
        impl, qr, p = self.impl, self.impl.qr, self.impl.p
        nb, m = impl.nb, impl.m
        if isinstance(impl, _DenseSchur):
            cbr = impl.cbr[:, :, : qr + p]
            crr = impl.crr[: qr + p, : qr + p]
        else:
            cbf = impl.cbf.toarray().reshape(nb, m, qr)
            cbr = np.concatenate([cbf, impl.cby[:, :p].reshape(nb, m, p)], axis=2)
            crr = np.zeros((qr + p, qr + p))
            crr[:qr, :qr] = impl.cff.toarray()
            crr[:qr, qr:] = impl.cfy[:, :p]
            crr[qr:, :qr] = impl.cfy[:, :p].T
            crr[qr:, qr:] = impl.cyy[:p, :p]
        first = tens = None
        if isinstance(impl, _DenseSchur) and impl.grouped:
            first = block_groups(impl.cbb, impl.slot_term)[0]
            tens = impl.tens
        return BlockProducts(
            impl.cbb, cbr, crr, impl.slot_term, impl.rest_term, impl.k, first=first, tens=tens
        )

    def solve(self, theta: np.ndarray) -> Solution:
        """beta, its unscaled covariance, the conditional modes and the criterion pieces."""
        theta = np.abs(np.asarray(theta, dtype=float))
        ac = self._arrow_core(theta)
        if ac is None or self.arrow is None:
            return self.impl.solve(theta)
        beta, cov, logdet_rx, u, u_sq = self.arrow.solution_parts(ac)
        offsets = np.concatenate([[0], np.cumsum(self.arrow.nlevels)])
        b = [theta[t] * u[offsets[t] : offsets[t + 1]] for t in range(self.arrow.k)]
        return Solution(
            theta=theta,
            beta=beta,
            r2=ac.r2,
            logdet_l=ac.logdet_m - logdet_rx,
            logdet_rx=logdet_rx,
            unscaled_cov=cov,
            b=b,
            u_sq=u_sq,
        )
