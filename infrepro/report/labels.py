"""Human-readable names of metrics, properties, analyses and model terms."""

from __future__ import annotations

from infrepro.core.decisions import df_number
from infrepro.core.registry import MODELS
from infrepro.core.vocabulary import BIN_SUFFIX

METRIC_LABELS = {
    "ter": "TER",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "rougeLsum": "ROUGE-Lsum",
    "bleu": "BLEU",
    "chrf": "chrF",
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
    """A model's label (infrepro.core.registry.MODELS); an unregistered name with spaces."""
    model = MODELS.get(analysis)
    return model.label if model is not None else analysis.replace("_", " ")


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
    return f"{name} df {df_number(df)}" if df == df else name


def test_label(family: str, statistic: str, method: object, dendf: object) -> str:
    """``run-aware, t, KR df 18.9``: the model family, the statistic and its df."""
    return f"{family}, {statistic}, {ddf_label(method, dendf)}"


def statistic_name(numdf: object) -> str:
    """``t`` for a one-df test (tests.csv stores t then), ``F`` otherwise."""
    try:
        return "t" if float(numdf) == 1 else "F"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "F"
