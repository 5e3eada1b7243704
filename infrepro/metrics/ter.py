"""Sentence-level TER identical to `sacrebleu.metrics.TER().sentence_score`, on a compiled kernel.

Only the edit search is compiled (`ter_kernel`). Tokenization is sacrebleu's own `TercomTokenizer`
with TER's default options (not normalized, punctuation kept, no Asian support, lower-cased), and
the score is assembled with the same Python arithmetic as sacrebleu (`_compute_score_from_stats`).
Without numba (or with `NUMBA_DISABLE_JIT=1`) every call is delegated to sacrebleu.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics.lib_ter import translation_edit_rate
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

from . import ter_kernel
from ._jit import JIT_ENABLED, run_chunked
from ._texts import Interner, to_csr, tokenize_distinct
from .reference import ter_reference

TER_BACKEND: str = "numba" if JIT_ENABLED else "sacrebleu"

_TOKENIZER = TercomTokenizer(
    normalized=False, no_punct=False, asian_support=False, case_sensitive=False
)


def ter_tokenize(text: str) -> list[str]:
    """TER's words for one segment, as `TER._preprocess_segment(text).split()`."""
    return _TOKENIZER(text.rstrip()).split()


def ter_from_edits(edits: Sequence[int], ref_lengths: Sequence[int]) -> float:
    """TER (stored scale: sacrebleu's percent / 100) from per-reference edits and lengths."""
    best = int(1e16)
    for e in edits:
        if e < best:
            best = e
    total = 0
    for n in ref_lengths:
        total += n
    avg_ref_len = total / len(ref_lengths)
    if avg_ref_len > 0:
        score = best / avg_ref_len
    elif best > 0:
        score = 1.0
    else:
        score = 0.0
    return (100 * score) / 100


def _edits_for_pairs(
    hyp_tokens: list[list[str]], ref_tokens: list[list[str]], threads: int
) -> np.ndarray:
    """Edits per (hypothesis tokens, reference tokens) pair, computed once per distinct pair."""
    texts = Interner()
    pairs = Interner()
    pair_of = [
        pairs((texts(tuple(h)), texts(tuple(r))))
        for h, r in zip(hyp_tokens, ref_tokens, strict=True)
    ]
    vocab = Interner()
    ids, offsets = to_csr(texts.items, vocab)  # type: ignore[arg-type]
    pair_arr = np.asarray(pairs.items, dtype=np.int64).reshape(-1, 2)
    out = np.empty(len(pairs), np.int64)
    pair_h = np.ascontiguousarray(pair_arr[:, 0])
    pair_r = np.ascontiguousarray(pair_arr[:, 1])
    run_chunked(
        lambda k0, k1: ter_kernel.ter_edits_batch(ids, offsets, pair_h, pair_r, out, k0, k1),
        len(pairs),
        threads,
    )
    for k in np.flatnonzero(out < 0):  # sacrebleu's trace met an undefined cell: let it decide
        h, r = pairs.items[k]  # type: ignore[misc]
        out[k] = translation_edit_rate(list(texts.items[h]), list(texts.items[r]))[0]  # type: ignore[index]
    return out[np.asarray(pair_of, dtype=np.int64)]


def ter_fast(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], threads: int = 1
) -> np.ndarray:
    """Per-segment TER through the compiled kernel; equals sacrebleu's value bit for bit."""
    hyp_tok = tokenize_distinct(hypotheses, ter_tokenize)
    flat_refs = [r for refs in references for r in refs]
    ref_tok = tokenize_distinct(flat_refs, ter_tokenize)
    flat_hyp = [hyp_tok[i] for i, refs in enumerate(references) for _ in refs]
    edits = _edits_for_pairs(flat_hyp, ref_tok, threads)
    out = np.empty(len(hypotheses), np.float64)
    pos = 0
    for i, refs in enumerate(references):
        k = len(refs)
        out[i] = ter_from_edits(
            [int(e) for e in edits[pos : pos + k]], [len(t) for t in ref_tok[pos : pos + k]]
        )
        pos += k
    return out


def ter_scores(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], threads: int = 1
) -> np.ndarray:
    """Per-segment TER on the active backend (`TER_BACKEND`)."""
    if TER_BACKEND == "numba":
        return ter_fast(hypotheses, references, threads)
    return ter_reference(hypotheses, references)
