"""What the report is told about the looks (``infrepro.workflow.ledger.looks_seen``) and the
header line it makes of them: the look this run is, the runs each system gained and the options
changed since the last look (issue 44 item 4), the same before and after the completed run
records the look."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from infrepro.core.decisions import DECLARED_LOOKS, RECORDED_LOOKS
from infrepro.core.vocabulary import REPORT_TABLES
from infrepro.io.ledger import CurrentRun, append_look, looks_of, options_of, read_ledger
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


def _seen(
    ledger: Path,
    counts: dict[str, int],
    record: bool = True,
    config: dict[str, object] | None = None,
) -> dict[str, object]:
    """The report's parameter for a run with these runs and options (``config``), then
    (``record``) the look recorded as a completed run records it."""
    runs = _runs(counts)
    looks = looks_of(ledger, runs, PLAN, options=options_of(config or {}))
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


CONFIG = {"report": {"alpha": 0.05, "title": "Γάμμα"}, "metrics": ["ter"], "baseline": "comp "}


def test_the_header_names_the_options_changed_since_the_last_look(tmp_path: Path) -> None:
    """Options changed between two looks are named with their values then and now; an option
    added or removed reads 'unset' on the other side; unchanged options are not named."""
    ledger = tmp_path / "runs.ledger.tsv"
    first = _seen(ledger, {"A": 2, "B": 2}, config=CONFIG)
    assert "changed" not in first
    changed = {"report": {"alpha": 0.2}, "metrics": ["ter", "chrf"], "baseline": "comp "}
    second = _seen(ledger, {"A": 3, "B": 2}, config=changed)
    assert second["changed"] == [
        ["metrics", '["ter"]', '["ter", "chrf"]'],
        ["report.alpha", "0.05", "0.2"],
        ["report.title", '"Γάμμα"', ""],
    ]
    assert _look_fact(second) == (
        f"look 2 of an undeclared sequence, recorded in {ledger}; new since look 1: A: +1 run; "
        'options changed since look 1: metrics ["ter"] → ["ter", "chrf"]; '
        "report.alpha 0.05 → 0.2; report.title Γάμμα → unset"
    )
    # the rerun with nothing new: the same parameter, so nothing reruns
    assert _seen(ledger, {"A": 3, "B": 2}, record=False, config=changed) == second
    # the same options at the next look: nothing named
    third = _seen(ledger, {"A": 3, "B": 3}, config=changed)
    assert third["changed"] == [] and "options changed" not in str(_look_fact(third))


def test_the_ledger_records_each_looks_options_and_reads_them_back(tmp_path: Path) -> None:
    """The options line follows each look's rows; the rows read as before."""
    ledger = tmp_path / "runs.ledger.tsv"
    _seen(ledger, {"A": 2}, config=CONFIG)
    _seen(ledger, {"A": 3}, config={**CONFIG, "baseline": "A"})
    text = ledger.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("# options at look")]
    assert lines == [
        '# options at look 1: {"baseline":"comp ","metrics":["ter"],"report.alpha":0.05,'
        '"report.title":"Γάμμα"}',
        '# options at look 2: {"baseline":"A","metrics":["ter"],"report.alpha":0.05,'
        '"report.title":"Γάμμα"}',
    ]
    assert text.index(lines[0]) < text.index("A_2\t") < text.index(lines[1])
    assert [row.look for row in read_ledger(ledger)] == [1, 1, 2]
    looks = looks_of(ledger, _runs({"A": 3}), PLAN)
    assert looks.options_at[1]["baseline"] == '"comp "'


def test_a_ledger_without_options_lines_names_no_options(tmp_path: Path) -> None:
    """A ledger written before the options were recorded: the runs gained, no options line."""
    ledger = tmp_path / "runs.ledger.tsv"
    _seen(ledger, {"A": 2})
    second = _seen(ledger, {"A": 3}, config=CONFIG)
    assert "changed" not in second and "options changed" not in str(_look_fact(second))


def test_an_option_json_has_no_type_for_is_recorded_as_its_text(tmp_path: Path) -> None:
    """YAML reads an unquoted 2026-12-06 as a date, which JSON cannot write."""
    import datetime

    ledger = tmp_path / "runs.ledger.tsv"
    _seen(ledger, {"A": 2}, config={"report": {"date": datetime.date(2026, 12, 6)}})
    second = _seen(ledger, {"A": 3}, config={"report": {"date": "2026-12-07"}})
    assert second["changed"] == [["report.date", '"2026-12-06"', '"2026-12-07"']]
