"""Small synthetic experiments for the decision's and the comparison's unit tests: systems with
their own means and runs, one metric ``y``, no facets or properties."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData


def systems_data(
    runs: Mapping[str, int],
    shift: Mapping[str, float],
    *,
    seed: int,
    segments: int,
    sign: int = 1,
    options: Mapping[str, object] | None = None,
    run_sd: Mapping[str, float] | None = None,
) -> MetricData:
    """``runs[s]`` runs of each system s (the first the baseline) on ``segments`` segments:
    y = 0.4 + shift[s] + a segment effect (SD 0.2) + a run offset (SD 0.02) + noise (SD 0.05),
    higher is better; with ``sign`` −1 the scores are negated and lower is better. ``run_sd``:
    a system's run-offset SD instead of 0.02."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0, 0.2, segments)
    rows, run_rows = [], []
    for system, n in runs.items():
        for r in range(n):
            run = f"{system}_{r}"
            run_rows.append({"run_id": run, "system": system})
            sd = 0.02 if run_sd is None else run_sd.get(system, 0.02)
            values = 0.4 + shift[system] + effects + rng.normal(0, sd)
            values = values + rng.normal(0, 0.05, segments)
            rows += [
                {"run_id": run, "system": system, "segment_id": f"s{s}", "y": sign * value}
                for s, value in enumerate(values)
            ]
    better = "higher" if sign > 0 else "lower"
    return frame_data(
        rows, run_rows, better=better, baseline=next(iter(runs)), options=options or {}
    )


def frame_data(
    rows: list[dict[str, object]],
    run_rows: list[dict[str, object]],
    *,
    metric: str = "y",
    better: str = "higher",
    baseline: str = "A",
    facets: Sequence[str] = (),
    properties: Sequence[str] = (),
    **more: Any,
) -> MetricData:
    """A test's MetricData from its rows: the evaluation table's (one per run and segment) and
    the runs table's (one per run); ``more`` the fields past ``properties`` (options,
    bin_order)."""
    return MetricData(
        metric,
        better,
        baseline,
        pd.DataFrame(rows),
        pd.DataFrame(run_rows),
        list(facets),
        list(properties),
        **more,
    )
