"""The step-down procedure over a family of mixed tests (docs/method.md §4c.10, the default).

Holm's steps on the marginal p, where the members of a max-t block (M's t tests) are bounded by
their single-step max-t adjusted p over the block plus the union bound for the other tests
still in the set:

    f_j(S) = n_S p_j                                  j outside the block
    f_j(S) = min(n_S p_j, p̃ᴮ_j + n_C(S) p_j)          j in the block

Each step takes the member of the remaining set with the smallest bound; adjusted p are the
running maximum. Pure arithmetic on log10 p: the block's p̃ᴮ come from
:func:`infrepro.stats.simultaneous.max_t`, its levels from ``block_levels``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infrepro.stats.pvalues import LN10


@dataclass(frozen=True)
class StepDown:
    """A family's step-down, per contrast j: ``log10_p_adjusted`` (p̃_j, at most 0);
    ``rejected`` (p̃_j < α); ``size`` and ``others``: n_S and n_C(S) of the set whose bound
    gives j's interval its level (its own step if rejected, the first step not rejected
    otherwise); ``step``: the step (1-based) that took j."""

    log10_p_adjusted: np.ndarray
    rejected: np.ndarray
    size: np.ndarray
    others: np.ndarray
    step: np.ndarray


def _log10_bound(
    log10_p: np.ndarray, log10_block: np.ndarray, size: int, others: int
) -> np.ndarray:
    """log10 f_j(S) for a set of ``size`` members, ``others`` of them outside the block
    (``log10_block`` NaN for those)."""
    bound = log10_p + math.log10(size)
    block = ~np.isnan(log10_block)
    if block.any():
        joint = log10_block[block]
        if others:  # in logs: p below 1e-308 still orders the steps
            joint = np.logaddexp(joint * LN10, math.log(others) + log10_p[block] * LN10) / LN10
        bound[block] = np.fmin(bound[block], joint)
    return bound


def step_down(log10_p: np.ndarray, log10_block: np.ndarray, alpha: float) -> StepDown:
    """The step-down of §4c.10. ``log10_p``: the marginal p of the family's contrasts (for a
    block member the p max-t reads); ``log10_block``: p̃ᴮ_j for the block's members, NaN for
    the others. Ties between equal bounds go to the earlier contrast."""
    log10_p = np.asarray(log10_p, dtype=float)
    log10_block = np.asarray(log10_block, dtype=float)
    m = log10_p.size
    outside = np.isnan(log10_block)
    adjusted = np.zeros(m)
    size, others, step = (np.zeros(m, dtype=int) for _ in range(3))
    left = np.ones(m, dtype=bool)
    running = -math.inf
    cut = math.log10(alpha)
    stopped: tuple[int, int] | None = None
    for k in range(m):
        members = np.flatnonzero(left)
        n_s, n_c = members.size, int(outside[members].sum())
        bound = _log10_bound(log10_p[members], log10_block[members], n_s, n_c)
        j = int(members[int(np.argmin(bound))])
        running = max(running, float(bound.min()))
        adjusted[j] = min(running, 0.0)
        step[j] = k + 1
        if stopped is None and running >= cut:
            stopped = (n_s, n_c)
        size[j], others[j] = stopped or (n_s, n_c)
        left[j] = False
    return StepDown(adjusted, adjusted < cut, size, others, step)


def step_levels(
    result: StepDown, in_block: np.ndarray, block_level: np.ndarray, alpha: float
) -> np.ndarray:
    """Each contrast's marginal level u_j (§4c.10, intervals): α / n_S outside the block,
    max(α / n_S, u_T) in it (``block_level``: u_T at the contrast's n_C(S), NaN outside)."""
    union = alpha / result.size
    return np.where(in_block, np.fmax(union, block_level), union)
