"""Simultaneous intervals and adjusted p by the single-step max-t (docs/method.md §4c.10).

A family of m contrasts with statistics t_j, df ν_j and correlation R of their estimates. As
emmeans' ``adjust = "mvt"`` (1.8.4: ``.adj.p.value``, ``.my.pmvt``, ``.my.qmvt``, ``.fix.df``),
each contrast uses its own integer df ν'_j = ``emmeans_df(ν_j)`` for the whole vector:

    p̃_j = P(max_i |T_i| ≥ t*_j),   T ~ MVT(0, R, ν'_j)    (adjusted p)
    P(max_i |T_i| ≥ q_j) = α                                (critical value; CI ± q_j SE)

with t*_j = |t_j|, or, given a marginal two-sided p_j from any test, t*_j = qt(1 − p_j/2, ν'_j)
(a single-step min-p with a t copula); contrast j is significant at family level α exactly when
t*_j > q_j, i.e. p_j < p*_j = 2 pt(−q_j, ν'_j) (``MaxT.level``).

How. T = Z / s with Z ~ N(0, R) and s = sqrt(χ²_ν / ν) independent, so

    P(max|T| ≥ c) = E_s[1 − G(c s)],   G(x) = P(max_i |Z_i| ≤ x),

and G is one function for every df. G is integrated once per family by Genz's separation of
variables (SOV) on a Chebyshev grid of x, with fixed scrambled Sobol points (so the same inputs
give the same bytes), in a variable order that brings each contrast in as soon as the span allows
(for all pairs: one system at a time, with every pair it closes). Then
h(x) = (1 − G(x)) / (2Φ(−x)) ∈ [1, m] is interpolated, and

    P(max|T| ≥ c) = p₁(c) · H(c),   p₁(c) = 2 pt(−c, ν),   H(c) = E_w[h(c s)],

H the average of h under the weight w(s) ∝ Φ(−c s) f_ν(s) (log-concave, integrated by
Gauss-Legendre over its bulk). So p̃ always lies in the Bonferroni bracket [p₁, m p₁]; where the
integration cannot resolve the tail, h rises to the Bonferroni value m (conservative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev
from scipy import sparse, special, stats
from scipy.stats import qmc

from infrepro.lmm.blas import single_threaded_blas

from .pvalues import LN10, t_log10_two_sided

NORMAL_ABOVE = 9999.0  # emmeans' .fix.df: larger df (and infinite or missing) mean the normal
REPLICATES = 8  # independently scrambled Sobol sequences; their spread is the error estimate
SOBOL_SEED = 20_251_127  # replicate r uses seed SOBOL_SEED + r (pilot: + REPLICATES + r)
PILOT_POINTS = 128  # per replicate: where G is ~0 and how far the tail can be resolved
POINTS = (512, 8192)  # per replicate: first pass, and the most the doubling may reach
TARGET_ERROR = 2e-5  # doubling stops when three SEs of every node's 1 − G are below this
WORK_BUDGET = 2e7  # ... or when nodes x points x cost would exceed this (cost in pivot steps)
ROW_COST = 0.05  # a contrast closed at a step, in pivot steps (measured: 9 vs 190 ns per path)
NNZ_COST = 0.005  # a coefficient of a closed contrast on an earlier pivot (1 ns)
NODES = 20  # Chebyshev nodes of log h on each of [x_lo, x_mid] and [x_mid, x_top]
PILOT_NODES = 25
G_FLOOR = 1e-10  # below x_lo, G(x) < G_FLOOR: 1 − G is taken as 1
TAIL_FLOOR = 1e-16  # the grid ends where the Bonferroni bound 2 m Φ(−x) reaches this
MID_TAIL = 1e-2  # x_mid, where the SOV hands over to the union estimator: 1 − G ≈ this
UNION_POINTS = 1024  # per replicate, for the union estimator (relative SE ≲ 1 % there)
SPAN_TOL = 1e-10  # residual variance below which a contrast lies in the pivots' span
COEF_TOL = 1e-9  # smaller coefficients of a dependent contrast on the pivots are rounding
QUAD_NODES = 96  # Gauss-Legendre nodes for H(c)
QUAD_DROP = 40.0  # H(c) integrates w(s) where log w ≥ its maximum − QUAD_DROP
P_FLOOR_T = 1e-300  # a marginal p below this maps to the t* of this p (H has converged there)


def emmeans_df(df: np.ndarray) -> np.ndarray:
    """emmeans' ``.fix.df``: ν' = floor(max(1, ν) + 0.25), and 0 (the normal) for ν > 9999,
    infinite or missing ν. Returns floats; 0 means the normal distribution."""
    nu = np.asarray(df, dtype=float)
    if np.any(nu <= 0):
        raise ValueError("degrees of freedom must be positive")
    normal = ~np.isfinite(nu) | (nu > NORMAL_ABOVE)
    fixed = np.floor(np.maximum(1.0, np.where(normal, 1.0, nu)) + 0.25)
    return np.where(normal, 0.0, fixed)


@dataclass(frozen=True)
class MaxT:
    """The single-step max-t of a family, per contrast j.

    ``log10_p_adjusted``/``p_adjusted``: p̃_j; ``critical``: q_j (the CI is estimate ± q_j SE);
    ``level``: p*_j, the marginal p below which contrast j is significant at family level α;
    ``df_used``: ν'_j (0 = normal); ``error``: estimated absolute error of the family
    probabilities P(max|Z| ≤ x) (three standard errors over the replicates, largest over the
    grid; 0 when exact), which bounds that of every p̃_j."""

    log10_p_adjusted: np.ndarray
    p_adjusted: np.ndarray
    critical: np.ndarray
    level: np.ndarray
    df_used: np.ndarray
    error: float


# --------------------------------------------------------------------------- variable order
@dataclass(frozen=True)
class _Plan:
    """The SOV of P(max|Z| ≤ x) for Z = C L y, y ~ N(0, I_r): ``chol`` (r x r, lower) gives the
    pivot contrasts Z_P = chol y; at step j each dependent contrast closed there is
    Z_i = c_ij (Z_Pj − centre_i), centre_i = ``steps[j][0]`` @ Z_P[:j], so that |Z_i| ≤ x bounds
    Z_Pj to centre_i ± x ``steps[j][1]``_i."""

    factor: np.ndarray  # m x r, Z = factor y: the rows have unit length
    chol: np.ndarray
    steps: tuple[tuple[sparse.csr_matrix, np.ndarray], ...]
    rank: int
    closed: int  # dependent contrasts

    @property
    def cost(self) -> float:
        """Work per SOV path, in pivot steps (for the point budget)."""
        nnz = sum(centres.nnz for centres, _ in self.steps)
        return self.rank + ROW_COST * self.closed + NNZ_COST * nnz


def _plan(corr: np.ndarray) -> _Plan:
    """Pivoted Cholesky of R choosing, at each step, the contrast that brings the most others
    into the span (for all pairs: the next system with every pair it closes), ties to the
    smallest conditional variance (measured: 2-5 times smaller SOV errors than Genz's largest
    variance first on these families), then to the lowest index."""
    m = corr.shape[0]
    res = corr.astype(float).copy()
    d = np.diag(res).copy()
    inspan = d <= SPAN_TOL
    cols: list[np.ndarray] = []
    pivots: list[int] = []
    while not inspan.all():
        free = ~inspan
        denom = np.where(free, d, 1.0)
        after = d[:, None] - res * res / denom[None, :]
        gain = np.where(free, ((after <= SPAN_TOL) & free[:, None]).sum(axis=0), -1)
        ties = np.flatnonzero(gain == gain.max())
        c = int(ties[np.argmin(d[ties])])
        # every contrast this one closes spans the same: the SOV is the same whichever is the
        # pivot; the first (for all pairs, a star on the lowest system) keeps the others sparse
        c = int(np.flatnonzero(free & (after[:, c] <= SPAN_TOL))[0])
        col = res[:, c] / math.sqrt(d[c])
        col[inspan] = 0.0
        res -= np.outer(col, col)
        d = d - col * col
        cols.append(col)
        pivots.append(c)
        inspan |= d <= SPAN_TOL
        d[inspan] = 0.0
    factor = np.column_stack(cols) if cols else np.zeros((m, 0))
    chol = factor[pivots]
    coef = np.linalg.solve(chol.T, factor.T).T if pivots else factor
    coef[np.abs(coef) < COEF_TOL] = 0.0
    coef[pivots] = np.eye(len(pivots))
    dependent = np.setdiff1d(np.arange(m), pivots)
    last = np.array([np.flatnonzero(coef[i]).max() for i in dependent], dtype=int)
    steps = []
    for j in range(len(pivots)):
        rows = dependent[last == j]
        cj = coef[rows, j]
        steps.append((sparse.csr_matrix(-coef[rows, :j] / cj[:, None]), 1.0 / np.abs(cj)))
    return _Plan(factor, chol, tuple(steps), len(pivots), len(dependent))


def _log_inside(plan: _Plan, x: float | np.ndarray, u: np.ndarray) -> np.ndarray:
    """log of the SOV integrand of P(max|Z| ≤ x) at points u (P x (r − 1)); x one value or one
    per point.

    Step j: the pivot Z_Pj = s_j + d_j y_j, s_j = chol[j, :j] y[:j], must lie in [lo, hi]
    (its own |Z_Pj| ≤ x and those of the contrasts closed there); the factor is
    e_j = Φ(b) − Φ(a), a = (lo − s_j)/d_j, b = (hi − s_j)/d_j, accumulated as log1p(−(Φ(a) +
    Φ(−b))) so that 1 − Π e_j keeps its digits when tiny; y_j = Φ⁻¹(Φ(a) + u_j e_j), from the
    nearer tail."""
    r, n = plan.rank, u.shape[0]
    x = np.broadcast_to(np.asarray(x, dtype=float), (n,)) if np.ndim(x) else float(x)
    y = np.empty((r, n))
    z = np.empty((r, n))
    log_in = np.zeros(n)
    for j in range(r):
        s = plan.chol[j, :j] @ y[:j] if j else np.zeros(n)
        lo, hi = -x, x
        centres, widths = plan.steps[j]
        if widths.size:
            mid = centres @ z[:j] if j else np.zeros((widths.size, n))
            half = widths[:, None] * (x[None, :] if np.ndim(x) else x)
            mid -= half
            lo = np.maximum(lo, mid.max(axis=0))
            mid += 2.0 * half
            hi = np.minimum(hi, mid.min(axis=0))
        dj = plan.chol[j, j]
        a = (lo - s) / dj
        b = np.maximum((hi - s) / dj, a)
        below, above = special.ndtr(a), special.ndtr(-b)
        out = np.minimum(below + above, 1.0)
        with np.errstate(divide="ignore"):
            log_in += np.log1p(-out)
        if j < r - 1:
            e = 1.0 - out
            uj = u[:, j]
            low = below + uj * e
            upper = low > 0.5
            yj = special.ndtri(np.where(upper, above + (1.0 - uj) * e, low))
            yj = np.clip(np.where(upper, -yj, yj), -60.0, 60.0)
            y[j] = yj
            z[j] = s + dj * yj
    return log_in


class _Nodes:
    """Running SOV sums at fixed nodes x_k over REPLICATES scrambled Sobol sequences, which
    ``extend`` continues (so doubling the points reuses every evaluation)."""

    def __init__(self, plan: _Plan, nodes: np.ndarray, seed: int) -> None:
        self.plan = plan
        self.nodes = nodes
        dim = plan.rank - 1
        self.engines = [qmc.Sobol(dim, scramble=True, rng=seed + r) for r in range(REPLICATES)]
        self.n = 0
        self.tail_sums = np.zeros((REPLICATES, nodes.size))  # Σ (1 − f)
        self.inside_sums = np.zeros((REPLICATES, nodes.size))  # Σ f

    def extend(self, n: int) -> None:
        """Add n points per replicate (n a power of two, as the Sobol balance needs)."""
        u = np.vstack([engine.random(n) for engine in self.engines])
        for k, x in enumerate(self.nodes):
            log_in = _log_inside(self.plan, float(x), u).reshape(REPLICATES, n)
            self.tail_sums[:, k] += -np.expm1(log_in).sum(axis=1)
            self.inside_sums[:, k] += np.exp(log_in).sum(axis=1)
        self.n += n

    def tails(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """1 − Ĝ at the nodes, its standard error over the replicates, and Ĝ."""
        per_rep = self.tail_sums / self.n
        se = per_rep.std(axis=0, ddof=1) / math.sqrt(REPLICATES)
        return per_rep.mean(axis=0), se, self.inside_sums.mean(axis=0) / self.n


# --------------------------------------------------------------------------- the tail
def _union_tails(plan: _Plan, corr: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1 − G(x) = P(∪_i A_i), A_i = {|Z_i| > x}, at each x, by the union estimator (Adler,
    Blanchet & Liu 2012), whose relative error stays bounded however small the probability:

        P(∪ A_i) = Σ_i P(A_i) · E[1 / N(Z)],   N(Z) = #{j : |Z_j| > x},

    Z drawn from the mixture of Z | A_i with weights P(A_i) (here all equal: i uniform), i.e.
    Z_i = ±z, z from the normal tail beyond x, and the others from Z | Z_i = z:
    Z = F w + R[:, i] (z − F_i·w), w ~ N(0, I_r), F the unit-row factor. Returns the estimates
    and their standard errors over the replicates; the same points serve every x."""
    m, r = plan.factor.shape
    per_rep = np.empty((REPLICATES, xs.size))
    for rep in range(REPLICATES):
        u = qmc.Sobol(r + 2, scramble=True, rng=SOBOL_SEED + 2 * REPLICATES + rep).random(
            UNION_POINTS
        )
        i = np.minimum((u[:, 0] * m).astype(int), m - 1)
        sign = np.where(u[:, 1] < 0.5, 1.0, -1.0)
        v = np.where(u[:, 1] < 0.5, 2.0 * u[:, 1], 2.0 * u[:, 1] - 1.0)
        w = special.ndtri(u[:, 2:])
        base = w @ plan.factor.T
        along = corr[i]
        offset = base[np.arange(i.size), i]
        for k, x in enumerate(xs):
            z = sign * -special.ndtri(v * special.ndtr(-x))
            count = (np.abs(base + along * (z - offset)[:, None]) > x).sum(axis=1)
            per_rep[rep, k] = (1.0 / np.maximum(count, 1)).mean()
    union = 2.0 * m * special.ndtr(-xs)
    return union * per_rep.mean(axis=0), union * per_rep.std(axis=0, ddof=1) / math.sqrt(REPLICATES)


# --------------------------------------------------------------------------- max |Z|
@dataclass(frozen=True)
class _MaxNormal:
    """log h(x) = log(1 − G(x)) − log(2Φ(−x)) of max_i |Z_i|, Z ~ N(0, R).

    Below x_lo G < G_FLOOR: h = 1 / (2Φ(−x)); on [x_lo, x_mid] the SOV's Chebyshev
    interpolant ``bulk``, on [x_mid, x_top] the union estimator's ``tail`` (both hold the same
    value at x_mid), above x_top its value at x_top."""

    m: int
    x_lo: float
    x_mid: float
    x_top: float
    bulk: np.ndarray
    tail: np.ndarray
    error: float
    plan: _Plan | None = None  # rank 1: exact at any x, no grid

    def log_h(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        log_m = math.log(self.m)
        log_p1 = math.log(2.0) + special.log_ndtr(-x)
        if self.plan is not None:  # rank 1: one SOV step, no points
            flat = x.ravel()
            log_in = _log_inside(self.plan, flat, np.zeros((flat.size, 0))).reshape(x.shape)
            with np.errstate(divide="ignore"):
                log_tail = np.log(-np.expm1(log_in))
            return np.clip(log_tail - log_p1, 0.0, log_m)
        bulk = _cheb(self.bulk, self.x_lo, self.x_mid, np.clip(x, self.x_lo, self.x_mid))
        tail = _cheb(self.tail, self.x_mid, self.x_top, np.clip(x, self.x_mid, self.x_top))
        value = np.where(x > self.x_mid, tail, bulk)
        value = np.where(x < self.x_lo, -log_p1, value)
        return np.clip(value, 0.0, np.minimum(log_m, -log_p1))  # 1 ≤ h ≤ m, and 1 − G ≤ 1


def _cheb(coef: np.ndarray, lo: float, hi: float, x: np.ndarray) -> np.ndarray:
    """A Chebyshev series on [lo, hi] at x."""
    return chebyshev.chebval((2.0 * x - lo - hi) / (hi - lo), coef)


def _cheb_fit(lo: float, hi: float, values: np.ndarray) -> np.ndarray:
    """The Chebyshev interpolant of values at ``_cheb_nodes(lo, hi)``."""
    return chebyshev.chebfit(chebyshev.chebpts2(NODES), values, NODES - 1)


def _cheb_nodes(lo: float, hi: float) -> np.ndarray:
    """NODES Chebyshev points of the second kind on [lo, hi], increasing, ends included."""
    return (chebyshev.chebpts2(NODES) + 1.0) / 2.0 * (hi - lo) + lo


def _pooled(a: float, se_a: float, b: float, se_b: float) -> float:
    """Two estimates of one value averaged by their inverse variances (an exact one wins)."""
    if se_a == 0.0 or se_b == 0.0:
        return a if se_a <= se_b else b
    return (a / se_a**2 + b / se_b**2) / (1.0 / se_a**2 + 1.0 / se_b**2)


def _max_normal(corr: np.ndarray) -> _MaxNormal:
    """Integrate G once for the family. A pilot SOV pass on a uniform grid finds x_lo (G + 3 SE
    < G_FLOOR) and x_mid (1 − G ≤ MID_TAIL). The SOV at NODES Chebyshev points of [x_lo, x_mid]
    doubles its points until every node's 3 SE is below TARGET_ERROR or the work budget is
    spent; the union estimator covers [x_mid, x_top] (the SOV's error there is a rare event:
    its replicates agree while all of them miss the same mass). At x_mid both estimates meet,
    averaged by their inverse variances."""
    m = corr.shape[0]
    plan = _plan(corr)
    if plan.rank == 1:
        empty = np.zeros(1)
        return _MaxNormal(m, 0.0, 1.0, 2.0, empty, empty, 0.0, plan)
    x_top = float(-special.ndtri(TAIL_FLOOR / (2.0 * m)))
    budget = WORK_BUDGET / (NODES * REPLICATES * plan.cost)
    most = max(POINTS[0], min(POINTS[1], 2 ** math.floor(math.log2(budget))))
    with single_threaded_blas():
        grid = np.linspace(0.0, x_top, PILOT_NODES)
        pilot = _Nodes(plan, grid, SOBOL_SEED + REPLICATES)
        pilot.extend(PILOT_POINTS)
        tails, ses, inside = pilot.tails()
        low = np.flatnonzero(np.cumprod(inside + 3.0 * ses <= G_FLOOR))
        x_lo = float(grid[low[-1]]) if low.size else 0.0
        x_mid = float(grid[np.flatnonzero((grid > x_lo) & (tails <= MID_TAIL))[0]])
        nodes = _cheb_nodes(x_lo, x_mid)
        main = _Nodes(plan, nodes, SOBOL_SEED)
        main.extend(POINTS[0])
        tails, ses, _ = main.tails()
        while 3.0 * ses.max() > TARGET_ERROR and 2 * main.n <= most:
            main.extend(main.n)
            tails, ses, _ = main.tails()
        far = _cheb_nodes(x_mid, x_top)
        far_tails, far_ses = _union_tails(plan, corr, far)
    meet = _pooled(tails[-1], ses[-1], far_tails[0], far_ses[0])
    tails[-1] = far_tails[0] = meet

    def log_h(t: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(t, 1e-300)) - (math.log(2.0) + special.log_ndtr(-x))

    bulk = _cheb_fit(x_lo, x_mid, log_h(tails, nodes))
    tail = _cheb_fit(x_mid, x_top, log_h(far_tails, far))
    error = float(3.0 * max(ses.max(), far_ses.max()))
    return _MaxNormal(m, x_lo, x_mid, x_top, bulk, tail, error)


# --------------------------------------------------------------------------- mixture over s
def _bisect(f, lo: np.ndarray, hi: np.ndarray, iters: int) -> np.ndarray:
    """Elementwise bisection for f(lo) > 0 ≥ f(hi) (lo may exceed hi)."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pos = f(mid) > 0
        lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
    return 0.5 * (lo + hi)


def _log_ratio(dist: _MaxNormal, c: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """log H(c) = log(P(max|T| ≥ c) / (2 pt(−c, ν))), T ~ MVT(R, ν), elementwise (ν = 0:
    the normal, H = h(c)).

    H(c) = ∫ h(c s) w(s) ds / ∫ w(s) ds with w(s) = Φ(−c s) s^(ν−1) exp(−ν s²/2): the density
    of s = sqrt(χ²_ν / ν) times the marginal tail. log w is concave in s and in log s (ν ≥ 1);
    bisection finds its mode (on log s) and where it has dropped by QUAD_DROP on either side,
    and QUAD_NODES Gauss-Legendre nodes span that range (from 0 when ν = 1: w(0) > 0)."""
    c = np.asarray(c, dtype=float).ravel()
    nu = np.broadcast_to(np.asarray(nu, dtype=float), c.shape)
    out = np.empty(c.size)
    normal = nu == 0
    out[normal] = dist.log_h(c[normal])
    if normal.all():
        return out
    cc, vv = c[~normal, None], nu[~normal, None]

    def psi(ls: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            power = np.where(vv == 1.0, 0.0, (vv - 1.0) * ls)
        return special.log_ndtr(-cc * np.exp(ls)) + power - vv * np.exp(2.0 * ls) / 2.0

    def slope(ls: np.ndarray) -> np.ndarray:  # d psi / d log s
        s = np.exp(ls)
        y = cc * s
        with np.errstate(over="ignore", invalid="ignore"):
            mills = np.exp(-0.5 * y * y - 0.5 * math.log(2.0 * math.pi) - special.log_ndtr(-y))
        mills = np.where(y > 1e8, y, mills)  # φ(y) / Φ(−y) → y
        return -y * mills + (vv - 1.0) - vv * s * s

    floor = np.full(cc.shape, -750.0)
    top = 0.5 * np.log(np.maximum(vv - 1.0, 1e-300) / vv)  # the mode of the chi density
    mode = np.where(vv == 1.0, floor, _bisect(slope, floor, top, 60))
    peak = psi(mode)
    left = np.where(
        vv == 1.0, floor, _bisect(lambda ls: QUAD_DROP - peak + psi(ls), mode, floor, 40)
    )
    right = np.log(np.exp(mode) + np.sqrt(2.0 * QUAD_DROP / vv))  # psi'' ≤ −ν in s
    right = _bisect(lambda ls: QUAD_DROP - peak + psi(ls), mode, right, 40)
    s_lo = np.where(vv == 1.0, 0.0, np.exp(left))
    s_hi = np.exp(right)
    t, wt = np.polynomial.legendre.leggauss(QUAD_NODES)
    s = s_lo + (t[None, :] + 1.0) / 2.0 * (s_hi - s_lo)
    weight = wt[None, :] * np.exp(psi(np.log(s)) - peak)
    h = np.exp(dist.log_h(cc * s))
    ratio = (weight * h).sum(axis=1) / weight.sum(axis=1)
    out[~normal] = np.clip(np.log(ratio), 0.0, math.log(dist.m))
    return out


def _log_p1(c: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """ln of the marginal two-sided p of c with ν df (0 = normal), never -inf."""
    c = np.abs(np.asarray(c, dtype=float))
    nu = np.broadcast_to(np.asarray(nu, dtype=float), c.shape)
    out = np.where(nu == 0, special.log_ndtr(-c), stats.t.logsf(c, np.where(nu == 0, 1.0, nu)))
    out = out + math.log(2.0)
    for j in np.flatnonzero(~np.isfinite(out)):  # beyond scipy's t tail: the series
        out[j] = t_log10_two_sided(float(c[j]), float(nu[j])) * LN10
    return out


def _critical(dist: _MaxNormal, nu: np.ndarray, alpha: float) -> np.ndarray:
    """q with P(max|T| ≥ q) = α for each ν: between the marginal quantile (H ≥ 1) and
    Bonferroni's (H ≤ m), by the Illinois method on ln p₁(q) + ln H(q) − ln α, all ν at
    once."""

    def isf(p: float) -> np.ndarray:
        return np.where(nu == 0, stats.norm.isf(p), stats.t.isf(p, np.where(nu == 0, 1.0, nu)))

    def excess(q: np.ndarray) -> np.ndarray:
        return _log_p1(q, nu) + _log_ratio(dist, q, nu) - math.log(alpha)

    lo, hi = isf(alpha / 2.0), isf(alpha / (2.0 * dist.m))
    f_lo, f_hi = excess(lo), excess(hi)
    done = (f_lo <= 0) | (f_hi >= 0)
    root = np.where(f_lo <= 0, lo, hi)
    side = np.zeros(nu.size, dtype=int)
    for _ in range(100):
        if done.all():
            break
        q = np.where(done, root, (lo * f_hi - hi * f_lo) / np.where(done, 1.0, f_hi - f_lo))
        f = np.where(done, 0.0, excess(q))
        root = np.where(done, root, q)
        done |= (np.abs(f) < 1e-13) | (hi - lo < 1e-13 * hi)
        up = f > 0  # the root lies above q
        lo, f_lo = np.where(up, q, lo), np.where(up, f, np.where(side == -1, f_lo / 2, f_lo))
        hi, f_hi = np.where(up, hi, q), np.where(up, np.where(side == 1, f_hi / 2, f_hi), f)
        side = np.where(up, 1, -1)
    return root


def _t_star(log10_p: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """t* = qt(1 − p/2, ν): the marginal p on the t scale of ν df (0 = normal)."""
    normal = -special.ndtri_exp(log10_p * LN10 - math.log(2.0))
    p = np.maximum(10.0**log10_p, P_FLOOR_T)
    return np.where(nu == 0, normal, stats.t.isf(p / 2.0, np.where(nu == 0, 1.0, nu)))


# --------------------------------------------------------------------------- the family
def max_t(
    t: np.ndarray | None,
    df: np.ndarray,
    corr: np.ndarray,
    alpha: float,
    *,
    log10_p_marginal: np.ndarray | None = None,
) -> MaxT:
    """Single-step max-t adjusted p, critical values and marginal levels of a family.

    ``t``: the contrasts' t statistics (|t_j| is t*_j; ignored when ``log10_p_marginal`` is
    given); ``df``: their df (any positive reals; ν'_j = ``emmeans_df``); ``corr``: the m x m
    correlation of the estimates (singular allowed: all pairs have rank k − 1);
    ``log10_p_marginal``: each contrast's own two-sided p (log10), mapped to t*_j on the t scale
    of ν'_j. A family of one is the t test itself with its unrounded df (as emmeans)."""
    corr = np.atleast_2d(np.asarray(corr, dtype=float))
    df = np.atleast_1d(np.asarray(df, dtype=float))
    m = df.size
    if corr.shape != (m, m) or not np.allclose(corr, corr.T) or not np.allclose(np.diag(corr), 1):
        raise ValueError("corr must be a symmetric m x m correlation matrix")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    if log10_p_marginal is None:
        if t is None:
            raise ValueError("give t or log10_p_marginal")
        stat = np.abs(np.atleast_1d(np.asarray(t, dtype=float)))
        if stat.shape != (m,) or not np.isfinite(stat).all():
            raise ValueError("t must hold m finite statistics")
    elif np.shape(log10_p_marginal) != (m,) or np.isnan(log10_p_marginal).any():
        raise ValueError("log10_p_marginal must hold m p-values (log10)")
    if m == 1:
        nu = np.where(np.isfinite(df), df, 0.0)
    else:
        nu = emmeans_df(df)
    if log10_p_marginal is None:
        log10_p = _log_p1(stat, nu) / LN10
    else:
        log10_p = np.minimum(np.atleast_1d(np.asarray(log10_p_marginal, dtype=float)), 0.0)
        stat = _t_star(log10_p, nu)
    if m == 1:  # no family: the marginal test (emmeans: no adjustment, the df unrounded)
        q = _critical_single(float(nu[0]), alpha)
        return MaxT(log10_p, 10.0**log10_p, np.array([q]), np.array([alpha]), nu, 0.0)
    dist = _max_normal(corr)
    log10_adj = np.minimum(log10_p + _log_ratio(dist, stat, nu) / LN10, 0.0)
    values, where = np.unique(nu, return_inverse=True)
    critical = _critical(dist, values, alpha)[where]
    level = np.exp(_log_p1(critical, nu))
    return MaxT(log10_adj, 10.0**log10_adj, critical, level, nu, dist.error)


def _critical_single(nu: float, alpha: float) -> float:
    """The marginal two-sided critical value (ν = 0: normal)."""
    return float(stats.norm.isf(alpha / 2.0) if nu == 0 else stats.t.isf(alpha / 2.0, nu))
