"""Experiment assembly, a layer above ``io`` (formats, validation) and ``properties``: the
validated experiment (config + inputs, before any job) and the evaluation table (scores joined
with properties and their bins).

The public names load from their modules on first use: the workflow's parse, which may have the
experiment back from its last check (``kept``), loads no pandas for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_getattr

_WHERE = {
    "BUILTIN_PROPERTIES": "load",
    "KNOWN_METRICS": "load",
    "Experiment": "record",
    "assemble_evaluation": "evaluation",
    "import_scores": "evaluation",
    "kept_experiment": "kept",
    "load_experiment": "load",
    "run_scores": "evaluation",
}
__all__ = [
    "BUILTIN_PROPERTIES",
    "KNOWN_METRICS",
    "Experiment",
    "assemble_evaluation",
    "import_scores",
    "kept_experiment",
    "load_experiment",
    "run_scores",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from infrepro.experiment.evaluation import assemble_evaluation, import_scores, run_scores
    from infrepro.experiment.kept import kept_experiment
    from infrepro.experiment.load import BUILTIN_PROPERTIES, KNOWN_METRICS, load_experiment
    from infrepro.experiment.record import Experiment

__getattr__ = lazy_getattr(__name__, _WHERE, globals())
