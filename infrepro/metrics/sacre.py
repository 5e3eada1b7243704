"""Sentence-level BLEU and chrF: plain sacrebleu calls (no fast path is needed for these).

Values are on the stored scale: `BLEU(effective_order=True).sentence_score(...).score / 100` and
`CHRF().sentence_score(...).score / 100`. Callers pass distinct pairs (`api` deduplicates).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bleu_scores(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-segment BLEU with effective order (sacrebleu's recommended sentence-level setting)."""
    from sacrebleu.metrics import BLEU

    metric = BLEU(effective_order=True)
    return np.array(
        [
            metric.sentence_score(h, list(r)).score / 100
            for h, r in zip(hypotheses, references, strict=True)
        ],
        dtype=np.float64,
    )


def chrf_scores(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-segment chrF with sacrebleu's defaults (character 6-grams, beta 2)."""
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    return np.array(
        [
            metric.sentence_score(h, list(r)).score / 100
            for h, r in zip(hypotheses, references, strict=True)
        ],
        dtype=np.float64,
    )
