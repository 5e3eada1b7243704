"""Experiment assembly, a layer above ``io`` (formats, validation) and ``properties``: the
validated experiment (config + inputs, before any job) and the evaluation table (scores joined
with properties and their bins)."""

from .evaluation import assemble_evaluation, import_scores
from .load import BUILTIN_PROPERTIES, KNOWN_METRICS, Experiment, load_experiment

__all__ = [
    "BUILTIN_PROPERTIES",
    "KNOWN_METRICS",
    "Experiment",
    "assemble_evaluation",
    "import_scores",
    "load_experiment",
]
