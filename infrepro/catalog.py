"""The metrics infrepro computes and the direction in which each is better (docs/method.md §2).

A dependency-free module, so that config validation can read it without importing the scorers.
"""

from __future__ import annotations

KNOWN_METRICS: tuple[str, ...] = ("ter", "rouge1", "rouge2", "rougeL", "rougeLsum", "bleu", "chrf")

BETTER: dict[str, str] = {
    "ter": "lower",
    "rouge1": "higher",
    "rouge2": "higher",
    "rougeL": "higher",
    "rougeLsum": "higher",
    "bleu": "higher",
    "chrf": "higher",
}
