"""The template context: every section of the report built from the tables."""

from __future__ import annotations

from typing import Any

import pandas as pd

from infrepro.core.registry import CLASSICAL
from infrepro.report.bidi import user_names
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label, property_label
from infrepro.report.sections import (
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
    """Everything the template shows; numbers come only from ``tables``.

    The sections are built with the most figures first (meta-parameters, data properties,
    diagnostics): with figures drawn in other processes (``plots.cache``), those processes get
    most of their work while the rest of the page is built, instead of after it. The sections
    are independent of one another and the template takes them by name, so the order they are
    built in changes nothing shown."""
    bins = bin_orders(tables)
    return {
        "metaparams": metaparams.build(tables, settings, bins),
        "properties": properties.build(tables, settings, bins),
        "diagnostics": diagnostics.build(tables, settings),
        "next": planning.build(tables, settings),
        "reliability": reliability.build(tables, settings),
        "scores": scores.build(tables, settings),
        "decision": decision.build(tables, settings),
        "headline": headline.build(tables, settings, bins),
        "significance": significance.build(tables, settings),
        "header": header.build(tables, settings),
        "property_overview": properties.overview(tables, settings),
        "methods": methods.build(tables, settings),
        "settings": settings,
        "isolated": user_names(tables, settings),  # names the page isolates (report.bidi)
        "sections": SECTIONS,
        "metric_label": metric_label,
        "property_label": property_label,
        "link": settings.link,
    }
