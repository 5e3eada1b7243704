"""Choose how to eliminate the random-effect columns: which factor forms the block-diagonal part.

The "primary" factor (usually the segment) and every term nested in it (``s:f``: each level
touches one segment) give a block-diagonal ``Z'Z`` with one small block per primary level;
those blocks are eliminated with batched dense Cholesky factors. The remaining ("rest") terms
form a Schur complement that is small and dense for facets, or sparse when a second large
factor crosses the first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    """The elimination plan for a set of random-intercept terms."""

    primary: int
    block_terms: tuple[int, ...]  # primary first, then terms nested in it
    rest_terms: tuple[int, ...]
    m: int  # block size (1 + nested levels per primary level, padded to the maximum)
    level_slot: tuple[np.ndarray, ...]  # per block term: slot of each of its levels
    level_block: tuple[np.ndarray, ...]  # per block term: primary level of each of its levels
    rest_offsets: tuple[int, ...]  # per rest term: first column in the rest block
    n_rest: int  # number of random-effect columns in the rest block

    @property
    def n_blocks(self) -> int:
        return len(self.level_block[0])


def parent_map(child: np.ndarray, n_child: int, parent: np.ndarray) -> np.ndarray | None:
    """The parent level of each child level when child is nested in parent, else None."""
    first = np.full(n_child, -1, dtype=np.int64)
    head = min(len(child), 4096)  # cheap rejection on the first rows
    first[child[:head][::-1]] = parent[:head][::-1]
    if not np.array_equal(first[child[:head]], parent[:head]):
        return None
    first[child] = parent
    if np.array_equal(first[child], parent):
        return first
    return None


def _candidate(
    k: int, codes: list[np.ndarray], nlevels: list[int], weighted: list[bool]
) -> tuple[list[int], list[np.ndarray], list[np.ndarray], int]:
    """Block terms, slots, blocks and block size when term k is the primary factor."""
    qk = nlevels[k]
    block_terms = [k]
    slots = [np.zeros(qk, dtype=np.int64)]
    blocks = [np.arange(qk, dtype=np.int64)]
    used = np.ones(qk, dtype=np.int64)  # slot 0 is the primary level itself
    for j in range(len(codes)):
        if j == k or nlevels[j] < qk or weighted[j]:
            continue
        parent = parent_map(codes[j], nlevels[j], codes[k])
        if parent is None:
            continue
        order = np.argsort(parent, kind="stable")
        sorted_parent = parent[order]
        starts = np.searchsorted(sorted_parent, sorted_parent, side="left")
        rank = np.empty(nlevels[j], dtype=np.int64)
        rank[order] = np.arange(nlevels[j]) - starts
        slots.append(used[parent] + rank)
        blocks.append(parent)
        used = used + np.bincount(parent, minlength=qk)
        block_terms.append(j)
    return block_terms, slots, blocks, int(used.max())


def choose_layout(
    codes: list[np.ndarray], nlevels: list[int], n_fixed: int, weighted: list[bool] | None = None
) -> Layout:
    """Pick the primary factor that minimizes the estimated work per deviance evaluation.

    Weighted terms (slopes, dummy() terms) always go to the rest block: the block part holds
    plain indicators only.
    """
    flags = list(weighted) if weighted is not None else [False] * len(codes)
    best: tuple[float, Layout] | None = None
    for k in range(len(codes)):
        if flags[k]:
            continue
        block_terms, slots, blocks, m = _candidate(k, codes, nlevels, flags)
        rest = [j for j in range(len(codes)) if j not in block_terms]
        n_rest = sum(nlevels[j] for j in rest)
        w = n_rest + n_fixed + 1
        qk = nlevels[k]
        cost = float(qk) * m**3 + float(qk) * m * w * w + float(w) ** 3
        offsets = np.concatenate([[0], np.cumsum([nlevels[j] for j in rest])]).astype(int)
        layout = Layout(
            primary=k,
            block_terms=tuple(block_terms),
            rest_terms=tuple(rest),
            m=m,
            level_slot=tuple(slots),
            level_block=tuple(blocks),
            rest_offsets=tuple(int(o) for o in offsets[:-1]),
            n_rest=n_rest,
        )
        if best is None or cost < best[0]:
            best = (cost, layout)
    if best is None:
        from infrepro.lmm.errors import LmmError

        raise LmmError("at least one random intercept term (1|g) is needed besides slopes")
    return best[1]
