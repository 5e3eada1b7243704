"""Sentence-level TER identical to `sacrebleu.metrics.TER().sentence_score`, on a compiled kernel.

Only the edit search is compiled (`ter_kernel`). Tokenization is sacrebleu's own `TercomTokenizer`
with TER's default options (not normalized, punctuation kept, no Asian support, lower-cased), and
the score is assembled with the same Python arithmetic as sacrebleu (`_compute_score_from_stats`).
Without numba (or with `NUMBA_DISABLE_JIT=1`) every call is delegated to sacrebleu.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
from sacrebleu.metrics.lib_ter import translation_edit_rate

from infrepro.metrics import ter_kernel
from infrepro.metrics._jit import JIT_ENABLED, run_chunked
from infrepro.metrics._texts import TokenEncoder
from infrepro.metrics.reference import ter_reference

TER_BACKEND: str = "numba" if JIT_ENABLED else "sacrebleu"


def ter_tokenize(text: str) -> list[str]:
    """TER's words for one segment, `TER._preprocess_segment(text).split()`.

    With TER's default options `TercomTokenizer` lower-cases `text.rstrip()` and joins its
    `split()` with single spaces; split again, that is `text.rstrip().lower().split()`.
    """
    return text.rstrip().lower().split()


def ter_from_edits(edits: np.ndarray, ref_lengths: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """TER per segment (stored scale: sacrebleu's percent / 100) from per-reference edits and
    lengths; segment i's references are entries starts[i] up to the next start.

    sacrebleu's arithmetic, elementwise in float64 (the same IEEE operations as its Python
    floats): best = min edits, avg = sum of lengths / references, score = best / avg (1 or 0 if
    avg is 0), then (100 * score) / 100.
    """
    best = np.minimum.reduceat(edits, starts)
    total = np.add.reduceat(ref_lengths, starts)
    avg = total / np.diff(np.append(starts, len(edits)))
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(avg > 0, best / avg, np.where(best > 0, 1.0, 0.0))
    return (100 * score) / 100


_ENCODER = TokenEncoder(ter_tokenize, str)


def ter_fast(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], threads: int = 1
) -> np.ndarray:
    """Per-segment TER through the compiled kernel; equals sacrebleu's value bit for bit.

    The kernel scores every (hypothesis, reference) pair; a worker process encodes each
    reference once (`TokenEncoder`, remembered).
    """
    n_refs = [len(rs) for rs in references]
    flat_refs = list(chain.from_iterable(references))  # pair k's reference
    with _ENCODER.lock:
        _ENCODER.start()
        h_ids, h_off = _ENCODER.encode(hypotheses)
        r_ids, r_off = _ENCODER.encode(flat_refs, remember=True)
    ids = np.concatenate([h_ids, r_ids])
    offsets = np.concatenate([h_off, r_off[1:] + h_off[-1]])
    pair_h = np.repeat(np.arange(len(hypotheses), dtype=np.int64), n_refs)
    pair_r = np.arange(len(flat_refs), dtype=np.int64) + len(hypotheses)
    edits = np.empty(len(pair_h), np.int64)
    run_chunked(
        lambda k0, k1: ter_kernel.ter_edits_batch(ids, offsets, pair_h, pair_r, edits, k0, k1),
        len(pair_h),
        threads,
    )
    for k in np.flatnonzero(edits < 0):  # sacrebleu's trace met an undefined cell: let it decide
        h, r = hypotheses[pair_h[k]], flat_refs[k]
        edits[k] = translation_edit_rate(ter_tokenize(h), ter_tokenize(r))[0]
    if not n_refs:
        return np.zeros(0, np.float64)
    starts = np.zeros(len(n_refs), np.int64)  # each segment's first pair
    np.cumsum(n_refs[:-1], out=starts[1:])
    return ter_from_edits(edits, np.diff(offsets)[pair_r], starts)


def ter_scores(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], threads: int = 1
) -> np.ndarray:
    """Per-segment TER on the active backend (`TER_BACKEND`)."""
    if TER_BACKEND == "numba":
        return ter_fast(hypotheses, references, threads)
    return ter_reference(hypotheses, references)
