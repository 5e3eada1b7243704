"""Compact letter display: systems that no significant difference separates share a letter.

A port of ``multcomp:::insert_absorb`` and ``multcomp:::sweepLetters`` (multcomp 1.4, the
algorithm behind ``multcomp::cld``; Piepho 2004, "An algorithm for a letter-based
representation of all-pairwise comparisons", J. Comput. Graph. Stat. 13:456-466), step for
step, so that the letters equal R's up to relabelling (docs/method.md §4c.6).

Insert: start with one letter shared by all; for each separated pair (a, b) and each letter
both carry, split the letter into one without a and one without b. Absorb: drop a letter whose
systems are a subset of another's. Sweep: drop a system from a letter when every pair the
letter joins it to is joined by another letter too. The letter matrix is a boolean array,
rows = systems, columns = letters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def letter_names(n: int) -> list[str]:
    """multcomp's get_letters: a..z, A..Z, then .a, .b, ... for more than 52."""
    out: list[str] = []
    prefix = ""
    while len(out) < n:
        out += [prefix + c for c in _LETTERS][: n - len(out)]
        prefix += "."
    return out


def _absorb(m: np.ndarray) -> np.ndarray:
    """Remove a column contained in another (the first such pair found, then again).

    multcomp's order: the first pair (j, k > j) in which column k lies within column j (then k
    goes) or column j within column k (then j goes), searched again from the start after each
    removal. Whether one column lies within another does not change as others go, so it is
    found once for all pairs (``outside[k, j]``: the rows of column k outside column j) and
    each search is a scan of that matrix, not a pass over the rows per pair: with letters for
    100 systems, 12 million such passes took 106 s of the decision's 162 s.
    """
    keep = list(range(m.shape[1]))
    if len(keep) <= 1:
        return m
    ones = m.astype(np.int64)
    within = (ones.T @ (1 - ones)) == 0  # within[k, j]: column k lies within column j
    while len(keep) > 1:
        sub = within[np.ix_(keep, keep)]
        pairs = np.flatnonzero(np.triu(sub.T | sub, 1))  # (j, k > j), j first
        if not pairs.size:
            break
        j, k = divmod(int(pairs[0]), len(keep))
        del keep[k if sub[k, j] else j]
    return m[:, keep]


def _sweep_column(mat: np.ndarray, locked: np.ndarray, i: int) -> None:
    """One pass of sweepLetters over column i (modifies ``mat`` and ``locked``)."""
    tmp = np.zeros_like(mat)
    tmp[mat[:, i]] = mat[mat[:, i]]
    one = np.flatnonzero(tmp[:, i])
    others = np.delete(tmp, i, axis=1)
    if np.all(others.any(axis=1)):
        return
    for j in one:
        if locked[j, i]:
            continue
        locks = []
        for k in one:
            if j == k:
                continue
            both = tmp[j] & tmp[k]
            hit = [h for h in np.flatnonzero(both) if h != i]
            if np.any(np.delete(both, i)):
                locks.append(((j, hit[-1]), (k, hit[-1])))
        if locks and len(locks) == len(one) - 1:
            for first, second in locks:
                locked[first] = True
                locked[second] = True
            mat[j, i] = False


def _sweep(mat: np.ndarray) -> np.ndarray:
    """multcomp's sweepLetters: remove redundant letters from rows (and empty columns)."""
    mat = mat.copy()
    locked = np.zeros_like(mat)
    for i in range(mat.shape[1]):
        _sweep_column(mat, locked, i)
        if not mat[:, i].any():
            return _sweep(np.delete(mat, i, axis=1))
    return mat[:, mat.any(axis=0)]


def _reorder(mat: np.ndarray) -> np.ndarray:
    """Columns by size, swept, then by their first row (multcomp's two final passes)."""
    for _ in range(2):
        mat = mat[:, np.argsort(mat.sum(axis=0), kind="stable")]
        mat = _sweep(mat)
        first = np.array([np.flatnonzero(col)[0] for col in mat.T])
        mat = mat[:, np.argsort(first, kind="stable")]
    return mat


def compact_letters(
    rows: Sequence[str], insertion: Sequence[str], separated: Sequence[tuple[str, str]]
) -> dict[str, str]:
    """The letters of each system.

    ``rows``: the systems in display order (the first gets ``a``); ``insertion``: the order of
    the letter matrix during insertion (multcomp: increasing mean); ``separated``: the pairs
    whose adjusted p is below alpha, each (first, second) as in the comparisons' order.
    """
    index = {s: i for i, s in enumerate(insertion)}
    lmat = np.ones((len(insertion), 1), dtype=bool)
    if not separated:
        return {s: "a" for s in rows}
    for a, b in separated:
        shared = np.flatnonzero(lmat[index[a]] & lmat[index[b]])
        if shared.size:
            new = lmat[:, shared].copy()
            new[index[b]] = False
            lmat[index[a], shared] = False
            lmat = _absorb(np.hstack([lmat, new]))
    lmat = _reorder(lmat[[index[s] for s in rows]])
    names = letter_names(lmat.shape[1])
    return {
        s: "".join(n for n, on in zip(names, lmat[i], strict=True) if on)
        for i, s in enumerate(rows)
    }
