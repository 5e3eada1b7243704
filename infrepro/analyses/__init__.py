"""The statistical analyses of docs/method.md §4 and §4b on the evaluation table.

The names below are imported on first use (PEP 562): the rule that collects the analyses'
tables runs in Snakemake's own process and needs only ``analyses.tables``; importing the package
must not load scipy and the model engine for that (a quarter of a second between the last
analysis and the report)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_package

if TYPE_CHECKING:  # the public names (for type checkers as they are; loaded on first use)
    from infrepro.analyses.common.data import MetricData, best_runs, read_evaluation, run_means
    from infrepro.analyses.common.tables import TABLES
    from infrepro.analyses.runner import ANALYSES, load_metric_data, run_analysis

__getattr__, __all__ = lazy_package(__name__, __file__, globals())
