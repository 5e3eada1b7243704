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

Only the work differs from sacrebleu, never a value. A shift candidate equals the current hypothesis
outside the span [p, e) it rearranges, and all candidates have the hypothesis' length, so the beam
is the same for all of them:
- rows 0..p are the current hypothesis' forward rows D (sacrebleu's prefix-trie cache does the
  same), or the previous candidate's rows where it shares a longer prefix;
- from row e on, the backward rows S (distance from a cell to (n, m)) are the current ones, so the
  candidate's distance is min_j D(e, j) + S(e, j) and only rows p+1..e are computed;
- a candidate whose gain cannot reach max(best gain so far, 1) cannot change the outcome: it is
  abandoned as soon as a lower bound on its distance (row i's D plus a distance transform of S(e))
  shows that. Its checked-candidate count is still incremented, exactly as in sacrebleu.

Rows are stored full width with one leading slot: column j of a row lives at index j + 1, and every
slot a later row reads outside the beam holds INF, so the inner loops need no bounds checks.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

# sacrebleu's _INT_INFINITY is 1e16; any value above every distance behaves the same, and rows are
# int32 (half the memory traffic): INF plus the longest path still fits.
INF = 2**30
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
    cur: np.ndarray,
    ops: np.ndarray,
    lo: int,
    hi: int,
    hi_next: int,
) -> None:
    """One forward row with the operation chosen in each cell (for the trace), columns [lo, hi).

    v = min(INF, diag + [hw != r[j-1]], up + 1, left + 1) with sacrebleu's strict `>` order; the
    slots the next row reads outside [lo, hi) are set to INF.
    """
    left = INF
    for j in range(lo, hi):
        if j == 0:
            v = prev[1] + 1
            o = OP_DEL
        else:
            diag = prev[j]
            up = prev[j + 1]
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
        cur[j + 1] = v
        ops[j] = o
        left = v
    cur[lo] = INF
    for j in range(hi, hi_next):
        cur[j + 1] = INF


@jit()
def _row_values(
    hw: int,
    r: np.ndarray,
    prev: np.ndarray,
    cur: np.ndarray,
    lo: int,
    hi: int,
    hi_next: int,
    rest: np.ndarray,
) -> int:
    """One forward row (values only), columns [lo, hi); returns min_j D(i, j) + rest[j].

    That is a lower bound on the final distance when rest[j] bounds the distance from (i, j) to
    (n, m) from below. Values above INF are not clamped: they stay above every finite distance.
    """
    left = INF
    bound = INF
    j0 = lo
    if lo == 0:
        left = prev[1] + 1
        cur[1] = left
        bound = left + rest[0]
        j0 = 1
    # unsigned indices: numba then skips the negative-index wraparound on every access (3x faster)
    one = np.uint64(1)
    for k in range(hi - j0):
        j = np.uint64(j0 + k)
        v = min(prev[j] + (hw != r[j - one]), prev[j + one] + 1, left + 1)
        cur[j + one] = v
        left = v
        bound = min(bound, v + rest[j])
    cur[lo] = INF
    for j in range(hi, hi_next):
        cur[j + 1] = INF
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
def _suffix_rows(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    suf: np.ndarray,
    top: int,
    e: int,
) -> None:
    """Rows top, top-1, ..., e of S, the banded distance from each cell (i, j) to (n, m).

    S(n, j) = m - j; for i < n, S(i, j) = min(INF, S(i+1, j+1) + [cur[i] != r[j]], S(i+1, j) + 1,
    S(i, j+1) + 1), each term only where its cell is in the beam: the same graph as the forward
    rows, walked backwards. Row top + 1 must already hold S for hypothesis `cur`.
    """
    m = r.shape[0]
    for i in range(top, e - 1, -1):
        nlo = lo[i + 1]
        nhi = hi[i + 1]
        hw = cur[i]
        right = INF
        for j in range(hi[i] - 1, lo[i] - 1, -1):
            v = INF
            if j < m and nlo <= j + 1 < nhi:
                d = suf[i + 1, j + 2]
                c = d if hw == r[j] else d + 1
                if c < v:
                    v = c
            if nlo <= j < nhi:
                d = suf[i + 1, j + 1] + 1
                if d < v:
                    v = d
            if right + 1 < v:
                v = right + 1
            suf[i, j + 1] = v
            right = v


@jit()
def _suffix_ready(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    suf: np.ndarray,
    dt: np.ndarray,
    dt_ok: np.ndarray,
    suf_low: np.ndarray,
    e: int,
) -> None:
    """Make S's row e and its distance transform valid for `cur`, computing only what is missing.

    suf_low[0] is the lowest row of S that is valid; dt_ok[i] says whether dt[i] is.
    """
    if e < suf_low[0]:
        _suffix_rows(cur, r, lo, hi, suf, suf_low[0] - 1, e)
        suf_low[0] = e
    if not dt_ok[e]:
        _distance_transform(suf[e], lo[e], hi[e], dt[e])
        dt_ok[e] = True


@jit()
def _distance_transform(s: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
    """out[x] = min_j |x - j| + S(j) over the beam columns lo <= j < hi (S(j) = s[j + 1]).

    For a cell (i, j) of a candidate whose rows from e on are the current ones, the distance to
    (n, m) is at least out[j + e - i]: the e - i rows before row e cost at least |e - i - (j' - j)|
    to reach column j' of row e, and S(e, j') from there. It also bounds |(n - i) - (m - j)|.
    """
    big = INF
    for x in range(out.shape[0]):
        v = big
        if lo <= x < hi and s[x + 1] < v:
            v = s[x + 1]
        out[x] = v
        big = v + 1
    big = INF
    for x in range(out.shape[0] - 1, -1, -1):
        if big < out[x]:
            out[x] = big
        big = out[x] + 1


@jit()
def _myers(
    eq: np.ndarray, p: int, m: int, vp: np.uint64, vn: np.uint64, score: int
) -> tuple[np.uint64, np.uint64, int]:
    """Myers' bit-vector Levenshtein distance (Hyyrö's global form), words p.. of a hypothesis.

    The reference (m <= 64 words) is the bit pattern; eq[i] has bit j set iff hypothesis word i
    equals reference word j. (vp, vn) are the +1/-1 vertical deltas of the current column and
    `score` its last cell, the distance of the hypothesis prefix so far to the whole reference.
    Unbanded, so never above the beam's distance: a lower bound that rejects candidates cheaply.
    """
    top = np.uint64(1) << np.uint64(m - 1)
    one = np.uint64(1)
    for i in range(p, eq.shape[0]):
        e = eq[i]
        xv = e | vn
        xh = (((e & vp) + vp) ^ vp) | e
        ph = vn | ~(xh | vp)
        mh = vp & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = (ph << one) | one  # the first row grows by one per hypothesis word
        mh = mh << one
        vp = mh | ~(xv | ph)
        vn = ph & xv
    return vp, vn, score


@jit()
def _myers_prefixes(eq: np.ndarray, m: int, vp: np.ndarray, vn: np.ndarray, sc: np.ndarray) -> None:
    """Myers' state after each prefix of the current hypothesis (index i: after i words)."""
    vp[0] = ~np.uint64(0)
    vn[0] = np.uint64(0)
    sc[0] = m
    for i in range(eq.shape[0]):
        a, b, c = _myers(eq[i : i + 1], 0, m, vp[i], vn[i], sc[i])
        vp[i + 1] = a
        vn[i + 1] = b
        sc[i + 1] = c


@jit()
def _common_suffix_start(a: np.ndarray, b: np.ndarray, stop: int) -> int:
    """Smallest e >= stop with a[e:] == b[e:]."""
    e = a.shape[0]
    while e > stop and a[e - 1] == b[e - 1]:
        e -= 1
    return e


@jit()
def _candidate_distance(
    cand: np.ndarray,
    r: np.ndarray,
    p: int,
    e: int,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    suf: np.ndarray,
    dt: np.ndarray,
    last: np.ndarray,
    last_vals: np.ndarray,
    last_state: np.ndarray,
    max_score: int,
) -> int:
    """Edit distance of a shifted hypothesis; -1 if it exceeds max_score.

    `cand` equals the current hypothesis before position p and from position e on, so its rows
    0..p are the current rows `vals` and its suffix distances from row e on are the current `suf`.
    Rows p+1..e are computed, and the distance is min_j D(e, j) + S(e, j): every path from (0, 0)
    to (n, m) crosses row e, and D + S is exact on its cells and an upper bound elsewhere.
    Rows already computed for the previous candidate `last` (rows last_state[0]+1..last_state[1]
    of `last_vals`) are reused where the two candidates share a prefix; the new candidate's rows
    are stored there in turn (sacrebleu's prefix cache, kept for one candidate).
    """
    n = cand.shape[0]
    m = r.shape[0]
    if p >= n:
        return vals[n, m + 1]
    start = p
    shared = p
    valid = last_state[1]
    if valid > p and last_state[0] == p:  # else `last` cannot share more than p words
        q = p
        while q < valid and cand[q] == last[q]:
            q += 1
        if q > p:
            shared = q
            start = min(q, e)
    for x in range(start, n):
        last[x] = cand[x]
    prev = vals[p] if start == p else last_vals[start]
    last_state[0] = p
    last_state[1] = shared
    for i in range(start + 1, e + 1):
        row = last_vals[i]
        hi_next = hi[i + 1] if i < n else hi[i]
        bound = _row_values(cand[i - 1], r, prev, row, lo[i], hi[i], hi_next, dt[e, e - i :])
        last_state[1] = i
        if bound > max_score:
            return -1
        prev = row
    best = INF
    for j in range(lo[e], hi[e]):
        s = prev[j + 1] + suf[e, j + 1]
        if s < best:
            best = s
    if best > max_score:
        return -1
    return best


@jit()
def _base_rows(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    ops: np.ndarray,
    first_row: int,
) -> int:
    """Rows first_row..n of the current hypothesis' table (with ops); returns its edit distance."""
    n = cur.shape[0]
    m = r.shape[0]
    for i in range(first_row, n + 1):
        hi_next = hi[i + 1] if i < n else hi[i]
        _row_with_ops(cur[i - 1], r, vals[i - 1], vals[i], ops[i], lo[i], hi[i], hi_next)
    return m if n == 0 else vals[n, m + 1]


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
            op = ops[i, j] if lo[i] <= j < hi[i] else OP_UNDEF
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
    suf: np.ndarray,
    dt: np.ndarray,
    dt_ok: np.ndarray,
    suf_low: np.ndarray,
    last: np.ndarray,
    last_vals: np.ndarray,
    last_state: np.ndarray,
    cand: np.ndarray,
    eq: np.ndarray,
    cand_eq: np.ndarray,
    bp_vp: np.ndarray,
    bp_vn: np.ndarray,
    bp_sc: np.ndarray,
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
                        if eq.shape[0] > 0 and p < n:  # the unbanded distance rejects first
                            _perform_shift(eq, sh, length, idx, cand_eq)
                            lower = _myers(cand_eq, p, m, bp_vp[p], bp_vn[p], bp_sc[p])[2]
                            if lower > pre_score - threshold:
                                continue
                        e = _common_suffix_start(cand, cur, p)
                        if p < n:
                            _suffix_ready(cur, r, lo, hi, suf, dt, dt_ok, suf_low, e)
                        score = _candidate_distance(
                            cand,
                            r,
                            p,
                            e,
                            lo,
                            hi,
                            vals,
                            suf,
                            dt,
                            last,
                            last_vals,
                            last_state,
                            pre_score - threshold,
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
    vals = np.full((n + 1, m + 2), INF, np.int32)
    for j in range(m + 1):  # sacrebleu's initial row: j insertions
        vals[0, j + 1] = j
    ops = np.empty((n + 1, m + 1), np.int8)
    suf = np.full((n + 1, m + 2), INF, np.int32)
    dt = np.empty((n + 1, n + m + 2), np.int32)
    dt_ok = np.zeros(n + 1, np.bool_)
    suf_low = np.full(1, n, np.int64)  # S's rows suf_low..n are valid; row n needs no words
    for j in range(lo[n], hi[n]):
        suf[n, j + 1] = m - j
    last = np.empty_like(h)
    last_vals = np.full((n + 1, m + 2), INF, np.int32)
    last_state = np.zeros(2, np.int64)
    cur = h.copy()
    cand = np.empty_like(h)
    # Myers' filter needs the reference in one 64-bit word; eq is empty (no filter) otherwise
    eq = np.zeros(n if m <= 64 else 0, np.uint64)
    for i in range(eq.shape[0]):
        for j in range(m):
            if h[i] == r[j]:
                eq[i] |= np.uint64(1) << np.uint64(j)
    cand_eq = np.empty_like(eq)
    bp_vp = np.empty(n + 1, np.uint64)
    bp_vn = np.empty(n + 1, np.uint64)
    bp_sc = np.empty(n + 1, np.int64)
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
        pre_score = _base_rows(cur, r, lo, hi, vals, ops, first_row)
        if not _alignment(n, m, lo, hi, ops, align, hyp_err, ref_err, herr, rerr):
            return -1
        if eq.shape[0] > 0:
            _myers_prefixes(eq, m, bp_vp, bp_vn, bp_sc)
        last_state[1] = 0  # the previous candidate's rows belong to the old hypothesis
        checked = _shift_search(
            cur,
            r,
            lo,
            hi,
            vals,
            suf,
            dt,
            dt_ok,
            suf_low,
            last,
            last_vals,
            last_state,
            cand,
            eq,
            cand_eq,
            bp_vp,
            bp_vn,
            bp_sc,
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
        last_row = _common_suffix_start(cand, cur, first_row - 1) - 1
        # S's rows above last_row (and their transforms) do not see the shifted words
        suf_low[0] = max(suf_low[0], last_row + 1)
        for x in range(last_row + 1):
            dt_ok[x] = False
        for x in range(n):  # (an explicit loop: slice assignment costs seconds of compile time)
            cur[x] = cand[x]
        if eq.shape[0] > 0:
            _perform_shift(eq, best[2], best[1], best[3], cand_eq)
            for x in range(n):
                eq[x] = cand_eq[x]


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
