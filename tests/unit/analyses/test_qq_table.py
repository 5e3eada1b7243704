"""qq.csv holds one row per fitted model, its QQ_POINTS standardized-residual quantiles in one
cell (docs/method.md §4.6): its size grows with the fits, not with 50 rows each; the report's
QQ plot draws exactly these quantiles; a GLRT's null model has none (its H1 is the model
checked)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.glrt import run_glrt
from infrepro.core.vocabulary import QQ_POINTS, columns, qq_cell, qq_theoretical, qq_values
from infrepro.report.sections.diagnostics import qq_points


def rows() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "segment_id": np.repeat([f"s{i}" for i in range(40)], 4),
            "system": np.tile(["A", "A", "B", "B"], 40),
            "run_id": np.tile(["a1", "a2", "b1", "b2"], 40),
        }
    )
    frame["y"] = (frame["system"] == "B") * 0.3 + rng.standard_t(4, len(frame))
    return frame


def test_one_row_per_fit_with_its_quantiles() -> None:
    log, data = FitLog("y"), rows()
    fitted = log.fit("y ~ system + (1|segment_id)", data, reml=False, analysis="all_runs")
    log.fit("y ~ 1 + (1|segment_id)", data, reml=False, analysis="all_runs")
    log.fit("y ~ system + (1|segment_id)", data, reml=False, analysis="all_runs")  # reused fit
    qq = log.qq_table()
    assert list(qq.columns) == columns("qq") and len(qq) == 3
    values = qq_values(qq["sample"].iloc[0])
    assert len(values) == QQ_POINTS and values == sorted(values)
    standardized = np.sort(np.asarray(fitted.residuals) / fitted.sigma)
    assert values[0] >= standardized[0] - 1e-3 and values[-1] <= standardized[-1] + 1e-3
    assert np.median(values) == pytest.approx(np.median(standardized), abs=0.05)
    assert qq["sample"].iloc[2] == qq["sample"].iloc[0]


def test_the_plot_draws_the_stored_quantiles() -> None:
    cells = [qq_cell(np.linspace(-2, 2, QQ_POINTS) * k) for k in (1.0, 1.5)]
    table = pd.DataFrame({"subset": ["A vs B", "A vs C"], "model": ["m", "m"], "sample": cells})
    points = qq_points(table)
    assert len(points) == 2 * QQ_POINTS
    first = points[points["subset"] == "A vs B"]
    assert list(first["sample"]) == qq_values(cells[0])
    assert list(first["theoretical"]) == qq_theoretical()
    assert qq_theoretical()[QQ_POINTS // 2] == pytest.approx(0.0251, abs=1e-3)
    assert qq_points(table.iloc[:0]).empty


def test_a_glrts_null_model_has_a_diagnostics_row_but_no_qq_row() -> None:
    log, data = FitLog("y"), rows()
    outcome = run_glrt(
        log, data, "y ~ system + (1|segment_id)", "y ~ 1 + (1|segment_id)", analysis="all_runs"
    )
    assert outcome is not None
    assert list(log.diagnostics()["model"]) == [outcome.row["h1"], outcome.row["h0"]]
    assert list(log.qq_table()["model"]) == [outcome.row["h1"]]
