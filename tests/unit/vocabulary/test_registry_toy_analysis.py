"""Adding an analysis is a registry entry, its function and its report section, nothing else:
a toy analysis registered here (as a new analysis would be in infrepro/core/registry.py and its
table
in infrepro/core/vocabulary.py) runs through the runner, its tables conform to their declaration,
survive a CSV round trip with their types and feed a report section."""

from __future__ import annotations

import pandas as pd
import pytest

from infrepro.analyses import load_metric_data, run_analysis
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core import registry, vocabulary
from infrepro.core.registry import LOG_TABLES, AnalysisSpec, Cost, ModelSpec, Need
from infrepro.io.results import read_result_table
from infrepro.plumbing.atomic import write_csv
from infrepro.report import ReportSettings
from infrepro.report.formatting import points
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.labels import analysis_label

SYSTEMS = ("007", "NA", "1")  # names a type-guessing reader would turn into 7, NaN and 1


def toy_means(data, log: FitLog, variance_rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The toy analysis: each system's mean score and how many variance components it has."""
    frame = data.evaluation.groupby("system", sort=False)[data.metric].agg(["mean", "count"])
    frame = frame.reset_index().rename(columns={"count": "n_segments"})
    frame["n_components"] = [
        int((variance_rows["system"] == system).sum()) for system in frame["system"]
    ]
    frame.insert(0, "metric", data.metric)
    log.note("toy", "", f"{len(frame)} systems averaged")
    return {"toy_summary": frame}


def toy_section(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Table:
    """The toy report section: the table of means, in points."""
    return frame_table(
        tables["toy_summary"],
        [Column("system", "system", text, numeric=False), Column("mean", "mean", points)],
        csv=settings.link("toy_summary"),
        caption=analysis_label("toy"),
    )


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The edit a new analysis makes: its table, its registry entry and its model."""
    monkeypatch.setitem(
        vocabulary.TABLE_SPECS,
        "toy_summary",
        vocabulary.table("toy_summary", "metric system mean:float n_segments:int n_components:int"),
    )
    spec = AnalysisSpec(
        "toy",
        f"{__name__}:toy_means",
        ("toy_summary", *LOG_TABLES),
        (),
        Cost(100, 10, 1, 1),
        needs=(Need(registry.VARIANCE, "variance_components", "variance_rows"),),
    )
    monkeypatch.setitem(registry.ANALYSES, "toy", spec)
    monkeypatch.setitem(registry.MODELS, "toy", ModelSpec("toy", registry.JOB, "toy means"))


def data_with_odd_names():
    rows = [
        {"run_id": f"{s}_{r}", "system": s, "segment_id": f"s{g}", "my score": 0.1 * i + 0.01 * g}
        for i, s in enumerate(SYSTEMS)
        for r in range(2)
        for g in range(5)
    ]
    evaluation = pd.DataFrame(rows)
    runs = evaluation[["run_id", "system"]].drop_duplicates().reset_index(drop=True)
    bins = pd.DataFrame(columns=["property", "bin"])
    return load_metric_data(
        evaluation,
        runs,
        bins,
        metric="my score",
        better="higher",
        baseline="007",
        facets=[],
        properties=[],
        options={},
    )


def test_a_registered_toy_analysis_runs_conforms_and_reports(
    toy_registered: None, tmp_path
) -> None:
    data = data_with_odd_names()
    components = pd.DataFrame(
        {"metric": "my score", "system": ["007", "007", "NA"], "component": ["run_id"] * 3}
    )
    with pytest.raises(ValueError, match="needs the variance_components table"):
        run_analysis("toy", data)
    tables = run_analysis("toy", data, {"variance_rows": components})
    assert list(tables) == ["toy_summary", *LOG_TABLES]
    summary = tables["toy_summary"]
    assert list(summary.columns) == list(vocabulary.TABLE_SPECS["toy_summary"].names)
    assert list(summary["metric"]) == ["my score"] * 3  # the user's name, mapped back
    assert "3 systems averaged" in set(tables["diagnostics"]["reason"])

    path = tmp_path / "toy_summary.csv"
    write_csv(summary, path)
    read = read_result_table("toy_summary", path)
    assert list(read["system"]) == list(SYSTEMS)
    assert list(read["n_components"]) == [2, 1, 0]
    pd.testing.assert_frame_equal(read, summary, check_dtype=False)
    assert read["mean"].dtype == float and read["n_segments"].dtype.kind == "i"

    settings = ReportSettings(
        name="toy", baseline="007", systems=list(SYSTEMS), metrics=["my score"], better={}
    )
    section = toy_section({"toy_summary": read}, settings)
    assert [row[0].text for row in section.rows] == list(SYSTEMS)
    assert section.caption == "toy means" and section.csv == "tables/toy_summary.csv"
