"""Human-readable names of metrics, properties, analyses and model terms."""

from __future__ import annotations

from infrepro.vocabulary import BIN_SUFFIX

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
    "all_runs": "all runs (paper's model)",
    "all_runs_run_aware": "all runs, shared (1|run_id) (paper's model + run intercept)",
    "all_runs_per_system": "all runs, run-aware (run variance per system)",
    "all_runs_facet_aware": "all runs, facet-aware (sensitivity)",
    "conditional_runaware_joint": "run-aware joint: system + interaction",
    "conditional_runaware_interaction": "run-aware interaction only",
    "metaparam_runaware_joint": "run-aware joint: facet + interaction",
    "metaparam_runaware_interaction": "run-aware interaction only",
    "conditional_runaware": "conditional, run-aware",
    "metaparam_runaware": "meta-parameter, run-aware",
    "conditional_joint": "paper's joint: system + interaction",
    "conditional_interaction": "paper's interaction only",
    "metaparam_joint": "paper's joint: facet + interaction",
    "metaparam_interaction": "paper's interaction only",
    "conditional": "conditional, paper's model",
    "metaparam": "meta-parameter, paper's model",
    "variance": "variance components (REML)",
    "classical": "classical tests",
}


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


DDF_SHORT = {"Kenward-Roger": "KR", "Satterthwaite": "Satterthwaite"}
PAPER_TEST = "paper's model, ML GLRT"


def ddf_label(method: object, dendf: object) -> str:
    """``KR df 18.9`` / ``Satterthwaite df 2.41`` from a tests.csv row's method and dendf."""
    name = DDF_SHORT.get(str(method), str(method))
    try:
        df = float(dendf)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return name
    return f"{name} df {df:.3g}" if df == df else name


def test_label(family: str, statistic: str, method: object, dendf: object) -> str:
    """``run-aware, t, KR df 18.9``: the model family, the statistic and its df."""
    return f"{family}, {statistic}, {ddf_label(method, dendf)}"


def statistic_name(numdf: object) -> str:
    """``t`` for a one-df test (tests.csv stores t then), ``F`` otherwise."""
    try:
        return "t" if float(numdf) == 1 else "F"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "F"
