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

from infrepro.metrics._jit import jit

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
def _shift_span(start: int, length: int, target: int, n: int, src: np.ndarray) -> tuple[int, int]:
    """`_perform_shift` as positions: writes src[x] (the current position of the shifted
    hypothesis' word x) for the span [a, b) it rearranges, and returns (a, b); outside the span
    the words stay where they are (src must hold x there)."""
    if target < start:
        a, b = target, start + length
        u1, v1, u2, v2 = start, start + length, target, start
    elif target > start + length:
        a, b = start, target
        u1, v1, u2, v2 = start + length, target, start, start + length
    else:
        a, b = start, min(length + target, n)
        u1, v1, u2, v2 = start + length, b, start, start + length
    x = a
    for y in range(u1, v1):
        src[x] = y
        x += 1
    for y in range(u2, v2):
        src[x] = y
        x += 1
    return a, b


@jit()
def _myers_word(eq: np.ndarray, vp: np.ndarray, vn: np.ndarray) -> None:
    """One hypothesis word of Myers' bit-vector Levenshtein distance (Hyyro's global form, in
    64-bit blocks as edlib's `calculateBlock`), updating (vp, vn) in place.

    The reference is the bit pattern: block w, bit b stands for reference word 64 w + b, and eq[w]
    has the bits of the reference words equal to this hypothesis word. vp / vn mark the +1 / -1
    vertical deltas D(i, j + 1) - D(i, j) of the current column i, whose first cell D(i, 0) = i
    grows by one per hypothesis word (+1 into block 0); a block passes its last row's horizontal
    delta to the next. Branch-free: the carries are 0/1 masks.
    """
    one = np.uint64(1)
    high = np.uint64(63)
    h_pos = one  # horizontal delta into the block: +1 ...
    h_neg = np.uint64(0)  # ... or -1
    for w in range(eq.shape[0]):
        e = eq[w]
        pv = vp[w]
        mv = vn[w]
        xv = e | mv
        e |= h_neg
        xh = (((e & pv) + pv) ^ pv) | e
        ph = mv | ~(xh | pv)
        mh = pv & xh
        out_pos = (ph >> high) & one
        out_neg = (mh >> high) & one
        ph = (ph << one) | h_pos
        mh = (mh << one) | h_neg
        vp[w] = mh | ~(xv | ph)
        vn[w] = ph & xv
        h_pos = out_pos
        h_neg = out_neg


@jit()
def _popcount(x: np.uint64) -> int:
    """Number of set bits (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@jit()
def _myers_distance(n: int, vp: np.ndarray, vn: np.ndarray, last_mask: np.uint64) -> int:
    """D(n, m) from column n's deltas: n + (+1 deltas) - (-1 deltas) over the m reference rows
    (the last block's bits above m - 1 are padding, masked off)."""
    d = n
    last = vp.shape[0] - 1
    for w in range(last + 1):
        mask = last_mask if w == last else ~np.uint64(0)
        d += _popcount(vp[w] & mask) - _popcount(vn[w] & mask)
    return d


@jit()
def _myers_prefixes(eq: np.ndarray, vp: np.ndarray, vn: np.ndarray, start: int) -> None:
    """Myers' state after each prefix of the current hypothesis (row i: after i words), rows
    start + 1..n (rows up to `start` are up to date)."""
    for w in range(vp.shape[1]):
        vp[0, w] = ~np.uint64(0)
        vn[0, w] = np.uint64(0)
    for i in range(start, eq.shape[0]):
        for w in range(vp.shape[1]):
            vp[i + 1, w] = vp[i, w]
            vn[i + 1, w] = vn[i, w]
        _myers_word(eq[i], vp[i + 1], vn[i + 1])


@jit()
def _myers_lower_bound(
    eq: np.ndarray,
    src: np.ndarray,
    p: int,
    last_mask: np.uint64,
    bp_vp: np.ndarray,
    bp_vn: np.ndarray,
    vp: np.ndarray,
    vn: np.ndarray,
) -> int:
    """Unbanded Levenshtein distance of the shifted hypothesis (word x is current word src[x]),
    which equals the current one before position p: a lower bound on its beam distance."""
    n = src.shape[0]
    for w in range(vp.shape[0]):
        vp[w] = bp_vp[p, w]
        vn[w] = bp_vn[p, w]
    for x in range(p, n):
        _myers_word(eq[src[x]], vp, vn)
    return _myers_distance(n, vp, vn, last_mask)


@jit()
def _candidate_distance(
    cand: np.ndarray,
    r: np.ndarray,
    p: int,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    last: np.ndarray,
    work: np.ndarray,
    last_state: np.ndarray,
    absd: np.ndarray,
    max_score: int,
) -> int:
    """Beam edit distance of a shifted hypothesis; -1 when it exceeds max_score.

    `cand` equals the current hypothesis before position p, so its rows 0..p are the current rows
    `vals`; rows p+1..n are computed into `work`. Rows already computed for the previous
    candidate `last` (rows last_state[0]+1..last_state[1] of `work`) are reused where the two
    share a prefix (sacrebleu's prefix cache, kept for one candidate). A row's bound adds
    |(n - i) - (m - j)|, the least cost from cell (i, j) to (n, m), read from `absd`.
    """
    n = cand.shape[0]
    m = r.shape[0]
    start = p
    valid = last_state[1]
    if valid > p and last_state[0] == p:  # else `last` cannot share more than p words
        while start < valid and cand[start] == last[start]:
            start += 1
    for x in range(start, n):
        last[x] = cand[x]
    prev = vals[p] if start == p else work[start]
    last_state[0] = p
    last_state[1] = start
    for i in range(start + 1, n + 1):
        row = work[i]
        hi_next = hi[i + 1] if i < n else hi[i]
        bound = _row_values(cand[i - 1], r, prev, row, lo[i], hi[i], hi_next, absd[2 * n - i :])
        last_state[1] = i
        if bound > max_score:
            return -1
        prev = row
    # a candidate whose words equal the previous candidate's to the end reuses all its rows and
    # computes none: its distance (that candidate's) must still be held to max_score
    return prev[m + 1] if prev[m + 1] <= max_score else -1


@jit()
def _base_rows(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    rest: np.ndarray,
    first_row: int,
) -> int:
    """Rows first_row..n of the current hypothesis' table; returns its edit distance (`rest`:
    any array of m + 1 values; `_row_values`' bound is not needed here)."""
    n = cur.shape[0]
    m = r.shape[0]
    for i in range(first_row, n + 1):
        hi_next = hi[i + 1] if i < n else hi[i]
        _row_values(cur[i - 1], r, vals[i - 1], vals[i], lo[i], hi[i], hi_next, rest)
    return m if n == 0 else vals[n, m + 1]


@jit()
def _alignment(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    align: np.ndarray,
    hyp_err: np.ndarray,
    ref_err: np.ndarray,
    herr: np.ndarray,
    rerr: np.ndarray,
) -> bool:
    """`trace_to_alignment(_flip_trace(trace))`; error flags as prefix sums.

    Each cell's operation is recomputed from the stored values as `BeamEditDistance` chose it:
    v = INF, then no-op/substitution, deletion, insertion, each taken only if strictly below v
    (values at or above INF, unclamped here, compare as INF does). Returns False if the trace
    meets an undefined cell.
    """
    n = cur.shape[0]
    m = r.shape[0]
    i = n
    j = m
    while i > 0 or j > 0:
        if i == 0:
            op = OP_INS
        elif j < lo[i] or j >= hi[i]:
            op = OP_UNDEF
        elif j == 0:
            op = OP_DEL
        else:
            same = cur[i - 1] == r[j - 1]
            v = INF
            op = OP_UNDEF
            c = vals[i - 1, j] + (0 if same else 1)
            if v > c:
                v = c
                op = OP_NOP if same else OP_SUB
            if v > vals[i - 1, j + 1] + 1:
                v = vals[i - 1, j + 1] + 1
                op = OP_DEL
            if v > vals[i, j] + 1:
                op = OP_INS
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
def _candidates(
    cur: np.ndarray,
    r: np.ndarray,
    eq: np.ndarray,
    align: np.ndarray,
    hyp_err: np.ndarray,
    ref_err: np.ndarray,
    checked: int,
    cands: np.ndarray,
) -> tuple[int, int]:
    """`lib_ter._shift`'s candidates in its order, as rows (start, length, target) of `cands`.

    Returns (checked candidates so far, candidates of this round). Candidates are counted as
    sacrebleu counts them; once the count reaches MAX_SHIFT_CANDIDATES the round stops there, and
    sacrebleu then ends the search without applying its best shift, so no distance is needed.
    `_find_shifted_pairs` visits every (start_h, start_r) within MAX_SHIFT_DIST; only those whose
    first words are equal yield anything, so start_r runs over the set bits of eq[start_h]
    (ascending, as sacrebleu's loop).
    """
    n = cur.shape[0]
    m = r.shape[0]
    one = np.uint64(1)
    k = 0
    for sh in range(n):
        r0 = max(0, sh - MAX_SHIFT_DIST)
        r1 = min(m, sh + MAX_SHIFT_DIST + 1)
        for w in range(r0 // 64, (r1 + 63) // 64):
            bits = eq[sh, w]
            if r0 > 64 * w:  # drop reference words before r0 and from r1 on
                bits &= ~np.uint64(0) << np.uint64(r0 - 64 * w)
            if r1 < 64 * (w + 1):
                bits &= (one << np.uint64(r1 - 64 * w)) - one
            while bits:
                sr = 64 * w + _popcount((bits & (~bits + one)) - one)  # the lowest set bit
                bits &= bits - one
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
                            cands[k, 0] = sh
                            cands[k, 1] = length
                            cands[k, 2] = idx
                            k += 1
                        if checked >= MAX_SHIFT_CANDIDATES:
                            return checked, k
                    if consumed:
                        break
    return checked, k


@jit()
def _ranks_above(
    g: int, ln: int, sh: int, idx: int, g2: int, ln2: int, sh2: int, idx2: int
) -> bool:
    """Whether shift (g, ln, sh, idx) ranks above (g2, ln2, sh2, idx2) in sacrebleu's ranking
    tuple (gain, length, -start, -target)."""
    if g != g2:
        return g > g2
    if ln != ln2:
        return ln > ln2
    if sh != sh2:
        return sh < sh2
    return idx < idx2


@jit()
def _myers4(
    eq: np.ndarray,
    s0: np.ndarray,
    s1: np.ndarray,
    s2: np.ndarray,
    s3: np.ndarray,
    x0: int,
    pv: np.uint64,
    mv: np.uint64,
    last_mask: np.uint64,
) -> tuple[int, int, int, int]:
    """Unbanded distances of four shifted hypotheses (word x of hypothesis l is current word
    s_l[x]) that equal the current one before x0, whose Myers state there is (pv, mv); a
    one-block reference (eq: one word per hypothesis word). The four independent chains run
    interleaved: one chain is bound by its latency, four fill the core's ALUs."""
    one = np.uint64(1)
    pv0 = pv1 = pv2 = pv3 = pv
    mv0 = mv1 = mv2 = mv3 = mv
    # unsigned indices (the positions are uint64): no negative-index wraparound on each access
    for k in range(s0.shape[0] - x0):
        x = np.uint64(x0 + k)
        e0 = eq[s0[x]]
        e1 = eq[s1[x]]
        e2 = eq[s2[x]]
        e3 = eq[s3[x]]
        xv0 = e0 | mv0
        xv1 = e1 | mv1
        xv2 = e2 | mv2
        xv3 = e3 | mv3
        xh0 = (((e0 & pv0) + pv0) ^ pv0) | e0
        xh1 = (((e1 & pv1) + pv1) ^ pv1) | e1
        xh2 = (((e2 & pv2) + pv2) ^ pv2) | e2
        xh3 = (((e3 & pv3) + pv3) ^ pv3) | e3
        ph0 = ((mv0 | ~(xh0 | pv0)) << one) | one
        ph1 = ((mv1 | ~(xh1 | pv1)) << one) | one
        ph2 = ((mv2 | ~(xh2 | pv2)) << one) | one
        ph3 = ((mv3 | ~(xh3 | pv3)) << one) | one
        mh0 = (pv0 & xh0) << one
        mh1 = (pv1 & xh1) << one
        mh2 = (pv2 & xh2) << one
        mh3 = (pv3 & xh3) << one
        pv0 = mh0 | ~(xv0 | ph0)
        pv1 = mh1 | ~(xv1 | ph1)
        pv2 = mh2 | ~(xv2 | ph2)
        pv3 = mh3 | ~(xv3 | ph3)
        mv0 = ph0 & xv0
        mv1 = ph1 & xv1
        mv2 = ph2 & xv2
        mv3 = ph3 & xv3
    n = s0.shape[0]
    return (
        n + _popcount(pv0 & last_mask) - _popcount(mv0 & last_mask),
        n + _popcount(pv1 & last_mask) - _popcount(mv1 & last_mask),
        n + _popcount(pv2 & last_mask) - _popcount(mv2 & last_mask),
        n + _popcount(pv3 & last_mask) - _popcount(mv3 & last_mask),
    )


@jit()
def _bound_candidates(
    cur: np.ndarray,
    eq: np.ndarray,
    last_mask: np.uint64,
    bp_vp: np.ndarray,
    bp_vn: np.ndarray,
    vp: np.ndarray,
    vn: np.ndarray,
    srcs: np.ndarray,
    cands: np.ndarray,
    order: np.ndarray,
    k: int,
    pool: np.ndarray,
    pooled: int,
    pre_score: int,
) -> int:
    """Add to `pool` (after its first `pooled` rows) candidates cands[order[:k]] whose gain can
    be positive, as rows (start, length, target, upper bound on the gain: pre_score minus Myers'
    unbanded distance); returns the new number of pool rows.

    Four candidates at a time: each one's positions in srcs[l] (identity outside its span, and
    restored after), its first differing word p (n if its words equal the current ones: gain 0),
    and the four distances in one interleaved pass from the smallest p.
    """
    n = cur.shape[0]
    eq1 = eq.reshape(eq.shape[0] * eq.shape[1])  # one block: eq1[i] = eq[i, 0]
    ps = np.empty(4, np.int64)
    spans = np.empty((4, 2), np.int64)
    dist = np.empty(4, np.int64)
    t = 0
    while t < k:
        lanes = min(4, k - t)
        x0 = n
        for lane in range(lanes):
            c = order[t + lane]
            a, b = _shift_span(cands[c, 0], cands[c, 1], cands[c, 2], n, srcs[lane])
            spans[lane, 0] = a
            spans[lane, 1] = b
            p = a
            while p < b and cur[srcs[lane, p]] == cur[p]:
                p += 1
            ps[lane] = n if p == b else p
            x0 = min(x0, ps[lane])
        if x0 < n and vp.shape[0] == 1:
            d0, d1, d2, d3 = _myers4(
                eq1,
                srcs[0],
                srcs[min(1, lanes - 1)],
                srcs[min(2, lanes - 1)],
                srcs[min(3, lanes - 1)],
                x0,
                bp_vp[x0, 0],
                bp_vn[x0, 0],
                last_mask,
            )
            dist[0] = d0
            dist[1] = d1
            dist[2] = d2
            dist[3] = d3
        elif x0 < n:
            for lane in range(lanes):
                if ps[lane] < n:
                    dist[lane] = _myers_lower_bound(
                        eq, srcs[lane], ps[lane], last_mask, bp_vp, bp_vn, vp, vn
                    )
        for lane in range(lanes):
            for x in range(spans[lane, 0], spans[lane, 1]):
                srcs[lane, x] = x
            if ps[lane] < n and pre_score - dist[lane] >= 1:
                for col in range(3):
                    pool[pooled, col] = cands[order[t + lane], col]
                pool[pooled, 3] = pre_score - dist[lane]
                pooled += 1
        t += lanes
    return pooled


@jit()
def _resolve(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    last: np.ndarray,
    work: np.ndarray,
    last_state: np.ndarray,
    absd: np.ndarray,
    cand: np.ndarray,
    pool: np.ndarray,
    pooled: int,
    pre_score: int,
    best: np.ndarray,
    stop_gain: int,
    stop_length: int,
) -> int:
    """Exact (beam) distances of pool candidates, best-ranked bound first, into `best`.

    best[0:4] is the best-ranked shift found with a positive gain (best[0] == 0: none yet);
    best[4] is 1 if `work` holds its rows (it was the last candidate computed). A candidate is
    computed only while its bound ranks above `best`, and only while its (bound, length) is at
    least (stop_gain, stop_length), the most any candidate not yet bounded could reach; returns
    the number of pool rows left (0 once none can rank above `best`).
    """
    while pooled > 0:
        t = 0
        for u in range(1, pooled):
            if _ranks_above(
                pool[u, 3],
                pool[u, 1],
                pool[u, 0],
                pool[u, 2],
                pool[t, 3],
                pool[t, 1],
                pool[t, 0],
                pool[t, 2],
            ):
                t = u
        sh = pool[t, 0]
        length = pool[t, 1]
        idx = pool[t, 2]
        bound = pool[t, 3]
        if best[0] > 0 and not _ranks_above(
            bound, length, sh, idx, best[0], best[1], best[2], best[3]
        ):
            return 0
        if bound < stop_gain or (bound == stop_gain and length < stop_length):
            return pooled
        pooled -= 1
        for c in range(4):
            pool[t, c] = pool[pooled, c]
        # the least gain that ranks above `best`
        need = 1
        if best[0] > 0:
            ties_win = _ranks_above(best[0], length, sh, idx, best[0], best[1], best[2], best[3])
            need = best[0] if ties_win else best[0] + 1
        _perform_shift(cur, sh, length, idx, cand)
        p = _common_prefix(cand, cur, min(sh, idx))
        score = _candidate_distance(
            cand, r, p, lo, hi, vals, last, work, last_state, absd, pre_score - need
        )
        best[4] = 0
        if score >= 0:
            best[0] = pre_score - score
            best[1] = length
            best[2] = sh
            best[3] = idx
            best[4] = 1
    return 0


@jit()
def _jump(start: int, length: int, target: int, n: int) -> int:
    """The number of words a shift moves its block past (`_shift_span`'s other segment)."""
    if target < start:
        return start - target
    if target > start + length:
        return target - start - length
    return min(length + target, n) - start - length


@jit()
def _best_shift(
    cur: np.ndarray,
    r: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    vals: np.ndarray,
    last: np.ndarray,
    work: np.ndarray,
    last_state: np.ndarray,
    absd: np.ndarray,
    cand: np.ndarray,
    eq: np.ndarray,
    last_mask: np.uint64,
    bp_vp: np.ndarray,
    bp_vn: np.ndarray,
    vp: np.ndarray,
    vn: np.ndarray,
    srcs: np.ndarray,
    cands: np.ndarray,
    k: int,
    order: np.ndarray,
    pool: np.ndarray,
    pre_score: int,
    best: np.ndarray,
) -> None:
    """`lib_ter._shift`'s best shift among the round's k candidates into `best` (`_resolve`).

    A shift of a block of L words past D others is at most 2 min(L, D) edits away from the
    current hypothesis, so its gain is at most excess + 2 min(L, D), where excess is the beam
    distance minus the unbanded one (usually 0). Candidates are bounded (Myers) longest blocks
    first; one whose cheap bound cannot rank above the best exact shift found is skipped, and
    exact distances are computed as soon as a bound ranks above every cheap bound left.
    """
    n = cur.shape[0]
    for c in range(5):
        best[c] = 0
    last_state[1] = 0  # the previous round's rows belong to another hypothesis
    excess = pre_score - _myers_distance(n, bp_vp[n], bp_vn[n], last_mask)
    pooled = 0
    for length in range(MAX_SHIFT_SIZE, 0, -1):
        count = 0
        for t in range(k):
            if cands[t, 1] != length:
                continue
            sh = cands[t, 0]
            idx = cands[t, 2]
            cheap = excess + 2 * min(length, _jump(sh, length, idx, n))
            if cheap < 1 or (
                best[0] > 0
                and not _ranks_above(cheap, length, sh, idx, best[0], best[1], best[2], best[3])
            ):
                continue
            order[count] = t
            count += 1
        pooled = _bound_candidates(
            cur, eq, last_mask, bp_vp, bp_vn, vp, vn, srcs, cands, order, count, pool, pooled,
            pre_score,
        )  # fmt: skip
        pooled = _resolve(
            cur, r, lo, hi, vals, last, work, last_state, absd, cand, pool, pooled, pre_score,
            best, excess + 2 * (length - 1), length - 1,
        )  # fmt: skip
    _resolve(
        cur, r, lo, hi, vals, last, work, last_state, absd, cand, pool, pooled, pre_score, best,
        np.int64(-1), np.int64(-1),
    )  # fmt: skip


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
    work = np.full((n + 1, m + 2), INF, np.int32)
    absd = np.empty(2 * n + m + 2, np.int32)
    for y in range(absd.shape[0]):
        absd[y] = abs(y - (n + m))
    last = np.empty_like(h)
    last_state = np.zeros(2, np.int64)
    cur = h.copy()
    cand = np.empty_like(h)
    ident = np.empty_like(h)
    for x in range(n):
        ident[x] = x
    src = np.empty_like(h)
    srcs = np.empty((4, n), np.uint64)
    for lane in range(4):
        for x in range(n):
            srcs[lane, x] = x
    # Myers' pattern: the reference in 64-bit blocks; eq[i] has the bits of hypothesis word i
    blocks = (m + 63) // 64
    last_mask = ~np.uint64(0) >> np.uint64(63 - (m - 1) % 64)
    eq = np.zeros((n, blocks), np.uint64)
    for i in range(n):
        for j in range(m):
            if h[i] == r[j]:
                eq[i, j // 64] |= np.uint64(1) << np.uint64(j % 64)
    cand_eq = np.empty_like(eq)
    bp_vp = np.empty((n + 1, blocks), np.uint64)
    bp_vn = np.empty((n + 1, blocks), np.uint64)
    vp = np.empty(blocks, np.uint64)
    vn = np.empty(blocks, np.uint64)
    cands = np.empty((MAX_SHIFT_CANDIDATES + MAX_SHIFT_SIZE + 1, 3), np.int64)
    order = np.empty(cands.shape[0], np.int64)
    pool = np.empty((cands.shape[0], 4), np.int64)
    align = np.empty(m, np.int64)
    hyp_err = np.zeros(n + 1, np.int64)
    ref_err = np.zeros(m + 1, np.int64)
    herr = np.zeros(n, np.int64)
    rerr = np.zeros(m, np.int64)
    best = np.zeros(5, np.int64)

    # np.int64(...) rather than literals: a literal-typed first argument would make numba compile
    # the callees twice (once for the literal, once for int64)
    checked = np.int64(0)
    shifts = 0
    first_row = np.int64(1)  # rows below first_row are up to date for `cur`
    pre_score = _base_rows(cur, r, lo, hi, vals, absd, first_row)
    while True:
        if not _alignment(cur, r, lo, hi, vals, align, hyp_err, ref_err, herr, rerr):
            return -1
        checked, k = _candidates(cur, r, eq, align, hyp_err, ref_err, checked, cands)
        if checked >= MAX_SHIFT_CANDIDATES:
            return shifts + pre_score
        _myers_prefixes(eq, bp_vp, bp_vn, first_row - 1)
        _best_shift(
            cur, r, lo, hi, vals, last, work, last_state, absd, cand, eq, last_mask, bp_vp,
            bp_vn, vp, vn, srcs, cands, k, order, pool, pre_score, best,
        )  # fmt: skip
        if best[0] <= 0:
            return shifts + pre_score
        shifts += 1
        pre_score -= best[0]
        _perform_shift(cur, best[2], best[1], best[3], cand)
        first_row = _common_prefix(cand, cur, min(best[2], best[3])) + 1
        _perform_shift(ident, best[2], best[1], best[3], src)
        for x in range(n):  # (an explicit loop: slice assignment costs seconds of compile time)
            cur[x] = cand[x]
            for w in range(blocks):
                cand_eq[x, w] = eq[src[x], w]
        for x in range(n):
            for w in range(blocks):
                eq[x, w] = cand_eq[x, w]
        if best[4]:  # the winner's rows first_row..n are in `work`
            for i in range(first_row, n + 1):
                for j in range(m + 2):
                    vals[i, j] = work[i, j]
        else:
            _base_rows(cur, r, lo, hi, vals, absd, first_row)


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
