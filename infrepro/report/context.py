"""The template context: every section of the report built from the tables."""

from __future__ import annotations

from typing import Any

import pandas as pd

from infrepro.registry import CLASSICAL

from .inputs import ReportSettings
from .labels import metric_label, property_label
from .sections import (
    decision,
    diagnostics,
    header,
    headline,
    metaparams,
    methods,
    planning,
    properties,
    reliability,
    scores,
    significance,
)

SECTIONS = (
    ("decision", "Decision tables"),
    ("headline", "Headline"),
    ("next", "Next experiment"),
    ("scores", "Score distributions"),
    ("significance", "Significance"),
    ("properties", "Data properties"),
    ("reliability", "Reliability"),
    ("metaparams", "Meta-parameters"),
    ("diagnostics", "Diagnostics"),
    (CLASSICAL, "Classical tests"),
    ("methods", "Methods"),
)


def bin_orders(tables: dict[str, pd.DataFrame]) -> dict[str, list[str]]:
    """The bins of every property in their defined order (property_bins.csv)."""
    bins = tables["property_bins"]
    if bins.empty:
        return {}
    order: dict[str, list[str]] = {}
    for prop, label in zip(bins["property"], bins["bin"], strict=True):
        order.setdefault(str(prop), []).append(str(label))
    return order


def build_context(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> dict[str, Any]:
    """Everything the template shows; numbers come only from ``tables``."""
    bins = bin_orders(tables)
    return {
        "settings": settings,
        "sections": SECTIONS,
        "header": header.build(tables, settings),
        "decision": decision.build(tables, settings),
        "headline": headline.build(tables, settings, bins),
        "scores": scores.build(tables, settings),
        "significance": significance.build(tables, settings),
        "properties": properties.build(tables, settings, bins),
        "property_overview": properties.overview(tables, settings),
        "reliability": reliability.build(tables, settings),
        "next": planning.build(tables, settings),
        "metaparams": metaparams.build(tables, settings, bins),
        "diagnostics": diagnostics.build(tables, settings),
        "methods": methods.build(tables, settings),
        "metric_label": metric_label,
        "property_label": property_label,
        "link": settings.link,
    }
