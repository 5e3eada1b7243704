"""Kenward-Roger's pieces on the cross-products, exploiting the block structure of Z'Z.

pbkrtest's ``vcovAdj`` needs, with Sigma = s2 V, V = I + Z Lambda^2 Z', the variance
parameters (s2 theta_r^2 for each random term r, and s2) and G_r = Z_r Z_r' (G = I for s2):

    P_r   = -X'S^-1 G_r S^-1 X,            Q_rs = X'S^-1 G_r S^-1 G_s S^-1 X,
    K_rs  = tr(S^-1 G_r S^-1 G_s)          (S = Sigma)

(ddf.DdfCore.kr_parts turns them into Phi_A and W). Here every one of them is a function of
Z'Z, Z'X and X'X only, so no matrix with a row per observation is touched, and of the
structure the profiled deviance already uses (layout.py): the block part B (the primary factor,
segments, plus terms nested in it) has a block-diagonal Z_B'Z_B = C_BB (one m x m block per
primary level, m = 1 for segments alone); the rest R (runs, facets, slopes) is small. Any
block-diagonal B serves: with more runs than segments, the arrowhead's parts by run (arrow.py
``ArrowSchur.block_products``: a run's intercept and slope a block, the segments the rest).

Two-stage Woodbury. With V_B = I + Z_B Lambda_B^2 Z_B' and g_1 = d = Lambda_B (I + Lambda_B
C_BB Lambda_B)^-1 Lambda_B (block-diagonal), the powers are V_B^-k = I - Z_B g_k Z_B' with

    g_{k+1} = g_k + d - d C_BB g_k,

so N_k = W'V_B^-k W for W = [Z X] is C_WW - C_WB g_k C_BW (block-diagonal B x B part,
B x R' and R' x R' dense, R' = R plus the p columns of X). Then, with the rest's Schur
complement S_R = I + Lambda_R N_1,RR Lambda_R and J = Lambda_R S_R^-1 Lambda_R
(zero on the X columns),

    V^-1 = V_B^-1 - V_B^-1 Z_R J Z_R' V_B^-1
    M_1  = W'V^-1 W = N_1 - N_1,.R J N_1,R.
    M_2  = W'V^-2 W = N_2 - N_2,.R J N_1,R. - N_1,.R J N_2,R. + N_1,.R J N_2,RR J N_1,R.
    tr V^-2 = n - tr(g_2 C_BB) - 2 tr(J N_3,RR) + tr(J N_2,RR J N_2,RR)

and X'V^-3 X = X'V^-2 X - (Z'V^-2 X)' K Z'X with K = Lambda A^-1 Lambda = [[d, 0], [0, 0]] +
Y J Y', Y = [-d C_BR; I]. The B x B blocks of M_1 (block-diagonal minus rank qR) enter only
through traces: ||E - U J U'||^2 = ||E||^2 - 2 tr(J U'E U) + tr(J U'U J U'U). Every
q_R x q_R Gram matrix is a sum over blocks sum_b C_b' M_b C_b with M_b a function of the block's
Z_B'Z_B alone, so blocks with the same pattern (all segments of a balanced design) are summed
once (BlockProducts.contract). The cost is O(q_B (q_R + p) p + q_R^3), plus O(q_B (q_R + p)^2)
when the blocks are not grouped: linear in the number of segments, instead of O(q^3).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla


@dataclass(frozen=True)
class BlockProducts:
    """Z'Z, Z'X and X'X in the profiled deviance's layout (B = nb blocks of m slots; R' = the
    rest columns then the p columns of X), with the term of every slot and rest column."""

    cbb: np.ndarray  # (nb, m, m)    Z_B'Z_B, block-diagonal
    cbr: np.ndarray  # (nb, m, qr + p)  Z_B'[Z_R X]
    crr: np.ndarray  # (qr + p, qr + p) [Z_R X]'[Z_R X]
    slot_term: np.ndarray  # (nb, m) term of each slot (number of terms for padding)
    rest_term: np.ndarray  # (qr,) term of each rest column
    n_terms: int
    # blocks with the same Z_B'Z_B pattern and slot terms (balanced designs: one group): the
    # representative block of each group and sum_b C_b' (x) C_b per group, (ng m m, w' w'),
    # w' >= qr + p (profiled.py's grouped tensor), or None
    first: np.ndarray | None = None
    tens: np.ndarray | None = None

    @property
    def qr(self) -> int:
        return len(self.rest_term)

    def contract(self, mats: np.ndarray, blocks: np.ndarray | None = None) -> np.ndarray:
        """sum_b C_b' M_b C_b over the blocks (C_b = block b's rows of Z_B'[Z_R X]) for
        per-block m x m matrices M_b that depend on the block's Z_B'Z_B and slot terms only:
        by groups in O(groups m^2 w^2) when grouped, else O(q_B w^2), or over ``blocks``
        only where M_b is zero on the others (a term of some blocks: a system's runs)."""
        nb, m, w = self.cbr.shape
        if self.tens is not None and self.first is not None:
            full = int(round(np.sqrt(self.tens.shape[1])))
            out = (mats[self.first].reshape(-1) @ self.tens).reshape(full, full)
            return out[:w, :w]
        cbr = self.cbr if blocks is None else self.cbr[blocks]
        mats = mats if blocks is None else mats[blocks]
        flat = cbr.reshape(-1, w)
        return flat.T @ _bmm(mats, cbr).reshape(-1, w)


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched product of (nb, m, m) with (nb, m, k) (elementwise when m = 1)."""
    if a.shape[1] == 1:
        return a * b
    return np.matmul(a, b)


def _powers(bp: BlockProducts, tb: np.ndarray) -> list[np.ndarray]:
    """g_1, g_2, g_3 of V_B^-k = I - Z_B g_k Z_B' (each (nb, m, m))."""
    nb, m, _ = bp.cbb.shape
    if m == 1:
        t2 = tb[:, 0] ** 2
        d = (t2 / (1.0 + t2 * bp.cbb[:, 0, 0]))[:, None, None]
    else:
        a = tb[:, :, None] * bp.cbb * tb[:, None, :] + np.eye(m)
        d = tb[:, :, None] * np.linalg.inv(a) * tb[:, None, :]
    dc = _bmm(d, bp.cbb)
    g = [d]
    for _ in range(2):
        g.append(g[-1] + d - _bmm(dc, g[-1]))
    return g


@dataclass
class _Parts:
    """N_k pieces and J at one theta (see the module docstring). N_k,BR' = a_k C_BR' with
    a_k = I - C_BB g_k per block, applied through the one contiguous C_BR (``cbr_r``)."""

    g: list[np.ndarray]  # g_1..g_3
    a: list[np.ndarray]  # a_1, a_2 (nb, m, m)
    nbb: list[np.ndarray]  # N_1, N_2 block-diagonal parts (nb, m, m)
    ux: list[np.ndarray]  # N_1, N_2 B x X parts (q_B, p)
    nrr: list[np.ndarray]  # N_1, N_2, N_3 R' x R' parts
    jr: np.ndarray  # J on the R' columns (zero on X)
    cbr_r: np.ndarray  # C_BR (q_B, qr), contiguous

    def u(self, k: int, y: np.ndarray) -> np.ndarray:
        """N_k,BR y (y: qr x c)."""
        nb, m, _ = self.a[k].shape
        return _bmm(self.a[k], (self.cbr_r @ y).reshape(nb, m, -1)).reshape(nb * m, -1)

    def ut(self, k: int, v: np.ndarray) -> np.ndarray:
        """N_k,BR' v (v: q_B x c)."""
        nb, m, _ = self.a[k].shape
        at = np.swapaxes(self.a[k], 1, 2)
        return self.cbr_r.T @ _bmm(at, v.reshape(nb, m, -1)).reshape(nb * m, -1)


def _parts(bp: BlockProducts, theta: np.ndarray) -> _Parts:
    """g_k, N_k = C - C_.B g_k C_B. and J = Lambda_R (I + Lambda_R N_1,RR Lambda_R)^-1
    Lambda_R."""
    nb, m, w = bp.cbr.shape
    qr = bp.qr
    tb = np.append(theta, 0.0)[bp.slot_term]
    g = _powers(bp, tb)
    nbb, a, ux, nrr = [], [], [], []
    eye = np.eye(m)
    for k, gk in enumerate(g):
        nrr.append(bp.crr - bp.contract(gk))
        if k < 2:
            cg = _bmm(bp.cbb, gk)
            nbb.append(bp.cbb - _bmm(cg, bp.cbb))
            a.append(eye - cg)
            ux.append(_bmm(a[k], bp.cbr[:, :, qr:]).reshape(nb * m, w - qr))
    tf = theta[bp.rest_term]
    jr = np.zeros((w, w))
    if qr:
        s = tf[:, None] * nrr[0][:qr, :qr] * tf[None, :] + np.eye(qr)
        sinv = sla.cho_solve(sla.cho_factor(s, lower=True), np.eye(qr))
        jr[:qr, :qr] = tf[:, None] * sinv * tf[None, :]
    cbr_r = np.ascontiguousarray(bp.cbr[:, :, :qr].reshape(nb * m, qr))
    return _Parts(g, a, nbb, ux, nrr, jr, cbr_r)


@dataclass
class _Moments:
    """W'V^-1 W and W'V^-2 W where they are needed (unscaled, V = Sigma / s2)."""

    m1_rr: np.ndarray  # R' x R'
    m2_rr: np.ndarray  # R' x R'
    zv1x: np.ndarray  # Z'V^-1 X (B rows then R rows)
    zv2x: np.ndarray  # Z'V^-2 X
    xv3x: np.ndarray  # X'V^-3 X
    tr_v2: float  # tr V^-2


def _moments(bp: BlockProducts, pt: _Parts, n: int) -> _Moments:
    """M_1, M_2 on R' (and their B x X rows), X'V^-3 X and tr V^-2."""
    qr = bp.qr
    n1, n2, n3 = pt.nrr
    j = pt.jr
    m1_rr = n1 - n1 @ j @ n1
    m2_rr = n2 - n2 @ j @ n1 - n1 @ j @ n2 + n1 @ j @ n2 @ j @ n1
    x = slice(qr, None)
    jr = j[:qr]
    y1 = jr @ n1[:, x]
    p = y1.shape[1]
    u1y = pt.u(0, np.hstack([y1, jr @ n2 @ j @ n1[:, x] - jr @ n2[:, x]]))
    m1_bx = pt.ux[0] - u1y[:, :p]
    m2_bx = pt.ux[1] - pt.u(1, y1) + u1y[:, p:]
    zv1x = np.vstack([m1_bx, m1_rr[:qr, x]])
    zv2x = np.vstack([m2_bx, m2_rr[:qr, x]])
    zx = np.vstack([bp.cbr[:, :, x].reshape(-1, p), bp.crr[:qr, x]])
    xv3x = m2_rr[x, x] - zv2x.T @ _apply_k(pt, zx)
    tr_g2c = float(np.sum(pt.g[1] * np.swapaxes(bp.cbb, 1, 2)))
    jj = j[:qr, :qr]
    tr_v2 = n - tr_g2c - 2.0 * float(np.sum(jj * n3[:qr, :qr].T))
    tr_v2 += float(np.sum((jj @ n2[:qr, :qr]) * (jj @ n2[:qr, :qr]).T))
    return _Moments(m1_rr, m2_rr, zv1x, zv2x, xv3x, tr_v2)


def _apply_k(pt: _Parts, r: np.ndarray) -> np.ndarray:
    """K r for K = Lambda A^-1 Lambda = [[d, 0], [0, 0]] + Y J Y', Y = [-d C_BR; I]."""
    d = pt.g[0]
    nb, m, _ = d.shape
    qr = pt.cbr_r.shape[1]
    drb = _bmm(d, r[: nb * m].reshape(nb, m, -1)).reshape(nb * m, -1)
    jy = pt.jr[:qr, :qr] @ (r[nb * m :] - pt.cbr_r.T @ drb)
    return np.vstack([drb - _bmm(d, (pt.cbr_r @ jy).reshape(nb, m, -1)).reshape(nb * m, -1), jy])


def _apply_m1(pt: _Parts, v: np.ndarray, in_block: bool) -> np.ndarray:
    """M_1 v = Z'V^-1 Z v = N_1 v - N_1,.R J N_1,R. v (v: q x c, B rows then R rows; nonzero
    only in the block rows when ``in_block``, else only in the rest rows)."""
    nb, m, _ = pt.nbb[0].shape
    qr = pt.cbr_r.shape[1]
    qb = nb * m
    n1rr = pt.nrr[0][:qr, :qr]
    j = pt.jr[:qr, :qr]
    if in_block:
        vb = v[:qb]
        nvr = pt.ut(0, vb)
        jn = j @ nvr
        nvb = _bmm(pt.nbb[0], vb.reshape(nb, m, -1)).reshape(qb, -1) - pt.u(0, jn)
        return np.vstack([nvb, nvr - n1rr @ jn])
    vr = v[qb:]
    nvr = n1rr @ vr
    jn = j @ nvr
    return np.vstack([pt.u(0, vr - jn), nvr - n1rr @ jn])


def _block_traces(bp: BlockProducts, pt: _Parts, blocks: list[int]) -> dict:
    """For block terms a, b: ||M_1,ab||^2 and tr M_2,aa, and the Gram matrices that give
    their traces against the rest terms (G_a = U_a'U, U = N_1,BR = (I - C_BB g_1) C_BR),
    each a contraction sum_b C_b' M_b C_b (BlockProducts.contract)."""
    qr = bp.qr
    a1, a2 = pt.a  # U_b = a1_b C_b
    a1t = np.swapaxes(a1, 1, 2)
    j = pt.jr[:qr, :qr]
    jn2j = j @ pt.nrr[1][:qr, :qr] @ j
    mask = {a: (bp.slot_term == a).astype(float) for a in blocks}
    held = {a: np.flatnonzero(mask[a].any(axis=1)) for a in blocks}  # the blocks of term a
    gram, out = {}, {}
    for a in blocks:
        ea = mask[a][:, :, None] * a1
        gram[a] = bp.contract(_bmm(a1t, ea), held[a])[:qr, :qr]
        h = bp.contract(_bmm(a1t, mask[a][:, :, None] * a2), held[a])[:qr, :qr]
        tr_n2 = float(np.sum(np.diagonal(pt.nbb[1], axis1=1, axis2=2) * mask[a]))
        out[a, None] = tr_n2 - 2.0 * float(np.sum(j * h.T)) + float(np.sum(jn2j * gram[a].T))
    for i, a in enumerate(blocks):
        for b in blocks[i:]:
            e = mask[b][:, :, None] * pt.nbb[0] * mask[a][:, None, :]  # N_1 rows b, cols a
            both = np.intersect1d(held[a], held[b])
            t = bp.contract(_bmm(a1t, _bmm(e, a1)), both)[:qr, :qr]
            out[a, b] = (
                float(np.sum(e * e))
                - 2.0 * float(np.sum(j * t.T))
                + float(np.sum((j @ gram[a]) * (j @ gram[b]).T))
            )
    return {"traces": out, "gram": gram}


def kr_traces(bp: BlockProducts, pt: _Parts, mo: _Moments, rows: list[np.ndarray]) -> np.ndarray:
    """K (unscaled): K_rs = ||Z_r'V^-1 Z_s||_F^2, K_r,e = tr(Z_r'V^-2 Z_r), K_e,e = tr V^-2."""
    qb = bp.cbb.shape[0] * bp.cbb.shape[1]
    qr = bp.qr
    k = len(rows)
    blocks = [t for t in range(k) if len(rows[t]) and rows[t][0] < qb]
    bt = _block_traces(bp, pt, blocks)
    f = np.eye(qr) - pt.jr[:qr, :qr] @ pt.nrr[0][:qr, :qr]  # M_1,BR = U F
    rest = {t: rows[t] - qb for t in range(k) if t not in blocks}
    ktr = np.zeros((k + 1, k + 1))
    for a in range(k):
        for b in range(a, k):
            if a in blocks and b in blocks:
                val = bt["traces"][a, b]
            elif a in blocks or b in blocks:
                blk, other = (a, b) if a in blocks else (b, a)
                fb = f[:, rest[other]]
                val = float(np.sum(fb * (bt["gram"][blk] @ fb)))
            else:
                val = float(np.sum(mo.m1_rr[np.ix_(rest[a], rest[b])] ** 2))
            ktr[a, b] = ktr[b, a] = val
        if a in blocks:
            ktr[a, k] = ktr[k, a] = bt["traces"][a, None]
        else:
            ktr[a, k] = ktr[k, a] = float(np.trace(mo.m2_rr[np.ix_(rest[a], rest[a])]))
    ktr[k, k] = mo.tr_v2
    return ktr


GRAM_ENTRIES = 25_000_000  # PFactors forms F H F' this many entries (rows x all rows) at a time


class PFactors(Sequence[np.ndarray]):
    """pbkrtest's P_r = -X'S^-1 G_r S^-1 X of every variance parameter as P_r = -F_r'F_r.

    Each P_r is negative semi-definite of rank at most min(q_r, p) (q_r: the term's columns,
    G_r = Z_r Z_r'), and with a run variance per system most terms have q_r = 3 runs against p
    ~ 2 systems fixed effects: p^3 per parameter for every product with a P_r (Phi P_r, the
    F test's U_i = Theta Phi P_i Phi) is what made Kenward-Roger cubic in the systems. With
    the factors F_r (f_r x p, f_r <= min(q_r, p)) stacked as F (rows of parameter ``owner``),
    for a symmetric H:

        tr(P_r H)             = -sum((F_r H) * F_r)
        v'P_r v               = -|F_r v|^2
        tr(P_r H P_s H)       = |F_r H F_s'|_F^2                     (the blocks of G = F H F')
        sum_rs W_rs P_r H P_s = F' (W[owner, owner] * G) F

    so the work is (rows)^2 p + rows p^2 instead of parameters p^3 (rows ~ parameters x 3 at
    200 systems). Indexing or iterating gives the dense P_r (tests, the reference)."""

    def __init__(self, factors: list[np.ndarray]) -> None:
        p = factors[0].shape[1] if factors else 0
        self.F = np.vstack(factors) if factors else np.zeros((0, p))
        self.count = len(factors)
        self.starts = np.cumsum([0] + [len(f) for f in factors])
        self.owner = np.repeat(np.arange(self.count), np.diff(self.starts))

    @classmethod
    def of_dense(cls, P: list[np.ndarray]) -> PFactors:
        """The factors of dense P_r (``factor_of`` each)."""
        return cls([cls.factor_of(m) for m in P])

    @staticmethod
    def factor_of(m: np.ndarray) -> np.ndarray:
        """F with -F'F = m for a dense negative semi-definite m (eigenvalues of -m above 0)."""
        vals, vecs = np.linalg.eigh(-0.5 * (m + m.T))
        keep = vals > 0.0
        return np.sqrt(vals[keep])[:, None] * vecs[:, keep].T

    @staticmethod
    def compressed(f: np.ndarray) -> np.ndarray:
        """A factor with at most p rows and the same F'F (R of F = QR when F has more rows)."""
        return np.linalg.qr(f, mode="r") if f.shape[0] > f.shape[1] else f

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, r: int) -> np.ndarray:  # type: ignore[override]
        f = self.F[self.starts[r] : self.starts[r + 1]]
        return -(f.T @ f)

    @property
    def _rows_at_once(self) -> int:
        """Rows of a product with F' taken at a time: GRAM_ENTRIES entries."""
        return max(1, GRAM_ENTRIES // max(1, len(self.F)))

    def _sum_rows(self, values: np.ndarray, owner: np.ndarray | None = None) -> np.ndarray:
        """Sums of ``values``' rows per parameter, the rows' parameters ``owner`` (sorted;
        default: one row of values per row of F)."""
        owner = self.owner if owner is None else owner
        out = np.zeros((self.count,) + values.shape[1:])
        if len(owner):
            first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            out[owner[first]] = np.add.reduceat(values, first, axis=0)
        return out

    def forms(self, rows: np.ndarray) -> np.ndarray:
        """v'P_r v for each row v of ``rows`` (result: rows x parameters), a chunk of rows at
        a time (GRAM_ENTRIES)."""
        out = np.empty((len(rows), self.count))
        step = self._rows_at_once
        for start in range(0, len(rows), step):
            fv = self.F @ rows[start : start + step].T
            out[start : start + step] = -self._sum_rows(fv * fv).T
        return out

    def traces(self, h: np.ndarray) -> np.ndarray:
        """tr(P_r H) for each parameter, H symmetric."""
        return -self._sum_rows(np.sum((self.F @ h) * self.F, axis=1))

    def _gram_chunks(self, h: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
        """(rows, G[rows]) of G = F H F', a chunk of rows at a time (GRAM_ENTRIES)."""
        total, step = len(self.F), self._rows_at_once
        fh = self.F @ h
        for start in range(0, total, step):
            part = slice(start, min(total, start + step))
            yield part, fh[part] @ self.F.T

    def pair_traces(self, h: np.ndarray) -> np.ndarray:
        """tr(P_r H P_s H) for all pairs (parameters x parameters), H symmetric."""
        out = np.zeros((self.count, self.count))
        for part, g in self._gram_chunks(h):
            by_column = self._sum_rows((g * g).T).T  # chunk rows x parameters
            out += self._sum_rows(by_column, self.owner[part])
        return out

    def weighted_sum(self, w: np.ndarray, h: np.ndarray) -> np.ndarray:
        """sum_rs W_rs P_r H P_s over all r, s, for symmetric W and H."""
        p = self.F.shape[1]
        out = np.zeros((p, p))
        for part, g in self._gram_chunks(h):
            g *= w[self.owner[part]][:, self.owner]
            out += self.F[part].T @ (g @ self.F)
        return out


PANEL_ENTRIES = 2_000_000  # M_1 (E_s U) is formed for this many (q x p) entries of terms at a time
REST_COLUMNS_ENTRIES = 25_000_000  # M_1's rest columns (q x q_R) are formed up to this many floats


class PairMatrices(Mapping[tuple[int, int], np.ndarray]):
    """pbkrtest's Q_rs, r <= s over n_g indices (the last is the residual), given as p x p
    matrices (the dense reference's), with the two sums vcovAdj takes of them."""

    def __init__(self, q: dict[tuple[int, int], np.ndarray], n_g: int) -> None:
        self.q, self.n_g = q, n_g

    def __getitem__(self, key: tuple[int, int]) -> np.ndarray:
        return self.q[key]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return ((r, s) for s in range(self.n_g) for r in range(s + 1))

    def __len__(self) -> int:
        return self.n_g * (self.n_g + 1) // 2

    def phi_traces(self, phi: np.ndarray) -> np.ndarray:
        """tr(Phi Q_rs) for all r <= s, symmetric (n_g x n_g), for a symmetric Phi."""
        out = np.empty((self.n_g, self.n_g))
        for r, s in self:
            out[r, s] = out[s, r] = float(np.sum(phi * self[r, s]))
        return out

    def weighted_sum(self, w: np.ndarray) -> np.ndarray:
        """sum_rs W_rs Q_rs over all r, s (Q_sr = Q_rs' for r < s) for a symmetric W."""
        off = sum(w[r, s] * self[r, s] for r, s in self if r < s)
        return off + np.transpose(off) + sum(w[r, r] * self[r, r] for r in range(self.n_g))


class PairProducts(PairMatrices):
    """pbkrtest's Q_rs (r <= s; the last index is the residual), each formed when asked for.

    Q_rs = U_r' (M_1 E_s U)_r / s2^3 for random terms r and s (U = Z'V^-1 X, ``_r`` its rows of
    term r), Q_s,e = U_s' (Z'V^-2 X)_s / s2^3 and Q_e,e = X'V^-3 X / s2^3. Kept are the panels
    (M_1 E_s U)_r, q_r x p each, not the p x p products: with a run variance per system there
    are about (systems)^2 / 2 pairs and p grows with the systems, so all Q_rs at once take
    (systems)^4 floats (58 GB at 200 systems), the panels (systems)^3 with q_r = 3 runs.
    Every Q_rs is the same product of the same two arrays whenever it is formed."""

    def __init__(
        self,
        u: np.ndarray,
        rows: list[np.ndarray],
        panels: dict[tuple[int, int], np.ndarray],
        zv2x: np.ndarray,
        xv3x: np.ndarray,
        s2: float,
    ) -> None:
        self.u_rows = [u[r] for r in rows]  # U_r, each its own (q_r x p) copy
        self.panels = panels
        self.zv2x_rows = [zv2x[r] for r in rows]
        self.k = len(rows)
        self.n_g = self.k + 1  # the random terms and the residual
        self.xv3x = xv3x
        self.s2 = s2

    def __getitem__(self, key: tuple[int, int]) -> np.ndarray:
        r, s = key
        k, s2 = self.k, self.s2
        if s == k:
            if r == k:
                return self.xv3x / s2**3
            return self.u_rows[r].T @ self.zv2x_rows[r] / s2**3
        return self.u_rows[r].T @ self.panels[r, s] / s2**3

    def _right(self, r: int, s: int) -> np.ndarray:
        """The right factor of Q_rs = U_r' (it) / s2^3 for a random term r (s <= k)."""
        return self.zv2x_rows[r] if s == self.k else self.panels[r, s]

    def phi_traces(self, phi: np.ndarray) -> np.ndarray:
        """tr(Phi Q_rs) for all r <= s, symmetric ((k + 1) x (k + 1)), for a symmetric Phi:
        tr(Phi U_r' R) = sum((U_r Phi) * R), q_r x p per pair instead of a p x p Q_rs."""
        k, s3 = self.k, self.s2**3
        out = np.empty((k + 1, k + 1))
        for r in range(k):
            left = self.u_rows[r] @ phi
            for s in range(r, k + 1):
                out[r, s] = out[s, r] = float(np.sum(left * self._right(r, s))) / s3
        out[k, k] = float(np.sum(phi * self.xv3x)) / s3
        return out

    def weighted_sum(self, w: np.ndarray) -> np.ndarray:
        """sum_rs W_rs Q_rs over all r, s (Q_sr = Q_rs' for r < s) for a symmetric W: per
        term r one product U_r' (sum_s W_rs R_rs), not a p x p product per pair."""
        k, s3 = self.k, self.s2**3
        total = np.zeros_like(self.xv3x)
        for r in range(k):
            off = sum(w[r, s] * self._right(r, s) for s in range(r + 1, k + 1))
            part = self.u_rows[r].T @ off
            total += part + part.T + w[r, r] * (self.u_rows[r].T @ self.panels[r, r])
        return (total + w[k, k] * self.xv3x) / s3


def _pair_panels(
    pt: _Parts, u: np.ndarray, rows: list[np.ndarray], n_block_slots: int
) -> dict[tuple[int, int], np.ndarray]:
    """The panels (M_1 E_s U)_r of PairProducts, r <= s: M_1 applied to the E_s U of a part's
    terms side by side (block terms, then rest terms), a few terms at a time
    (PANEL_ENTRIES), keeping only rows r <= s of each."""
    q, p = u.shape
    panels: dict[tuple[int, int], np.ndarray] = {}
    at_once = max(1, PANEL_ENTRIES // max(1, q * p))
    for in_block in (True, False):
        terms = [s for s, rs in enumerate(rows) if len(rs) and (rs[0] < n_block_slots) == in_block]
        if terms and not in_block and q * (q - n_block_slots) <= REST_COLUMNS_ENTRIES:
            _rest_panels(pt, u, rows, n_block_slots, terms, panels)
            continue
        for start in range(0, len(terms), at_once):
            chunk = terms[start : start + at_once]
            v = np.zeros((q, p * len(chunk)))
            for i, s in enumerate(chunk):
                v[rows[s], i * p : (i + 1) * p] = u[rows[s]]
            mv = _apply_m1(pt, v, in_block)
            for i, s in enumerate(chunk):
                for r in range(s + 1):
                    panels[r, s] = mv[rows[r], i * p : (i + 1) * p]
    return panels


def _rest_panels(
    pt: _Parts,
    u: np.ndarray,
    rows: list[np.ndarray],
    n_block_slots: int,
    terms: list[int],
    panels: dict[tuple[int, int], np.ndarray],
) -> None:
    """The panels of the rest terms from M_1's rest columns, formed once (q x q_R): E_s U is
    non-zero only in term s's rows, so M_1 E_s U = M_1[:, s] U_s, q x q_s x p a term instead of
    M_1 applied to a q x p block (at 200 systems, a run term has 3 of q_R = 1,200 rest rows)."""
    q = u.shape[0]
    unit = np.zeros((q, q - n_block_slots))
    unit[n_block_slots:] = np.eye(q - n_block_slots)
    columns = _apply_m1(pt, unit, in_block=False)  # M_1[:, R]
    for s in terms:
        mv = columns[:, rows[s] - n_block_slots] @ u[rows[s]]
        for r in range(s + 1):
            panels[r, s] = mv[rows[r]]


def kr_pieces(
    bp: BlockProducts, theta: np.ndarray, sigma: float, n: int
) -> tuple[np.ndarray, PFactors, PairProducts]:
    """pbkrtest's K (traces), P (PFactors) and Q (r <= s; the last index is
    the residual; PairProducts), as ddf.DdfCore's dense reference computes them, from the
    cross-products alone."""
    pt = _parts(bp, theta)
    mo = _moments(bp, pt, n)
    labels = np.concatenate([bp.slot_term.reshape(-1), bp.rest_term])
    rows = [np.flatnonzero(labels == t) for t in range(bp.n_terms)]
    s2 = sigma**2
    qr = bp.qr
    u = mo.zv1x
    factors = [PFactors.compressed(u[r] / s2) for r in rows]  # P_r = -U_r'U_r / s2^2
    residual = PFactors.factor_of(-mo.m2_rr[qr:, qr:] / s2**2)  # P_e = -X'V^-2 X / s2^2
    P = PFactors([*factors, residual])
    Q = PairProducts(u, rows, _pair_panels(pt, u, rows, bp.slot_term.size), mo.zv2x, mo.xv3x, s2)
    ktr = kr_traces(bp, pt, mo, rows) / s2**2
    return ktr, P, Q
