"""Compiled port of sacrebleu 2.6.0's TER edit search (`sacrebleu/metrics/lib_ter.py`).

The kernel works on integer token ids (equal ids <=> equal strings) and reproduces, step by step:
- `BeamEditDistance`: the beam around the length-ratio "pseudo-diagonal" (width 25, widened for very
  unequal lengths), the full last row, the cost-1 operations and the operation preference on ties
  (no-op/substitution, then deletion, then insertion, with a strict `>` so the first wins);
- `_shift`: candidate pairs in `_find_shifted_pairs` order (hypothesis start, reference start, then
  length up to 10, distance cap 50), the same three filters, the same target positions from the
  flipped trace's alignment, the ranking tuple (gain, length, -start, -target) with first-seen
  winning full ties, and the global cap of 1000 checked candidates;
- `translation_edit_rate`: shifting until no candidate reduces the edit distance.

sacrebleu's prefix-trie cache only saves work (a row depends only on the hypothesis prefix because
all shifted hypotheses have the same length); here the same saving comes from reusing the current
hypothesis' rows up to the first position a candidate changes. Candidates that cannot change the
outcome (their gain cannot reach max(best gain so far, 1)) are abandoned early using a lower bound
on the remaining edit distance; their checked-candidate count is still incremented, exactly as in
sacrebleu, so results are identical.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

INF = 10**16  # sacrebleu's _INT_INFINITY
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000

OP_NOP = 0
OP_SUB = 1
OP_INS = 2  # consumes a reference word (sacrebleu's 'i')
OP_DEL = 3  # consumes a hypothesis word (sacrebleu's 'd')
OP_UNDEF = 4


@jit()
def _bands(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-row column range [lo, hi) that `BeamEditDistance._edit_distance` fills."""
    lo = np.zeros(n + 1, np.int64)
    hi = np.zeros(n + 1, np.int64)
    hi[0] = m + 1
    ratio = m / n if n > 0 else 1.0
    if BEAM_WIDTH < ratio / 2:
        bw = int(math.ceil(ratio / 2 + BEAM_WIDTH))
    else:
        bw = BEAM_WIDTH
    for i in range(1, n + 1):
        pd = int(math.floor(i * ratio))
        lo[i] = max(0, pd - bw)
        hi[i] = min(m + 1, pd + bw)
        if i == n:
            hi[i] = m + 1
    return lo, hi


@jit()
def _row_with_ops(
    hw: int,
    r: np.ndarray,
    prev: np.ndarray,
    plo: int,
    cur: np.ndarray,
    ops: np.ndarray,
    clo: int,
    cw: int,
) -> None:
    """One edit-distance row with the operation chosen in each cell (for the trace)."""
    pw = prev.shape[0]
    left = INF
    for k in range(cw):
        j = clo + k
        if j == 0:
            q = -plo
            pv = prev[q] if 0 <= q < pw else INF
            v = pv + 1
            o = OP_DEL
        else:
            q = j - 1 - plo
            diag = prev[q] if 0 <= q < pw else INF
            up = prev[q + 1] if 0 <= q + 1 < pw else INF
            v = INF
            o = OP_UNDEF
            if hw == r[j - 1]:
                c = diag
                oc = OP_NOP
            else:
                c = diag + 1
                oc = OP_SUB
            if v > c:
                v = c
                o = oc
            if v > up + 1:
                v = up + 1
                o = OP_DEL
            if v > left + 1:
                v = left + 1
                o = OP_INS
        cur[k] = v
        ops[k] = o
        left = v


@jit()
def _row_values(
    hw: int,
    r: np.ndarray,
    prev: np.ndarray,
    plo: int,
    cur: np.ndarray,
    clo: int,
    cw: int,
    rest_h: int,
    m: int,
) -> int:
    """One edit-distance row (values only); returns a lower bound on the final distance."""
    pw = prev.shape[0]
    left = INF
    bound = INF
    for k in range(cw):
        j = clo + k
        if j == 0:
            q = -plo
            pv = prev[q] if 0 <= q < pw else INF
            v = pv + 1
        else:
            q = j - 1 - plo
            diag = prev[q] if 0 <= q < pw else INF
            up = prev[q + 1] if 0 <= q + 1 < pw else INF
            v = diag if hw == r[j - 1] else diag + 1
            if up + 1 < v:
                v = up + 1
            if left + 1 < v:
                v = left + 1
            if v > INF:
                v = INF
        cur[k] = v
        left = v
        gap = rest_h - (m - j)
        if gap < 0:
            gap = -gap
        if v + gap < bound:
            bound = v + gap
    return bound


@jit()
def _perform_shift(
    words: np.ndarray, start: int, length: int, target: int, out: np.ndarray
) -> None:
    """`lib_ter._perform_shift`, Python slice semantics included, written into `out`."""
    n = words.shape[0]
    pos = 0
    if target < start:
        bounds = (0, target, start, start + length, target, start, start + length, n)
    elif target > start + length:
        bounds = (0, start, start + length, target, start, start + length, target, n)
    else:
        bounds = (
            0,
            start,
            start + length,
            length + target,
            start,
            start + length,
            length + target,
            n,
        )
    for s in range(4):
        a = min(bounds[2 * s], n)
        b = min(bounds[2 * s + 1], n)
        for x in range(a, b):
            out[pos] = words[x]
            pos += 1


@jit()
def _candidate_distance(
    cand: np.ndarray,
    r: np.ndarray,
    p: int,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    row0: np.ndarray,
    buf_a: np.ndarray,
    buf_b: np.ndarray,
    max_score: int,
) -> int:
    """Edit distance of a shifted hypothesis reusing the current rows 0..p; -1 if > max_score."""
    n = cand.shape[0]
    m = r.shape[0]
    if p >= n:
        return vals[n, m - lo[n]]
    if p == 0:
        prev = row0
    else:
        prev = vals[p]
    plo = lo[p]
    use_a = True
    for i in range(p + 1, n + 1):
        cur = buf_a if use_a else buf_b
        use_a = not use_a
        cw = hi[i] - lo[i]
        bound = _row_values(
            cand[i - 1], r, prev[: hi[i - 1] - lo[i - 1]], plo, cur, lo[i], cw, n - i, m
        )
        if bound > max_score:
            return -1
        prev = cur
        plo = lo[i]
    return prev[m - lo[n]]


@jit()
def _base_rows(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    ops: np.ndarray,
    row0: np.ndarray,
    first_row: int,
) -> int:
    """Rows first_row..n of the current hypothesis' table (with ops); returns its edit distance."""
    n = cur.shape[0]
    m = r.shape[0]
    for i in range(first_row, n + 1):
        prev = row0 if i == 1 else vals[i - 1]
        _row_with_ops(
            cur[i - 1],
            r,
            prev[: hi[i - 1] - lo[i - 1]],
            lo[i - 1],
            vals[i],
            ops[i],
            lo[i],
            hi[i] - lo[i],
        )
    return m if n == 0 else vals[n, m - lo[n]]


@jit()
def _alignment(
    n: int,
    m: int,
    lo: np.ndarray,
    hi: np.ndarray,
    ops: np.ndarray,
    align: np.ndarray,
    hyp_err: np.ndarray,
    ref_err: np.ndarray,
    herr: np.ndarray,
    rerr: np.ndarray,
) -> bool:
    """`trace_to_alignment(_flip_trace(trace))` from the stored ops; error flags as prefix sums.

    Returns False if the trace meets an undefined cell.
    """
    i = n
    j = m
    while i > 0 or j > 0:
        if i == 0:
            op = OP_INS
        else:
            k = j - lo[i]
            op = ops[i, k] if 0 <= k < hi[i] - lo[i] else OP_UNDEF
        if op == OP_NOP or op == OP_SUB:
            align[j - 1] = i - 1
            e = 0 if op == OP_NOP else 1
            herr[i - 1] = e
            rerr[j - 1] = e
            i -= 1
            j -= 1
        elif op == OP_INS:  # flipped to a deletion: the reference word is unmatched
            align[j - 1] = i - 1
            rerr[j - 1] = 1
            j -= 1
        elif op == OP_DEL:  # flipped to an insertion: the hypothesis word is unmatched
            herr[i - 1] = 1
            i -= 1
        else:
            return False
    for x in range(n):
        hyp_err[x + 1] = hyp_err[x] + herr[x]
    for x in range(m):
        ref_err[x + 1] = ref_err[x] + rerr[x]
    return True


@jit()
def _common_prefix(a: np.ndarray, b: np.ndarray, start: int) -> int:
    """Length of the common prefix of a and b, known to be at least `start`."""
    p = start
    while p < a.shape[0] and a[p] == b[p]:
        p += 1
    return p


@jit()
def _shift_search(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    row0: np.ndarray,
    buf_a: np.ndarray,
    buf_b: np.ndarray,
    cand: np.ndarray,
    align: np.ndarray,
    hyp_err: np.ndarray,
    ref_err: np.ndarray,
    pre_score: int,
    best: np.ndarray,
    checked: int,
) -> int:
    """`lib_ter._shift`: best (gain, length, start, target) into `best`; returns checked count.

    Only shifts with a positive gain are kept (others cannot change the outcome); best[0] == 0
    means no such shift.
    """
    n = cur.shape[0]
    m = r.shape[0]
    best[0] = 0
    best[1] = 0
    best[2] = 0
    best[3] = 0
    for sh in range(n):
        for sr in range(max(0, sh - MAX_SHIFT_DIST), min(m, sh + MAX_SHIFT_DIST + 1)):
            length = 0
            while cur[sh + length] == r[sr + length] and length < MAX_SHIFT_SIZE:
                length += 1
                consumed = n == sh + length or m == sr + length
                if (
                    hyp_err[sh + length] - hyp_err[sh] != 0
                    and ref_err[sr + length] - ref_err[sr] != 0
                    and not (sh <= align[sr] < sh + length)
                ):
                    prev_idx = -1
                    for offset in range(-1, length):
                        idx = 0 if sr + offset == -1 else align[sr + offset] + 1
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        checked += 1
                        threshold = best[0] if best[0] > 1 else 1
                        _perform_shift(cur, sh, length, idx, cand)
                        p = _common_prefix(cand, cur, min(sh, idx))
                        score = _candidate_distance(
                            cand, r, p, lo, hi, vals, row0, buf_a, buf_b, pre_score - threshold
                        )
                        if score < 0:
                            continue
                        gain = pre_score - score
                        if gain < threshold:
                            continue
                        if (
                            best[0] == 0
                            or gain > best[0]
                            or (
                                gain == best[0]
                                and (
                                    length > best[1]
                                    or (
                                        length == best[1]
                                        and (sh < best[2] or (sh == best[2] and idx < best[3]))
                                    )
                                )
                            )
                        ):
                            best[0] = gain
                            best[1] = length
                            best[2] = sh
                            best[3] = idx
                    if checked >= MAX_SHIFT_CANDIDATES:
                        return checked
                if consumed:
                    break
    return checked


@jit()
def ter_edits(h: np.ndarray, r: np.ndarray) -> int:
    """Number of TER edits (shifts + edit distance) of hypothesis ids `h` against reference `r`.

    Returns -1 if the trace meets an undefined cell (sacrebleu raises there; callers defer to it).
    """
    n = h.shape[0]
    m = r.shape[0]
    if m == 0:
        return n
    lo, hi = _bands(n, m)
    width = 1
    for i in range(1, n + 1):
        width = max(width, hi[i] - lo[i])
    vals = np.empty((n + 1, width), np.int64)
    ops = np.empty((n + 1, width), np.int8)
    row0 = np.empty(m + 1, np.int64)  # sacrebleu's initial row: j insertions
    for j in range(m + 1):
        row0[j] = j
    buf_a = np.empty(width, np.int64)
    buf_b = np.empty(width, np.int64)
    cur = h.copy()
    cand = np.empty_like(h)
    align = np.empty(m, np.int64)
    hyp_err = np.zeros(n + 1, np.int64)
    ref_err = np.zeros(m + 1, np.int64)
    herr = np.zeros(n, np.int64)
    rerr = np.zeros(m, np.int64)
    best = np.zeros(4, np.int64)

    # np.int64(...) rather than literals: a literal-typed first argument would make numba compile
    # the callees twice (once for the literal, once for int64)
    checked = np.int64(0)
    shifts = 0
    first_row = np.int64(1)  # rows below first_row are up to date for `cur`
    while True:
        pre_score = _base_rows(cur, r, lo, hi, vals, ops, row0, first_row)
        if not _alignment(n, m, lo, hi, ops, align, hyp_err, ref_err, herr, rerr):
            return -1
        checked = _shift_search(
            cur,
            r,
            lo,
            hi,
            vals,
            row0,
            buf_a,
            buf_b,
            cand,
            align,
            hyp_err,
            ref_err,
            pre_score,
            best,
            checked,
        )
        if checked >= MAX_SHIFT_CANDIDATES or best[0] <= 0:
            return shifts + pre_score
        shifts += 1
        _perform_shift(cur, best[2], best[1], best[3], cand)
        first_row = _common_prefix(cand, cur, min(best[2], best[3])) + 1
        for x in range(n):  # (an explicit loop: slice assignment costs seconds of compile time)
            cur[x] = cand[x]


@jit()
def ter_edits_batch(
    tokens: np.ndarray,
    offsets: np.ndarray,
    pair_h: np.ndarray,
    pair_r: np.ndarray,
    out: np.ndarray,
    k0: int,
    k1: int,
) -> None:
    """`ter_edits` for pairs k0..k1-1 of (hypothesis text, reference text), texts stored as CSR."""
    for k in range(k0, k1):
        a = pair_h[k]
        b = pair_r[k]
        out[k] = ter_edits(tokens[offsets[a] : offsets[a + 1]], tokens[offsets[b] : offsets[b + 1]])
