"""Compiled ROUGE counts on integer token ids, mirroring `rouge_score/rouge_scorer.py` (0.1.2).

Per (hypothesis, reference) pair the kernel returns integer counts only; the floats are formed in
Python/numpy with rouge-score's own expression order (see `rouge.py`):
- n-gram overlap: sum over n-grams of min(count in target, count in prediction) (`_score_ngrams`),
  computed by merging sorted n-gram keys;
- LCS length (`_lcs_table`);
- summary-level LCS hits (`_summary_level_lcs`): per reference sentence, the union of the LCS
  index sets read out by `_backtrack_norec` (same tie rule) against every candidate sentence, then
  counted against the token budgets of the whole summaries to avoid double counting.
"""

from __future__ import annotations

import numpy as np

from infrepro.metrics._jit import jit


def ngram_keys(
    tokens: np.ndarray, offsets: np.ndarray, vocab_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: sorted unigram ids, and sorted bigram keys (a * vocab_size + b) with offsets.

    Vectorised with numpy (a compiled sort would add seconds of numba compile time): each text's
    keys are sorted in one `np.sort` of (text, key) packed into one int64 (text * span + key),
    which keeps the texts in order; `np.lexsort` where the packed key could overflow.
    """
    n_texts = offsets.shape[0] - 1
    lengths = np.diff(offsets)
    text_of = np.repeat(np.arange(n_texts, dtype=np.int64), lengths)
    uni = _sorted_within(tokens.astype(np.int64), text_of, vocab_size)
    # a bigram starts at every token but the last of its text
    starts = np.ones(tokens.shape[0], dtype=bool)
    starts[offsets[1:][lengths > 0] - 1] = False
    first = np.flatnonzero(starts)
    bi = tokens[first].astype(np.int64) * vocab_size + tokens[first + 1]
    bi = _sorted_within(bi, text_of[first], vocab_size * vocab_size)
    bi_off = np.zeros(n_texts + 1, np.int64)
    np.cumsum(np.maximum(lengths - 1, 0), out=bi_off[1:])
    return uni, bi, bi_off


def _sorted_within(keys: np.ndarray, group: np.ndarray, span: int) -> np.ndarray:
    """`keys` sorted within each run of equal `group` values (groups ascending, keys < span)."""
    n_groups = int(group[-1]) + 1 if group.shape[0] else 0
    if n_groups * span < 2**62:
        return np.sort(group * span + keys) - group * span
    return keys[np.lexsort((keys, group))]


@jit()
def _common_sorted(a: np.ndarray, b: np.ndarray) -> int:
    """Sum over keys of min(count in a, count in b) for two sorted arrays."""
    i = 0
    j = 0
    c = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] == b[j]:
            c += 1
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return c


@jit()
def _lcs_length(ref: np.ndarray, can: np.ndarray, row: np.ndarray) -> int:
    """Length of the longest common subsequence (last cell of `_lcs_table(ref, can)`)."""
    cols = can.shape[0]
    for j in range(cols + 1):
        row[j] = 0
    for i in range(ref.shape[0]):
        diag = 0  # table[i - 1][j - 1]
        x = ref[i]
        for j in range(1, cols + 1):
            up = row[j]
            if x == can[j - 1]:
                v = diag + 1
            else:
                v = up if up > row[j - 1] else row[j - 1]
            diag = up
            row[j] = v
    return row[cols]


@jit()
def _mark_lcs(ref: np.ndarray, can: np.ndarray, mask: np.ndarray) -> None:
    """Set mask[i] for the reference indices of `lcs_ind(ref, can)` (`_backtrack_norec`)."""
    rows = ref.shape[0]
    cols = can.shape[0]
    if rows == 0 or cols == 0:
        return
    t = np.zeros((rows + 1, cols + 1), np.int32)
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            if ref[i - 1] == can[j - 1]:
                t[i, j] = t[i - 1, j - 1] + 1
            else:
                t[i, j] = max(t[i - 1, j], t[i, j - 1])
    i = rows
    j = cols
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            mask[i - 1] = True
            i -= 1
            j -= 1
        elif t[i, j - 1] > t[i - 1, j]:
            j -= 1
        else:
            i -= 1


@jit()
def _summary_hits(
    stoks: np.ndarray,
    soff: np.ndarray,
    ref_s0: int,
    ref_s1: int,
    hyp_s0: int,
    hyp_s1: int,
    cnt_r: np.ndarray,
    cnt_c: np.ndarray,
    mask: np.ndarray,
) -> int:
    """Hits of `_summary_level_lcs` for reference sentences [ref_s0, ref_s1) and hypothesis ones."""
    for x in range(soff[ref_s0], soff[ref_s1]):
        cnt_r[stoks[x]] += 1
    for x in range(soff[hyp_s0], soff[hyp_s1]):
        cnt_c[stoks[x]] += 1
    hits = 0
    for s in range(ref_s0, ref_s1):
        ref = stoks[soff[s] : soff[s + 1]]
        for i in range(ref.shape[0]):
            mask[i] = False
        for c in range(hyp_s0, hyp_s1):
            _mark_lcs(ref, stoks[soff[c] : soff[c + 1]], mask)
        for i in range(ref.shape[0]):
            if mask[i]:
                tok = ref[i]
                if cnt_c[tok] > 0 and cnt_r[tok] > 0:
                    hits += 1
                    cnt_c[tok] -= 1
                    cnt_r[tok] -= 1
    for x in range(soff[ref_s0], soff[ref_s1]):
        cnt_r[stoks[x]] = 0
    for x in range(soff[hyp_s0], soff[hyp_s1]):
        cnt_c[stoks[x]] = 0
    return hits


@jit()
def rouge_counts(
    k0: int,
    k1: int,
    tokens: np.ndarray,
    offsets: np.ndarray,
    uni: np.ndarray,
    bi: np.ndarray,
    bi_off: np.ndarray,
    stoks: np.ndarray,
    soff: np.ndarray,
    tsent: np.ndarray,
    pair_h: np.ndarray,
    pair_r: np.ndarray,
    want: np.ndarray,
    vocab_size: int,
    out: np.ndarray,
) -> None:
    """Counts for pairs k0..k1-1: out[k] = (rouge1 overlap, rouge2 overlap, LCS, Lsum hits)."""
    max_len = 1
    for t in range(offsets.shape[0] - 1):
        max_len = max(max_len, offsets[t + 1] - offsets[t])
    max_sent = 1
    for s in range(soff.shape[0] - 1):
        max_sent = max(max_sent, soff[s + 1] - soff[s])
    row = np.empty(max_len + 1, np.int64)
    mask = np.zeros(max_sent, np.bool_)
    if want[3]:
        cnt_r = np.zeros(vocab_size, np.int64)
        cnt_c = np.zeros(vocab_size, np.int64)
    else:
        cnt_r = np.zeros(1, np.int64)
        cnt_c = np.zeros(1, np.int64)
    for k in range(k0, k1):
        a = pair_h[k]
        b = pair_r[k]
        if want[0]:
            out[k, 0] = _common_sorted(
                uni[offsets[b] : offsets[b + 1]], uni[offsets[a] : offsets[a + 1]]
            )
        if want[1]:
            out[k, 1] = _common_sorted(bi[bi_off[b] : bi_off[b + 1]], bi[bi_off[a] : bi_off[a + 1]])
        if want[2]:
            out[k, 2] = _lcs_length(
                tokens[offsets[b] : offsets[b + 1]], tokens[offsets[a] : offsets[a + 1]], row
            )
        if want[3]:
            out[k, 3] = _summary_hits(
                stoks, soff, tsent[b], tsent[b + 1], tsent[a], tsent[a + 1], cnt_r, cnt_c, mask
            )
