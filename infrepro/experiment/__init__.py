"""Experiment assembly, a layer above ``io`` (formats, validation) and ``properties``: the
validated experiment (config + inputs, before any job) and the evaluation table (scores joined
with properties and their bins).

The public names load from their modules on first use: the workflow's parse, which may have the
experiment back from its last check (``kept``), loads no pandas for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_package

if TYPE_CHECKING:  # the public names (for type checkers as they are; loaded on first use)
    from infrepro.experiment.evaluation import assemble_evaluation, import_scores, run_scores
    from infrepro.experiment.kept import kept_experiment
    from infrepro.experiment.load import BUILTIN_PROPERTIES, KNOWN_METRICS, load_experiment
    from infrepro.experiment.record import Experiment

__getattr__, __all__ = lazy_package(__name__, __file__, globals())
