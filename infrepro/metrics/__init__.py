"""Per-segment metrics (docs/method.md §2), bit-identical to sacrebleu and rouge-score but faster.

`score_segments(hypotheses, references, metrics)` returns one row per segment. TER and ROUGE run on
compiled numba kernels (`TER_BACKEND` says which TER path is active); BLEU and chrF call sacrebleu.
`implementation="reference"` runs plain loops over the reference packages.
"""

from infrepro.core.catalog import BETTER, KNOWN_METRICS
from infrepro.metrics.api import score_segments
from infrepro.metrics.ter import TER_BACKEND

__all__ = ["BETTER", "KNOWN_METRICS", "TER_BACKEND", "score_segments"]
