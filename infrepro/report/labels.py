"""Human-readable names of metrics, properties, analyses and model terms."""

from __future__ import annotations

METRIC_LABELS = {
    "ter": "TER",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "rougeLsum": "ROUGE-Lsum",
    "bleu": "BLEU",
    "chrf": "chrF",
}
ANALYSIS_LABELS = {
    "best_vs_best": "best vs best",
    "all_runs": "all runs (paper model)",
    "all_runs_run_aware": "all runs (run-aware)",
    "conditional_joint": "joint: system + interaction",
    "conditional_interaction": "interaction only",
    "metaparam_joint": "joint: facet + interaction",
    "metaparam_interaction": "interaction only",
    "conditional": "within bins",
    "metaparam": "within bins",
    "variance": "variance components (REML)",
    "classical": "classical tests",
}
BIN_SUFFIX = "_bin"


def metric_label(metric: str) -> str:
    """``TER``, ``ROUGE-L``, ... (user metrics keep their name)."""
    return METRIC_LABELS.get(metric, metric)


def property_label(prop: str) -> str:
    """``word rarity``; a binned property reads ``length (bins)``."""
    if prop.endswith(BIN_SUFFIX):
        return property_label(prop[: -len(BIN_SUFFIX)]) + " (bins)"
    return prop.replace("_", " ")


def analysis_label(analysis: str) -> str:
    return ANALYSIS_LABELS.get(analysis, analysis.replace("_", " "))


def better_label(better: str) -> str:
    return "lower is better" if better == "lower" else "higher is better"
