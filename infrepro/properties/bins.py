"""Binned versions of numeric properties, for post-hoc tables and interaction plots."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from infrepro.core.vocabulary import BIN_SUFFIX

DEFAULT_LABELS = {2: ["low", "high"], 3: ["low", "mid", "high"]}


def bin_edges(values: pd.Series, n_bins: int) -> list[float]:
    """Inner cut points at equal-probability quantiles (tertiles for 3), duplicates removed."""
    finite = values.dropna().to_numpy(dtype="float64")
    if finite.size == 0:
        return []
    cuts = np.quantile(finite, np.linspace(0, 1, n_bins + 1)[1:-1])
    top = finite.max()
    return sorted({float(c) for c in cuts if c < top})


def default_labels(n: int) -> list[str]:
    """Labels for ``n`` bins: low/mid/high for 3, q1..qn otherwise."""
    return DEFAULT_LABELS.get(n, [f"q{i}" for i in range(1, n + 1)])


def add_bins(
    frame: pd.DataFrame,
    properties: Sequence[str],
    *,
    n_bins: int = 3,
    cuts: Mapping[str, Sequence[float]] | None = None,
    labels: Mapping[str, Sequence[str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Add ``<property>_bin`` columns for numeric properties (right-closed bins).

    Returns the frame and a table of the bins used (property, bin, lower, upper) so that every
    bin boundary shown in the report is traceable.
    """
    cuts = dict(cuts or {})
    labels = dict(labels or {})
    out = frame.copy()
    records: list[dict[str, object]] = []
    for prop in properties:
        if prop not in out or not pd.api.types.is_numeric_dtype(out[prop]):
            continue
        inner = [float(c) for c in cuts[prop]] if prop in cuts else bin_edges(out[prop], n_bins)
        names = list(labels.get(prop, default_labels(len(inner) + 1)))
        if len(names) != len(inner) + 1:
            raise ValueError(
                f"property '{prop}': {len(inner)} cut points need {len(inner) + 1} labels, "
                f"got {len(names)}"
            )
        edges = [-np.inf, *inner, np.inf]
        out[prop + BIN_SUFFIX] = pd.cut(out[prop], bins=edges, labels=names, right=True).astype(
            object
        )
        for name, low, high in zip(names, edges[:-1], edges[1:], strict=True):
            records.append({"property": prop, "bin": name, "lower": low, "upper": high})
    table = pd.DataFrame.from_records(records, columns=["property", "bin", "lower", "upper"])
    return out, table
