"""What the report is told about the looks (``infrepro.workflow.ledger.looks_seen``) and the
header line it makes of them: the look this run is and the runs each system gained since the
last look (issue 44 item 4), the same before and after the completed run records the look."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from infrepro.core.decisions import DECLARED_LOOKS, RECORDED_LOOKS
from infrepro.core.vocabulary import REPORT_TABLES
from infrepro.io.ledger import CurrentRun, append_look, looks_of
from infrepro.report.inputs import ReportSettings
from infrepro.report.sections import header
from infrepro.workflow.ledger import looks_seen

PLAN = "anytime-valid, mixture scale 1.5, alpha 0.05"


def _runs(counts: dict[str, int]) -> list[CurrentRun]:
    return [
        CurrentRun(system, f"{system}_{i}", f"{system}_{i}", f"{system}{i}".ljust(64, "0"))
        for system, n in counts.items()
        for i in range(n)
    ]


def _seen(ledger: Path, counts: dict[str, int], record: bool = True) -> dict[str, object]:
    """The report's parameter for a run with these runs, then (``record``) the look recorded
    as a completed run records it."""
    runs = _runs(counts)
    looks = looks_of(ledger, runs, PLAN)
    seen = looks_seen((looks, runs))
    if record:
        append_look(ledger, {r.run: r for r in runs}, looks, "test")
    return seen


def _look_fact(seen: dict[str, object]) -> str | None:
    settings = ReportSettings(
        name="toy",
        baseline="Γάμμα",
        systems=["Γάμμα", "comp "],
        metrics=["ter"],
        better={"ter": "lower"},
        config={"experiment": "toy"},
        looks=seen,
    )
    tables = {name: pd.DataFrame() for name in REPORT_TABLES}
    return dict(header.build(tables, settings).facts).get("This run")


def test_the_header_names_the_look_and_the_runs_gained_since_the_last(tmp_path: Path) -> None:
    ledger = tmp_path / "runs.ledger.tsv"
    first = _seen(ledger, {"Γάμμα": 3, "comp ": 3})
    assert "added" not in first
    assert _look_fact(first) is None  # the line under each decision table says look 1
    second = _seen(ledger, {"Γάμμα": 4, "comp ": 3})
    assert second["look"] == 2 and second["added"] == {"Γάμμα": 1}
    third = _seen(ledger, {"Γάμμα": 5, "comp ": 5})
    assert third["added"] == {"Γάμμα": 1, "comp ": 2}
    assert _look_fact(third) == (
        f"look 3 of an undeclared sequence, recorded in {ledger}; new since look 2: "
        "Γάμμα: +1 run; comp : +2 runs"
    )


def test_the_parameter_is_the_same_before_and_after_the_look_is_recorded(tmp_path: Path) -> None:
    """A rerun with nothing new finds the report's parameter as the run that recorded the look
    left it, so it reruns nothing."""
    ledger = tmp_path / "runs.ledger.tsv"
    _seen(ledger, {"A": 3, "B": 3})
    before = _seen(ledger, {"A": 4, "B": 3})
    after = _seen(ledger, {"A": 4, "B": 3}, record=False)
    assert before == after and before["source"] == RECORDED_LOOKS


def test_declared_looks_give_no_header_line() -> None:
    seen = looks_seen(None)
    assert seen == {"source": DECLARED_LOOKS} and _look_fact(seen) is None
