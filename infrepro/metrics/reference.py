"""Plain loops over sacrebleu and rouge-score: the oracle for the fast scorers, and their fallback.

BLEU and chrF have no fast path: their loops live in `sacre.py` and are re-exported here.
Each function returns one float64 per (hypothesis, references) pair on the stored scale of
docs/method.md §2 (sacrebleu's percentages / 100; rouge-score F-measures as they are).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def _pairs(hypotheses: Sequence[str], references: Sequence[Sequence[str]]):
    return zip(hypotheses, references, strict=True)


def ter_reference(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """`sacrebleu.metrics.TER().sentence_score(hyp, refs).score / 100` per segment."""
    from sacrebleu.metrics import TER

    metric = TER()
    return np.array(
        [metric.sentence_score(h, list(r)).score / 100 for h, r in _pairs(hypotheses, references)],
        dtype=np.float64,
    )


def rouge_reference(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], rouge_types: Sequence[str]
) -> dict[str, np.ndarray]:
    """`RougeScorer(rouge_types, use_stemmer=True).score_multi(refs, hyp)[t].fmeasure` per segment.

    `score_multi` keeps, per ROUGE type, the reference with the highest F-measure; with a single
    reference it equals `score(ref, hyp)`.
    """
    from rouge_score.rouge_scorer import RougeScorer

    types = list(rouge_types)
    scorer = RougeScorer(types, use_stemmer=True)
    out = {t: np.empty(len(hypotheses), np.float64) for t in types}
    for i, (h, r) in enumerate(_pairs(hypotheses, references)):
        scores = scorer.score_multi(list(r), h)
        for t in types:
            out[t][i] = scores[t].fmeasure
    return out


def reference_prefix(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    metrics: Sequence[str],
    budget: float,
) -> tuple[dict[str, np.ndarray], int, float]:
    """TER and ROUGE (the `metrics` among them) of the first k segments with the reference
    packages, stopping once the CPU seconds spent, or projected for all segments, exceed `budget`.

    Returns (scores of segments 0..k-1 per metric, k, CPU seconds spent). The projection is the
    mean time per segment so far times the segments; the packages' set-up (imports, the
    stemmer) counts against the budget but not into the projection.
    """
    import time

    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import TER

    start = time.process_time()
    rouge_types = [m for m in metrics if m.startswith("rouge")]
    ter = TER() if "ter" in metrics else None
    scorer = RougeScorer(rouge_types, use_stemmer=True) if rouge_types else None
    n = len(hypotheses)
    out = {m: np.empty(n, np.float64) for m in metrics}
    loop_start = time.process_time()
    k = 0
    while k < n:
        h, refs = hypotheses[k], list(references[k])
        if ter is not None:
            out["ter"][k] = ter.sentence_score(h, refs).score / 100
        if scorer is not None:
            scores = scorer.score_multi(refs, h)
            for t in rouge_types:
                out[t][k] = scores[t].fmeasure
        k += 1
        now = time.process_time()
        if now - start > budget or (now - loop_start) / k * n + loop_start - start > budget:
            break
    return {m: v[:k] for m, v in out.items()}, k, time.process_time() - start
