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
