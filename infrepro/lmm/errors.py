"""The one exception type the mixed-model engine raises for bad input or unfittable models."""

from __future__ import annotations


class LmmError(ValueError):
    """A formula, data set or model comparison that the engine cannot handle.

    Subclasses ValueError so callers that catch ValueError keep working; the message always
    names the offending term, column or coefficient.
    """
