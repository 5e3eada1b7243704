"""Simultaneous intervals and adjusted p by the single-step max-t (docs/method.md §4c.10).

A family of m contrasts with statistics t_j, df ν_j and correlation R of their estimates. As
emmeans' ``adjust = "mvt"`` (1.8.4: ``.adj.p.value``, ``.my.pmvt``, ``.my.qmvt``, ``.fix.df``),
each contrast uses its own integer df ν'_j = ``emmeans_df(ν_j)`` for the whole vector:

    p̃_j = P(max_i |T_i| ≥ t*_j),   T ~ MVT(0, R, ν'_j)    (adjusted p)
    P(max_i |T_i| ≥ q_j) = α                                (critical value; CI ± q_j SE)

with t*_j = |t_j|; contrast j is significant at family level α exactly when t*_j > q_j, i.e.
p_j < p*_j = 2 pt(−q_j, ν'_j) (``MaxT.level``).

How. T = Z / s with Z ~ N(0, R) and s = sqrt(χ²_ν / ν) independent, so

    P(max|T| ≥ c) = E_s[1 − G(c s)],   G(x) = P(max_i |Z_i| ≤ x),

and G is one function for every df. It is integrated once per family: by Genz's separation of
variables (SOV) at Chebyshev nodes of x up to 1 − G = 1e-3, with fixed scrambled Sobol points
(the same inputs give the same bytes), in a variable order that brings each contrast in as soon
as the span allows (for all pairs: one system at a time, with every pair it closes) and, where R
is nearly one-factor (the contrasts with the baseline), its exactly integrable one-factor fit as
control variate; beyond, by the union estimator, whose relative error stays bounded in the tail.
With h(x) = (1 − G(x)) / (2Φ(−x)) ∈ [1, m] interpolated,

    P(max|T| ≥ c) = p₁(c) · H(c),   p₁(c) = 2 pt(−c, ν),   H(c) = E_w[h(c s)],

H the average of h under the weight w(s) ∝ Φ(−c s) f_ν(s) (log-concave, integrated by
Gauss-Legendre over its bulk). So p̃ always lies in the Bonferroni bracket [p₁, m p₁], and its
log10 is finite however small p is.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev
from scipy import sparse, special, stats
from scipy.stats import qmc

from infrepro.plumbing.blas import single_threaded_blas
from infrepro.stats.pvalues import LN10, t_log10_two_sided

NORMAL_ABOVE = 9999.0  # emmeans' .fix.df: larger df (and infinite or missing) mean the normal
REPLICATES = 8  # independently scrambled Sobol sequences; their spread is the error estimate
SOBOL_SEED = 20_251_127  # replicate r uses seed SOBOL_SEED + r (pilot: + REPLICATES + r)
PILOT_POINTS = 128  # per replicate: where G is ~0 and how far the tail can be resolved
POINTS = (2048, 8192)  # per replicate: first pass (fewer: SEs blind to a 0.4 % bias), most
CONTROL_POINTS = 1024  # first pass with a control variate
TARGET_ERROR = 2e-5  # doubling stops when three SEs of every node's 1 − G are below this
WORK_BUDGET = 2e7  # ... or when nodes x points x cost would exceed this (cost in pivot steps)
ROW_COST = 0.05  # a contrast closed at a step, in pivot steps (measured: 9 vs 190 ns per path)
NNZ_COST = 0.005  # a coefficient of a closed contrast on an earlier pivot (1 ns)
NODES = 20  # Chebyshev nodes of each table: [x_a, x_half], [x_half, x_mid], [x_mid, x_top]
PILOT_NODES = 25
G_FLOOR = 1e-10  # x_a, the low table's start, is the last pilot x with G below this
TAIL_FLOOR = 1e-16  # the grid ends where the Bonferroni bound 2 m Φ(−x) reaches this
MID_TAIL = 1e-3  # x_mid, where the SOV hands over to the union estimator: 1 − G ≈ this
UNION_POINTS = 1024  # per replicate, for the union estimator (relative SE ≲ 1 % there)
ONE_FACTOR_MISFIT = 0.05  # R's one-factor fit serves as control variate when this close
ONE_FACTOR_ITERATIONS = 100
ONE_FACTOR_NODES = 400
SPAN_TOL = 1e-10  # residual variance below which a contrast lies in the pivots' span
COEF_TOL = 1e-9  # smaller coefficients of a dependent contrast on the pivots are rounding
QUAD_NODES = 96  # Gauss-Legendre nodes for H(c)
QUAD_DROP = 40.0  # H(c) integrates w(s) where log w ≥ its maximum − QUAD_DROP


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
    grid; 0 when exact), which bounds that of every p̃_j; ``log10_p``: the marginal p it
    reads."""

    log10_p_adjusted: np.ndarray
    p_adjusted: np.ndarray
    critical: np.ndarray
    level: np.ndarray
    df_used: np.ndarray
    error: float
    log10_p: np.ndarray  # the marginal p at ν'_j (the unrounded df for a family of one)


# --------------------------------------------------------------------------- variable order
@dataclass(frozen=True)
class _Plan:
    """The SOV of P(max|Z| ≤ x) for Z = F y (``factor``), y ~ N(0, I_r): ``chol`` (r x r) gives the
    pivot contrasts Z_P = chol y; at step j each dependent contrast closed there is
    Z_i = c_ij (Z_Pj − centre_i), centre_i = ``steps[j][0]`` @ Z_P[:j], so that |Z_i| ≤ x bounds
    Z_Pj to centre_i ± x ``steps[j][1]``_i."""

    factor: np.ndarray  # m x r, Z = factor y: the rows have unit length
    pivots: tuple[int, ...]
    chol: np.ndarray
    steps: tuple[tuple[sparse.csr_matrix, np.ndarray], ...]
    rank: int
    closed: int  # dependent contrasts

    @property
    def cost(self) -> float:
        """Work per SOV path, in pivot steps (for the point budget)."""
        nnz = sum(centres.nnz for centres, _ in self.steps)
        return self.rank + ROW_COST * self.closed + NNZ_COST * nnz


def _plan(corr: np.ndarray, order: tuple[int, ...] | None = None) -> _Plan:
    """Pivoted Cholesky of R choosing, at each step, the contrast that brings the most others
    into the span (for all pairs: the next system with every pair it closes), ties to the
    smallest conditional variance (measured: 2-5 times smaller SOV errors than Genz's largest
    variance first on these families), then to the lowest index; or the pivots ``order``."""
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
        if order is not None:
            c = order[len(pivots)]
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
    return _Plan(factor, tuple(pivots), chol, tuple(steps), len(pivots), len(dependent))


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
    ``extend`` continues (so doubling the points reuses every evaluation); with a ``control``
    plan (R's one-factor fit in the same pivot order), the same points integrate it too."""

    def __init__(
        self, plan: _Plan, nodes: np.ndarray, seed: int, control: _Plan | None = None
    ) -> None:
        self.plan = plan
        self.control = control
        self.nodes = nodes
        dim = plan.rank - 1
        self.engines = [qmc.Sobol(dim, scramble=True, rng=seed + r) for r in range(REPLICATES)]
        self.n = 0
        # Σ (1 − f) and Σ f per replicate and node, of R and of the control
        self.sums = np.zeros((4, REPLICATES, nodes.size))

    def extend(self, n: int) -> None:
        """Add n points per replicate (n a power of two, as the Sobol balance needs)."""
        u = np.vstack([engine.random(n) for engine in self.engines])
        plans = [self.plan] if self.control is None else [self.plan, self.control]
        for k, x in enumerate(self.nodes):
            for i, plan in enumerate(plans):
                log_in = _log_inside(plan, float(x), u).reshape(REPLICATES, n)
                self.sums[2 * i, :, k] += -np.expm1(log_in).sum(axis=1)
                self.sums[2 * i + 1, :, k] += np.exp(log_in).sum(axis=1)
        self.n += n

    def estimates(
        self, exact: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """1 − Ĝ and Ĝ at the nodes and their standard error over the replicates; given the
        control's exact (1 − G₀, G₀), the control-variate estimates Ĝ − (Ĝ₀ − G₀)."""
        tail, inside = self.sums[0] / self.n, self.sums[1] / self.n
        if exact is not None:
            tail = tail - (self.sums[2] / self.n - exact[0])
            inside = inside - (self.sums[3] / self.n - exact[1])
        se = tail.std(axis=0, ddof=1) / math.sqrt(REPLICATES)
        return tail.mean(axis=0), inside.mean(axis=0), se


def _one_factor(corr: np.ndarray) -> np.ndarray | None:
    """Loadings λ of R's one-factor fit ρ_ij ≈ λ_i λ_j (i ≠ j; principal-axis iterations), or
    None when it is off by more than ONE_FACTOR_MISFIT or a |λ_i| reaches 0.999. The contrasts
    with the baseline of independent means are exactly one-factor, λ_i = sqrt(v_B / (v_B + v_i));
    model M's are within about 1e-4 (the golden designs)."""
    m = corr.shape[0]
    values, vectors = np.linalg.eigh(corr)
    lam = vectors[:, -1] * math.sqrt(values[-1])
    for _ in range(ONE_FACTOR_ITERATIONS):
        reduced = corr - np.eye(m) + np.diag(lam * lam)
        values, vectors = np.linalg.eigh(reduced)
        lam = vectors[:, -1] * math.sqrt(max(values[-1], 0.0))
    fitted = np.outer(lam, lam)
    misfit = np.abs(corr - fitted)[~np.eye(m, dtype=bool)].max()
    if misfit > ONE_FACTOR_MISFIT or np.abs(lam).max() >= 0.999:
        return None
    return lam


def _one_factor_exact(lam: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact 1 − G₀(x) and G₀(x) of the one-factor correlation: Z_i = λ_i W + s_i E_i with
    s_i = sqrt(1 − λ_i²), G₀(x) = ∫ φ(w) Π_i [Φ((x − λ_i w)/s_i) − Φ((−x − λ_i w)/s_i)] dw, by
    ONE_FACTOR_NODES Gauss-Legendre nodes on [−10, 10] (the product as a sum of log1p, so that
    both keep their digits when small)."""
    t, wt = np.polynomial.legendre.leggauss(ONE_FACTOR_NODES)
    w = 10.0 * t
    scale = np.sqrt(1.0 - lam * lam)[None, :, None]
    shift = lam[None, :, None] * w[None, None, :]
    x = xs[:, None, None]
    out = special.ndtr((-x - shift) / scale) + special.ndtr((shift - x) / scale)
    with np.errstate(divide="ignore"):
        log_in = np.log1p(-np.minimum(out, 1.0)).sum(axis=1)
    density = np.exp(-0.5 * w * w) / math.sqrt(2.0 * math.pi) * 10.0 * wt
    return (-np.expm1(log_in) * density).sum(axis=1), (np.exp(log_in) * density).sum(axis=1)


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
    """log h(x) = log(1 − G(x)) − log(2Φ(−x)) of max_i |Z_i|, Z ~ N(0, R), from three
    Chebyshev tables: ``low``, log G against log x on [x_a, x_half] (G rises like x^rank from
    0, which no polynomial in x follows; below x_a, G(x_a) (x / x_a)^rank); ``mid``, log h
    against x on [x_half, x_mid]; ``tail``, the union estimator's log h on [x_mid, x_top],
    constant above. Neighbouring tables share their end value."""

    m: int
    rank: int
    x_a: float
    x_half: float
    x_mid: float
    x_top: float
    low: np.ndarray
    mid: np.ndarray
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
        with np.errstate(divide="ignore"):
            log_x = np.log(np.clip(x, 1e-300, self.x_half))
        log_a, log_half = math.log(self.x_a), math.log(self.x_half)
        log_g = _cheb(self.low, log_a, log_half, np.maximum(log_x, log_a))
        log_g = np.where(log_x < log_a, log_g + self.rank * (log_x - log_a), log_g)
        low = np.log1p(-np.exp(np.minimum(log_g, 0.0))) - log_p1
        mid = _cheb(self.mid, self.x_half, self.x_mid, np.clip(x, self.x_half, self.x_mid))
        tail = _cheb(self.tail, self.x_mid, self.x_top, np.clip(x, self.x_mid, self.x_top))
        value = np.where(x > self.x_mid, tail, np.where(x < self.x_half, low, mid))
        return np.clip(value, 0.0, np.minimum(log_m, -log_p1))  # 1 ≤ h ≤ m, and 1 − G ≤ 1


def _cheb(coef: np.ndarray, lo: float, hi: float, x: np.ndarray) -> np.ndarray:
    """A Chebyshev series on [lo, hi] at x."""
    return chebyshev.chebval((2.0 * x - lo - hi) / (hi - lo), coef)


def _cheb_fit(values: np.ndarray) -> np.ndarray:
    """The Chebyshev interpolant of values at the NODES points of ``_cheb_nodes``."""
    return chebyshev.chebfit(chebyshev.chebpts2(NODES), values, NODES - 1)


def _cheb_nodes(lo: float, hi: float) -> np.ndarray:
    """NODES Chebyshev points of the second kind on [lo, hi], increasing, ends included."""
    return (chebyshev.chebpts2(NODES) + 1.0) / 2.0 * (hi - lo) + lo


@functools.lru_cache(maxsize=16)
def _max_normal_of(corr: bytes, m: int) -> _MaxNormal:
    """``_max_normal`` remembered by the bytes of R: a caller may ask for the same family of
    the same fit again."""
    with single_threaded_blas():  # the same bytes whatever the machine's BLAS threads
        return _max_normal(np.frombuffer(corr, dtype=float).reshape(m, m))


def _max_normal(corr: np.ndarray) -> _MaxNormal:
    """Integrate G once for the family. A pilot SOV pass on a uniform grid places x_a (the last
    point with G + 3 SE < G_FLOOR, or x_half / 50), x_half (G ≥ 1/2) and x_mid (1 − G ≤
    MID_TAIL). The SOV at the Chebyshev nodes of [x_a, x_half] (in log x) and [x_half, x_mid]
    doubles its points until every node's 3 SE is below TARGET_ERROR or the work budget is
    spent; the union estimator covers [x_mid, x_top] (the SOV's error there is a rare event:
    its replicates agree while all of them miss the same mass) and takes the SOV's value at
    x_mid. Where R is close to one-factor (the contrasts with the baseline), its fit,
    integrated exactly, is the SOV's control variate."""
    m = corr.shape[0]
    plan = _plan(corr)
    if plan.rank == 1:
        empty = np.zeros(1)
        return _MaxNormal(m, 1, 1.0, 1.0, 2.0, 3.0, empty, empty, empty, 0.0, plan)
    x_top = float(-special.ndtri(TAIL_FLOOR / (2.0 * m)))
    budget = WORK_BUDGET / (2 * NODES * REPLICATES * plan.cost)
    most = max(POINTS[0], min(POINTS[1], 2 ** math.floor(math.log2(budget))))
    with single_threaded_blas():
        grid = np.linspace(0.0, x_top, PILOT_NODES)
        pilot = _Nodes(plan, grid, SOBOL_SEED + REPLICATES)
        pilot.extend(PILOT_POINTS)
        tails, inside, ses = pilot.estimates()
        low = np.flatnonzero(np.cumprod(inside + 3.0 * ses <= G_FLOOR))
        x_lo = float(grid[low[-1]]) if low.size else 0.0
        above = grid[grid > x_lo]
        x_half = float(max(above[tails[grid > x_lo] <= 0.5][0], above[0]))
        x_mid = float(grid[np.flatnonzero((grid > x_half) & (tails <= MID_TAIL))[0]])
        x_a = x_lo if x_lo > 0 else x_half / 50.0
        lows = np.exp(_cheb_nodes(math.log(x_a), math.log(x_half)))
        nodes = np.concatenate([lows, _cheb_nodes(x_half, x_mid)[1:]])
        lam = _one_factor(corr) if plan.closed == 0 else None
        control = exact = None
        if lam is not None:
            fitted = np.outer(lam, lam) + np.diag(1.0 - lam * lam)
            control, exact = _plan(fitted, plan.pivots), _one_factor_exact(lam, nodes)
        main = _Nodes(plan, nodes, SOBOL_SEED, control)
        # the control's own misses cancel the SOV's, so it starts from fewer points
        main.extend(POINTS[0] if control is None else CONTROL_POINTS)
        tails, inside, ses = main.estimates(exact)
        if control is not None and 2.0 * ses.max() > main.estimates()[2].max():
            main.control = exact = None  # the control does not halve the error: drop it
            tails, inside, ses = main.estimates()
        if main.control is not None:
            most = max(CONTROL_POINTS, most // 2)  # each point costs two integrations
        while 3.0 * ses.max() > TARGET_ERROR and 2 * main.n <= most:
            main.extend(main.n)
            tails, inside, ses = main.estimates(exact)
        far = _cheb_nodes(x_mid, x_top)
        far_tails, far_ses = _union_tails(plan, corr, far)
    far_tails[0] = tails[-1]  # one value at x_mid (the union's would ripple through the rest)

    def log_h(t: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(t, 1e-300)) - (math.log(2.0) + special.log_ndtr(-x))

    k = NODES
    log_g = np.log(np.maximum(inside[:k], 1e-300))
    return _MaxNormal(
        m,
        plan.rank,
        x_a,
        x_half,
        x_mid,
        x_top,
        _cheb_fit(log_g),
        _cheb_fit(log_h(tails[k - 1 :], nodes[k - 1 :])),
        _cheb_fit(log_h(far_tails, far)),
        float(3.0 * max(ses.max(), far_ses.max())),
    )


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


def _critical(
    dist: _MaxNormal, nu: np.ndarray, alpha: float, extra: np.ndarray | float = 0.0
) -> np.ndarray:
    """q with P(max|T| ≥ q) + e p₁(q) = α for each ν (and e, ``extra``: the step-down's tests
    outside the block, §4c.10; 0 for max-t): between the quantiles where p₁ (H + e) is
    p₁ (1 + e) and p₁ (m + e), by the Illinois method on ln p₁(q) + ln(H(q) + e) − ln α, all
    ν at once."""
    e = np.broadcast_to(np.asarray(extra, dtype=float), nu.shape)
    log_e = np.log(np.where(e > 0, e, 1.0))

    def isf(p: np.ndarray) -> np.ndarray:
        return np.where(nu == 0, stats.norm.isf(p), stats.t.isf(p, np.where(nu == 0, 1.0, nu)))

    def excess(q: np.ndarray) -> np.ndarray:
        log_h = _log_ratio(dist, q, nu)
        log_h = np.where(e > 0, np.logaddexp(log_h, log_e), log_h)
        return _log_p1(q, nu) + log_h - math.log(alpha)

    lo, hi = isf(alpha / (2.0 * (1.0 + e))), isf(alpha / (2.0 * (dist.m + e)))
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


# --------------------------------------------------------------------------- the family
def max_t(t: np.ndarray, df: np.ndarray, corr: np.ndarray, alpha: float) -> MaxT:
    """Single-step max-t adjusted p, critical values and marginal levels of a family.

    ``t``: the contrasts' t statistics (|t_j| is t*_j); ``df``: their df (any positive reals;
    ν'_j = ``emmeans_df``); ``corr``: the m x m correlation of the estimates (singular allowed:
    all pairs have rank k − 1). A family of one is the t test itself with its unrounded df (as
    emmeans)."""
    corr = np.atleast_2d(np.asarray(corr, dtype=float))
    df = np.atleast_1d(np.asarray(df, dtype=float))
    m = df.size
    if corr.shape != (m, m) or not np.allclose(corr, corr.T) or not np.allclose(np.diag(corr), 1):
        raise ValueError("corr must be a symmetric m x m correlation matrix")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    stat = np.abs(np.atleast_1d(np.asarray(t, dtype=float)))
    if stat.shape != (m,) or not np.isfinite(stat).all():
        raise ValueError("t must hold m finite statistics")
    nu = emmeans_df(df)
    if m == 1:  # no family (emmeans: no adjustment): the t test with its unrounded df
        nu = np.where(np.isfinite(df), df, 0.0)
    log10_p = _log_p1(stat, nu) / LN10
    if m == 1:
        q = marginal_critical(float(nu[0]), alpha)
        return MaxT(log10_p, 10.0**log10_p, np.array([q]), np.array([alpha]), nu, 0.0, log10_p)
    dist = _max_normal_of(corr.tobytes(), m)
    log10_adj = np.minimum(log10_p + _log_ratio(dist, stat, nu) / LN10, 0.0)
    values, where = np.unique(nu, return_inverse=True)
    critical = _critical(dist, values, alpha)[where]
    level = np.exp(_log_p1(critical, nu))
    return MaxT(log10_adj, 10.0**log10_adj, critical, level, nu, dist.error, log10_p)


def block_levels(
    corr: np.ndarray, df: np.ndarray, alpha: float, extra: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The step-down's u_T (§4c.10) for each contrast j of a max-t block: the critical q_j and
    marginal level u_j = p₁(q_j) with P(max|T| ≥ q_j) + e_j u_j = α, T ~ MVT(0, R, ν'_j),
    e_j = ``extra`` (the tests outside the block at j's step). A block of one is its t test
    with the unrounded df (as :func:`max_t`): u = α / (1 + e)."""
    corr = np.atleast_2d(np.asarray(corr, dtype=float))
    df = np.atleast_1d(np.asarray(df, dtype=float))
    extra = np.atleast_1d(np.asarray(extra, dtype=float))
    m = df.size
    if m == 1:
        nu = np.where(np.isfinite(df), df, 0.0)
        level = alpha / (1.0 + extra)
        q = np.array([marginal_critical(float(nu[0]), float(u)) for u in level])
        return q, level
    nu = emmeans_df(df)
    dist = _max_normal_of(corr.tobytes(), m)
    keys = np.stack([nu, extra], axis=1)
    values, where = np.unique(keys, axis=0, return_inverse=True)
    critical = _critical(dist, values[:, 0], alpha, values[:, 1])[where.ravel()]
    return critical, np.exp(_log_p1(critical, nu))


def marginal_critical(nu: float, alpha: float) -> float:
    """The two-sided critical value at marginal level ``alpha`` with ν df (ν = 0: normal)."""
    return float(stats.norm.isf(alpha / 2.0) if nu == 0 else stats.t.isf(alpha / 2.0, nu))
