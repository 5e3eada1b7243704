"""Columns of p-values: shown as the tables give them, sorted by log10 p, marked when < alpha."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from infrepro.report.formatting import is_significant, log10_value, p_text, points
from infrepro.report.htmltable import Column


def significance_css(column: str, alpha: float) -> Callable[[pd.Series], str]:
    """CSS class of a p cell: ``p-sig`` when its log10 p is below log10(alpha), else ``p-ns``."""

    def css(row: pd.Series) -> str:
        value = row.get(column)
        if math.isnan(log10_value(value)):
            return ""
        return "p-sig" if is_significant(value, alpha) else "p-ns"

    return css


def p_columns(alpha: float, holm: bool, *, label: str = "p") -> list[Column]:
    """p and, when several tests form a family, Holm's adjusted p."""
    columns = [
        Column(
            "p_value", label, p_text, sort_key="log10_p", css=significance_css("log10_p", alpha)
        ),
    ]
    if holm:
        columns.append(
            Column(
                "p_holm",
                f"{label} (Holm)",
                p_text,
                sort_key="log10_p_holm",
                css=significance_css("log10_p_holm", alpha),
            )
        )
    return columns


DIFFERENCE_LABEL = "Δ (1\u00a0−\u00a02)"  # no-break spaces: a narrow header wraps before "Δ"


def difference_column(title: str) -> Column:
    """``Δ (1 − 2)`` in points with its sign; ``title`` says which difference."""
    return Column("estimate", DIFFERENCE_LABEL, lambda v: points(v, sign=True), title=title)
