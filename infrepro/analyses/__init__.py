"""The statistical analyses of docs/method.md §4 and §4b on the evaluation table."""

from .data import MetricData, best_runs, read_evaluation, run_means
from .runner import ANALYSES, load_metric_data, run_analysis
from .tables import TABLES

__all__ = [
    "ANALYSES",
    "TABLES",
    "MetricData",
    "best_runs",
    "load_metric_data",
    "read_evaluation",
    "run_analysis",
    "run_means",
]
