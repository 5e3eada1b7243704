"""Built-in data properties of a segment's text (docs/method.md §3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import textstat


def length(texts: Sequence[str]) -> np.ndarray:
    """Number of whitespace-separated tokens."""
    return np.array([len(text.split()) for text in texts], dtype="float64")


def readability(texts: Sequence[str]) -> np.ndarray:
    """Flesch Reading Ease as textstat computes it (0 hard .. 100 easy, unbounded below)."""
    return np.array([textstat.flesch_reading_ease(text) for text in texts], dtype="float64")
