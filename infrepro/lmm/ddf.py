"""Small-sample tests of fixed-effect contrasts: Satterthwaite and Kenward-Roger denominator df.

Both are ports of the R reference implementations, step for step, so that the numbers agree
with lmerTest 3.x and pbkrtest 0.5 (tests/golden/fixtures_ddf):

Satterthwaite (Kuznetsova et al. 2017, lmerTest ``as_lmerModLT``, ``contest1D``, ``contestMD``).
With the variance parameters ``vp = (theta, sigma)`` and ``C(vp) = sigma^2 (R_X'R_X)^-1`` the
covariance of beta-hat,

    A      = 2 H^+,   H = d^2 D(vp) / d vp^2 at the optimum (D: the deviance with sigma free)
    J_i    = dC / d vp_i
    nu     = 2 (l'Cl)^2 / (g'Ag),   g_i = l'J_i l          (one contrast row l)

and for q > 1 rows, the rows are rotated to the eigenvectors of L C L' and the F statistic's
df is 2E / (E - q) with E = sum nu_m / (nu_m - 2) (lmerTest ``get_Fstat_ddf``). H and J are
taken by Richardson extrapolation exactly as numDeriv's ``hessian`` and ``jacobian`` do.

Kenward-Roger (Kenward & Roger 1997; Halekoh & Hojsgaard 2014, pbkrtest ``vcovAdj``,
``Lb_ddf``, ``.KR_adjust``). With Sigma = sum_r gamma_r G_r (G_r = Z_r Z_r', G = I for the
residual), P_r = -X'S^-1 G_r S^-1 X, Q_rs = X'S^-1 G_r S^-1 G_s S^-1 X, Phi = (X'S^-1 X)^-1:

    I_rs   = tr(S^-1 G_r S^-1 G_s) - 2 tr(Phi Q_rs) + tr(Phi P_r Phi P_s),   W = 2 I^-1
    Phi_A  = Phi + 2 Phi [sum_rs W_rs (Q_rs - P_r Phi P_s)] Phi

and the df and F scaling from A1, A2 (Kenward & Roger 1997, eq. 3.2-3.4). pbkrtest forms the
n x n matrix S^-1; here every trace and product goes through the Woodbury identity
S^-1 = sigma^-2 (I - Z K Z'), K = Lambda A^-1 Lambda, so the work is in q x q matrices
(q = random-effect columns) and n x p panels: the exact KR at 7,200 rows takes milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from infrepro.lmm.errors import LmmError
from infrepro.lmm.kr import BlockProducts, PairMatrices, PFactors, kr_pieces
from infrepro.lmm.layout import Layout
from infrepro.plumbing.blas import single_threaded_blas

SATTERTHWAITE = "Satterthwaite"
KENWARD_ROGER = "Kenward-Roger"
# up to this many random-effect columns KR goes through the dense q x q reference (the fit keeps
# X and Z); above, through the structured computation on the cross-products (kr.py)
DENSE_KR_MAX_COLUMNS = 1200
# ... and while its work, the q x q inverse (q^3) and the Q_rs products ((terms + 1)(terms + 2)/2
# products of n x p by n x p), stays below this many multiply-adds (a tenth of a second); else
# the structured way, linear in the segments: the decision model at 30 systems (3.6e10, its Q
# products) or a pair of them at 500 segments (1.3e8, its inverse), the bundled example's fits
# (at most 4e7) stay dense
DENSE_KR_MAX_WORK = 1e8
# the structured KR holds the B x R' cross-products densely (q_B x (rest columns + p) floats):
# above this (e.g. more than ~4,300 run columns at 11,490 segments) a fit has no KR and its
# tests use Satterthwaite, which says so in every row's method
KR_MAX_ENTRIES = 50_000_000
_ZERO_TOL = float(np.sqrt(np.finfo(float).eps / 7e-7))  # numDeriv's zero.tol


@dataclass(frozen=True)
class ContrastTest:
    """A test of H0: L beta = 0 with small-sample denominator df.

    For one row: ``estimate``, ``se`` and ``statistic`` = t; for several rows: ``statistic``
    = F and ``estimate``/``se`` are NaN. ``numdf`` = rows of L; ``dendf`` = the denominator df.
    """

    method: str
    estimate: float
    se: float
    statistic: float
    numdf: int
    dendf: float
    p_value: float
    log10_p: float


def kr_fits(layout: Layout, p: int) -> bool:
    """Whether the structured KR's dense B x R' block stays within KR_MAX_ENTRIES."""
    return layout.n_blocks * layout.m * (layout.n_rest + p) <= KR_MAX_ENTRIES


# --------------------------------------------------------------------------- numDeriv ports
def _richardson_steps(x: np.ndarray, d: float) -> np.ndarray:
    return np.abs(d * x) + 1e-4 * (np.abs(x) < _ZERO_TOL)


def nd_hessian(func: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    """numDeriv::hessian (method "Richardson", d = 0.1, r = 4, v = 2), via genD."""
    r = 4
    n = len(x)
    f0 = func(x)
    h0 = _richardson_steps(x, 0.1)
    hdiag = np.zeros(n)
    eye = np.eye(n)

    def extrapolate(a: np.ndarray) -> float:
        a = a.copy()
        for m in range(1, r):
            for k in range(r - m):
                a[k] = (a[k + 1] * 4.0**m - a[k]) / (4.0**m - 1.0)
        return float(a[0])

    for i in range(n):
        h = h0.copy()
        ha = np.zeros(r)
        for k in range(r):
            f1 = func(x + eye[i] * h)
            f2 = func(x - eye[i] * h)
            ha[k] = (f1 - 2.0 * f0 + f2) / h[i] ** 2
            h = h / 2.0
        hdiag[i] = extrapolate(ha)
    hess = np.diag(hdiag)
    for i in range(n):
        for j in range(i):
            h = h0.copy()
            da = np.zeros(r)
            for k in range(r):
                f1 = func(x + eye[i] * h + eye[j] * h)
                f2 = func(x - eye[i] * h - eye[j] * h)
                da[k] = (f1 - 2.0 * f0 + f2 - hdiag[i] * h[i] ** 2 - hdiag[j] * h[j] ** 2) / (
                    2.0 * h[i] * h[j]
                )
                h = h / 2.0
            hess[i, j] = hess[j, i] = extrapolate(da)
    return hess


def nd_jacobian(func: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """numDeriv::jacobian (method "Richardson", d = 1e-4, r = 4, v = 2): (len(f), len(x))."""
    r = 4
    n = len(x)
    f = np.ravel(func(x))
    a = np.zeros((len(f), r, n))
    h = _richardson_steps(x, 1e-4)
    eye = np.eye(n)
    for k in range(r):
        for i in range(n):
            a[:, k, i] = (np.ravel(func(x + h * eye[i])) - np.ravel(func(x - h * eye[i]))) / (
                2.0 * h[i]
            )
        h = h / 2.0
    for m in range(1, r):
        a = (a[:, 1 : r + 1 - m, :] * 4.0**m - a[:, : r - m, :]) / (4.0**m - 1.0)
    return a[:, 0, :]


# --------------------------------------------------------------------------- model core
@dataclass
class DdfCore:
    """What the df computations need from a fit; the expensive pieces are computed once.

    ``pieces(theta)`` returns (log|L|^2, r2, log|R_X|^2, (R_X'R_X)^-1) of the profiled
    deviance (cross-product sized: Satterthwaite needs nothing with a row per observation).
    ``X`` (n x p) and ``Z``, the random-effects model matrix (n x q) in the order of
    ``term_cols``, are what Kenward-Roger (and the parametric bootstrap) need; a fit keeps them
    only where they are used (see ``fit(keep_design=...)``): ``design`` returns X and the
    function that builds Z on first use, or is None when they were not kept.
    """

    pieces: Callable[[np.ndarray], tuple[float, float, float, np.ndarray]]
    n: int  # observations
    p: int  # fixed effects
    q: int  # random-effect columns
    term_cols: list[np.ndarray]  # columns of Z belonging to each random term
    theta: np.ndarray
    sigma: float
    beta: np.ndarray
    vcov: np.ndarray
    reml: bool
    design: tuple[np.ndarray, Callable[[], sp.csc_matrix]] | None = field(default=None, repr=False)
    _z: sp.csc_matrix | None = field(default=None, repr=False)
    _satt: tuple[np.ndarray, list[np.ndarray]] | None = field(default=None, repr=False)
    products: Callable[[], BlockProducts] | None = field(default=None, repr=False)
    kr_how: str = "auto"  # how kr_parts computes by default (tests compare "dense"/"structured")
    _kr: dict[str, tuple[np.ndarray, PFactors, np.ndarray]] = field(
        default_factory=dict, repr=False
    )
    _stacks: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def clear_cache(self) -> None:
        """Forget the cached Satterthwaite and Kenward-Roger parts (benchmarks time them cold)."""
        self._satt = None
        self._kr.clear()
        self._stacks.clear()

    def stacked(self, J: list[np.ndarray]) -> np.ndarray:
        """Satterthwaite's J_i stacked as one (parameters * p) x p matrix, once per fit: a
        one-row contrast's J_i l are then one matrix-vector product."""
        key = id(J)  # J stays alive in the Satterthwaite cache, so its id names it
        if key not in self._stacks:
            self._stacks[key] = np.concatenate(J, axis=0)
        return self._stacks[key]

    @property
    def X(self) -> np.ndarray:
        """The fixed-effect model matrix (n x p), when the fit kept it."""
        if self.design is None:
            raise LmmError("this fit did not keep its model matrices; refit with keep_design=True")
        return self.design[0]

    @property
    def Z(self) -> sp.csc_matrix:
        """The random-effects model matrix (n x q), built on first use, when the fit kept it."""
        if self._z is None:
            if self.design is None:
                raise LmmError(
                    "this fit did not keep its model matrices; refit with keep_design=True"
                )
            self._z = self.design[1]()
        return self._z

    # ---- Satterthwaite ---------------------------------------------------------------------
    def _deviance_vp(self, vp: np.ndarray) -> float:
        """The deviance with sigma free (lmerTest's devfun_vp)."""
        n, p = self.n, self.p
        sigma2 = vp[-1] ** 2
        logdet_l, r2, logdet_rx, _ = self.pieces(np.abs(vp[:-1]))
        dev = logdet_l + r2 / sigma2 + n * np.log(2.0 * np.pi * sigma2)
        if self.reml:
            dev += logdet_rx - p * np.log(2.0 * np.pi * sigma2)
        return float(dev)

    def _covbeta(self, vp: np.ndarray) -> np.ndarray:
        return vp[-1] ** 2 * self.pieces(np.abs(vp[:-1]))[3]

    def satterthwaite_parts(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """lmerTest's vcov_varpar (2 H^+, eigenvalues > 1e-8 kept) and Jac_list."""
        if self._satt is None:
            vp = np.append(self.theta, self.sigma)
            hess = nd_hessian(self._deviance_vp, vp)
            vals, vecs = np.linalg.eigh(hess)
            pos = vals > 1e-8
            h_inv = (vecs[:, pos] / vals[pos]) @ vecs[:, pos].T
            p = self.p
            jac = nd_jacobian(self._covbeta, vp)
            # R's array(Jac[, i], dim = c(p, p)) fills column-major
            jac_list = [jac[:, i].reshape(p, p, order="F") for i in range(len(vp))]
            self._satt = (2.0 * h_inv, jac_list)
        return self._satt

    # ---- Kenward-Roger ---------------------------------------------------------------------
    def kr_parts(self, how: str | None = None) -> tuple[np.ndarray, PFactors, np.ndarray]:
        """pbkrtest's vcovAdj: (Phi_A, the P_r (kr.PFactors), W).

        ``how`` (default ``kr_how``): "dense" (the q x q Woodbury reference, needs X and Z),
        "structured" (kr.py, from the cross-products, linear in the number of segments) or
        "auto": dense while the fit kept X and Z, q <= DENSE_KR_MAX_COLUMNS and the dense
        products stay within DENSE_KR_MAX_WORK, structured otherwise. Cached per computation."""
        how = self.kr_how if how is None else how
        if not self.reml:
            raise LmmError("Kenward-Roger degrees of freedom need a REML fit")
        if how == "auto":
            n_g = len(self.term_cols) + 1
            work = float(self.q) ** 3 + n_g * (n_g + 1) / 2 * self.n * self.p**2
            dense = (
                self.design is not None
                and self.q <= DENSE_KR_MAX_COLUMNS
                and (work <= DENSE_KR_MAX_WORK or self.products is None)
            )
            how = "dense" if dense else "structured"
        if how in self._kr:
            return self._kr[how]
        if how == "dense":
            ktr, P, Q = self._kr_pieces_dense()
        elif how == "structured":
            if self.products is None:
                raise LmmError(
                    "Kenward-Roger is not available for this fit (ML, or its rest block exceeds "
                    f"{KR_MAX_ENTRIES} entries)"
                )
            ktr, P, Q = kr_pieces(self.products(), self.theta, self.sigma, self.n)
        else:
            raise LmmError(f"unknown Kenward-Roger computation {how!r}")
        parts = _kr_adjusted(self.vcov, ktr, P, Q)
        self._kr[how] = parts
        return parts

    def _kr_pieces_dense(
        self,
    ) -> tuple[np.ndarray, PFactors, PairMatrices]:
        """The traces K, P and Q of vcovAdj through q x q Woodbury algebra (the reference)."""
        n, q = self.n, self.q
        X, Z = self.X, self.Z
        s2 = self.sigma**2
        lam = np.zeros(q)
        for k, cols in enumerate(self.term_cols):
            lam[cols] = self.theta[k]
        C = (Z.T @ Z).toarray()
        A = lam[:, None] * C * lam[None, :] + np.eye(q)
        Ainv = np.linalg.inv(A)
        K = lam[:, None] * Ainv * lam[None, :]  # S^-1 = (I - Z K Z') / s2

        def sinv(v: np.ndarray) -> np.ndarray:
            return (v - Z @ (K @ (Z.T @ v))) / s2

        TT = sinv(X)  # S^-1 X
        ZtT = Z.T @ TT  # Z' S^-1 X
        KC = K @ C
        M1 = C - C @ KC  # Z' (I - ZKZ') Z = s2 Z' S^-1 Z
        M2 = M1 - C @ (K @ M1)  # Z' (I - ZKZ')^2 Z = s2^2 Z' S^-2 Z
        n_g = len(self.term_cols) + 1
        OO = [Z[:, cols] @ ZtT[cols] for cols in self.term_cols] + [TT]  # G_r S^-1 X
        SO = [sinv(o) for o in OO[:-1]] + [sinv(TT)]
        P = [-(o.T @ TT) for o in OO]
        P = [0.5 * (m + m.T) for m in P]
        Q = PairMatrices({(r, s): OO[r].T @ SO[s] for r in range(n_g) for s in range(r, n_g)}, n_g)
        ktr = np.zeros((n_g, n_g))
        for r, cr in enumerate(self.term_cols):
            for s in range(r, len(self.term_cols)):
                block = M1[np.ix_(cr, self.term_cols[s])] / s2
                ktr[r, s] = ktr[s, r] = float(np.sum(block * block))
            ktr[r, -1] = ktr[-1, r] = float(np.trace(M2[np.ix_(cr, cr)])) / s2**2
        ktr[-1, -1] = (n - 2.0 * np.trace(KC) + float(np.sum(KC * KC.T))) / s2**2
        return ktr, PFactors.of_dense(P), Q


def _kr_adjusted(
    Phi: np.ndarray, ktr: np.ndarray, P: PFactors, Q: PairMatrices
) -> tuple[np.ndarray, PFactors, np.ndarray]:
    """Phi_A = Phi + 2 Phi [sum_rs W_rs (Q_rs - P_r Phi P_s)] Phi with W = 2 I^-1,
    I_rs = K_rs - 2 tr(Phi Q_rs) + tr(Phi P_r Phi P_s) (pbkrtest's vcovAdj).

    tr(Phi P_r Phi P_s) for all pairs and sum_rs W_rs P_r Phi P_s come from the P_r's factors
    (kr.PFactors: P_r = -F_r'F_r), not from a p x p product per parameter or per pair as
    pbkrtest forms them. Each Q_rs, of which there are (parameters)^2 / 2, exists only while it
    is used (``Q`` may form them when asked for: kr.PairProducts)."""
    ie2 = ktr - 2.0 * Q.phi_traces(Phi) + P.pair_traces(Phi)
    condi = float(np.min(np.abs(np.linalg.eigvalsh(ie2))))
    W = 2.0 * (np.linalg.inv(ie2) if condi > 1e-10 else np.linalg.pinv(ie2))
    W = 0.5 * (W + W.T)
    U = Q.weighted_sum(W) - P.weighted_sum(W, Phi)
    phi_a = Phi + 2.0 * Phi @ U @ Phi
    return phi_a, P, W


# --------------------------------------------------------------------------- tests
def _t_test(method: str, est: float, var: float, df: float) -> ContrastTest:
    return _t_tests(method, np.array([est]), np.array([var]), np.array([df]))[0]


def _t_tests(method: str, est: np.ndarray, var: np.ndarray, df: np.ndarray) -> list[ContrastTest]:
    """The two-sided t test of each estimate with its variance and df (one scipy call)."""
    from scipy import stats

    se = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, est / se, np.nan)
    ok = np.isfinite(t) & (df > 0)
    logsf = np.full(len(t), np.nan)
    if ok.any():
        logsf[ok] = stats.t.logsf(np.abs(t[ok]), df[ok])
    log10_p = (logsf + np.log(2.0)) / np.log(10.0)
    return [
        ContrastTest(method, float(e), float(s), float(x), 1, float(d), float(10.0**lp), float(lp))
        for e, s, x, d, lp in zip(est, se, t, df, log10_p, strict=True)
    ]


def _f_test(method: str, f: float, q: int, df: float) -> ContrastTest:
    from scipy import stats

    logsf = float(stats.f.logsf(f, q, df)) if np.isfinite(f) and df > 0 else np.nan
    log10_p = logsf / np.log(10.0)
    return ContrastTest(
        method, np.nan, np.nan, float(f), q, float(df), float(10.0**log10_p), float(log10_p)
    )


def _satterthwaite_1d(core: DdfCore, row: np.ndarray) -> tuple[float, float]:
    """Var(row'beta) and its Satterthwaite df (lmerTest contest1D)."""
    vcov_varpar, jac = core.satterthwaite_parts()
    var = float(row @ core.vcov @ row)
    grad = np.array([float(row @ j @ row) for j in jac])
    return var, float(2.0 * var**2 / (grad @ vcov_varpar @ grad))


def _fstat_ddf(nu: np.ndarray) -> float:
    """lmerTest's get_Fstat_ddf."""
    if len(nu) == 1:
        return float(nu[0])
    if np.all(np.abs(np.diff(nu)) < 1e-8):
        return float(np.mean(nu))
    if np.any(nu <= 2):
        return 2.0
    e = float(np.sum(nu / (nu - 2.0)))
    return 2.0 * e / (e - len(nu))


def _kr_adjust(core: DdfCore, L: np.ndarray) -> tuple[float, float, float]:
    """pbkrtest's .KR_adjust / Lb_ddf: (unscaled Wald F on Phi_A, ddf, F scaling)."""
    phi_a, P, W = core.kr_parts()
    Phi = core.vcov
    q = L.shape[0]
    # the only per-contrast work (Phi_A, P and W come once per fit from kr_parts):
    # U_i = Theta Phi P_i Phi per variance parameter, A1 = sum_ij W_ij tr U_i tr U_j and
    # A2 = sum_ij W_ij tr(U_i U_j) (pbkrtest computes both)
    if q == 1:
        traces = _row_traces(core, P, L)[0]
        a1 = a2 = float(traces @ W @ traces)
    else:
        # tr U_i = tr(P_i H) and tr(U_i U_j) = tr(P_i H P_j H) with H = Phi Theta Phi =
        # Phi L'(L Phi L')^-1 L Phi (symmetric), from the P_i's factors (kr.PFactors)
        wl = Phi @ L.T
        h = wl @ np.linalg.solve(L @ wl, wl.T)
        h = 0.5 * (h + h.T)
        t = P.traces(h)
        a1 = float(t @ W @ t)
        a2 = float(np.sum(W * P.pair_traces(h)))
    df2, scaling = _kr_df(q, a1, a2)
    lb = L @ core.beta
    wald = float(lb @ np.linalg.solve(L @ phi_a @ L.T, lb))
    return wald / q, df2, scaling


ROWS_AT_ONCE = 256  # one-row contrasts whose traces one product computes (bounds its memory)


def _row_traces(core: DdfCore, P: PFactors, rows: np.ndarray) -> np.ndarray:
    """tr U_i of each one-row contrast l (a row of ``rows``; result: rows x parameters).

    Theta = l l' / (l' Phi l) is rank one, so tr U_i = w' P_i w / (l' w) with w = Phi l
    (-|F_i w|^2 / (l' w) from the P_i's factors), and tr(U_i U_j) = tr U_i tr U_j (A2 = A1)."""
    w = rows @ core.vcov  # each row's Phi l (Phi is symmetric)
    scale = np.einsum("ij,ij->i", rows, w)
    return P.forms(w) / scale[:, None]


def _row_forms(stacked: np.ndarray, count: int, rows: np.ndarray) -> np.ndarray:
    """v' M_i v for each row v of ``rows`` and each of the ``count`` p x p matrices M_i
    stacked as one (count * p) x p matrix (result: rows x count), in chunks of rows."""
    forms = np.empty((len(rows), count))
    for start in range(0, len(rows), ROWS_AT_ONCE):
        part = rows[start : start + ROWS_AT_ONCE]
        mv = (stacked @ part.T).reshape(count, -1, len(part))  # M_i v, per matrix
        forms[start : start + len(part)] = np.einsum("kij,ji->jk", mv, part)
    return forms


def _kr_df(q: int, a1: float, a2: float) -> tuple[float, float]:
    """pbkrtest's Lb_ddf from A1 and A2: (ddf, F scaling)."""
    b = (a1 + 6.0 * a2) / (2.0 * q)
    g = ((q + 1) * a1 - (q + 4) * a2) / ((q + 2) * a2)
    den = 3 * q + 2 * (1 - g)
    c1, c2, c3 = g / den, (q - g) / den, (q + 2 - g) / den
    v0 = 1 + c1 * b
    v1 = 1 - c2 * b
    v2 = 1 - c3 * b
    v0 = 0.0 if abs(v0) < 1e-10 else v0
    x = 1 - a2 / q
    ratio = 1.0 if abs(x) < 1e-14 and abs(v1) < 1e-14 else x / v1
    # v2 = 0 (e.g. A1 = A2 = 1/2 exactly for one row, as when both systems' run variances are
    # estimated at 0): rho is infinite and ddf takes its limit, 4 (a rounding away, it did)
    rho = ratio**2 * v0 / v2 / q if v2 != 0 else np.inf
    df2 = 4 + (q + 2) / (q * rho - 1)
    scaling = 1.0 if abs(df2 - 2) < 1e-2 else df2 * (1 - a2 / q) / (df2 - 2)
    return df2, scaling


def contest(core: DdfCore, L: np.ndarray, method: str) -> ContrastTest:
    """Test L beta = 0 (L: q x p) by Satterthwaite or Kenward-Roger, as lmerTest's contest."""
    with single_threaded_blas():
        return _contest(core, L, method)


def contest_rows(core: DdfCore, L: np.ndarray, method: str) -> list[ContrastTest]:
    """The t test of each row of L, as :func:`contest` gives it row by row; Kenward-Roger's
    per-contrast traces (or Satterthwaite's gradients l' J_i l) of all rows in shared products
    and one call of the t distribution (many contrasts of one fit: cell differences,
    prediction bands, model M's pairs)."""
    L = np.atleast_2d(np.asarray(L, dtype=float))
    if len(L) == 0:
        return []
    if L.shape[1] != len(core.beta):
        raise LmmError(f"contrast has {L.shape[1]} columns for {len(core.beta)} fixed effects")
    with single_threaded_blas():
        if method == KENWARD_ROGER:
            phi_a, P, W = core.kr_parts()
            traces = _row_traces(core, P, L)
            a = np.einsum("ij,jk,ik->i", traces, W, traces)
            df = np.array([_kr_df(1, float(x), float(x))[0] for x in a])
            var = np.einsum("ij,jk,ik->i", L, phi_a, L)
        elif method == SATTERTHWAITE:
            vcov_varpar, jac = core.satterthwaite_parts()
            var = np.einsum("ij,jk,ik->i", L, core.vcov, L)
            grad = _row_forms(core.stacked(jac), len(jac), L)  # l' J_i l, per parameter
            df = 2.0 * var**2 / np.einsum("ij,jk,ik->i", grad, vcov_varpar, grad)
        else:
            raise LmmError(f"unknown df method {method!r}: {SATTERTHWAITE!r} or {KENWARD_ROGER!r}")
        return _t_tests(method, L @ core.beta, var, df)


def _contest(core: DdfCore, L: np.ndarray, method: str) -> ContrastTest:
    L = np.atleast_2d(np.asarray(L, dtype=float))
    if L.shape[1] != len(core.beta):
        raise LmmError(f"contrast has {L.shape[1]} columns for {len(core.beta)} fixed effects")
    if method == KENWARD_ROGER:
        if L.shape[0] == 1:
            phi_a = core.kr_parts()[0]
            _, df2, _ = _kr_adjust(core, L)
            return _t_test(method, float(L[0] @ core.beta), float(L[0] @ phi_a @ L[0]), df2)
        f_u, df2, scaling = _kr_adjust(core, L)
        return _f_test(method, f_u * scaling, int(np.linalg.matrix_rank(L)), df2)
    if method != SATTERTHWAITE:
        raise LmmError(f"unknown df method {method!r}: {SATTERTHWAITE!r} or {KENWARD_ROGER!r}")
    if L.shape[0] == 1:
        var, df = _satterthwaite_1d(core, L[0])
        return _t_test(method, float(L[0] @ core.beta), var, df)
    vals, vecs = np.linalg.eigh(L @ core.vcov @ L.T)
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    pos = vals > max(np.sqrt(np.finfo(float).eps) * vals[0], 0.0)
    q = int(pos.sum())
    ptl = (vecs.T @ L)[:q]
    if q == 1:
        var, df = _satterthwaite_1d(core, ptl[0])
        est = float(ptl[0] @ core.beta)
        return _f_test(method, est**2 / var, 1, df)
    t2 = (ptl @ core.beta) ** 2 / vals[:q]
    nu = np.array([_satterthwaite_1d(core, ptl[m])[1] for m in range(q)])
    return _f_test(method, float(np.sum(t2)) / q, q, _fstat_ddf(nu))
