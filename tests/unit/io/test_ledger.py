"""The look ledger (docs/method.md §4e.12): every rerun that adds runs is a recorded look, and a
ledger that contradicts the runs is refused, never rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrepro.io.errors import InputError
from infrepro.io.ledger import (
    CurrentRun,
    append_look,
    ledger_path,
    looks_of,
    read_ledger,
    run_looks,
)
from infrepro.plumbing.files import file_state
from infrepro.workflow.ledger import declares_looks, plan_of, record_looks

PLAN = "anytime-valid, mixture scale 1.5, alpha 0.05"


def runs(*names: str) -> list[CurrentRun]:
    return [CurrentRun(n.split("-")[0], n, f"hyps/{n}.txt", f"digest-{n}") for n in names]


def record(path: Path, current: list[CurrentRun], plan: str = PLAN) -> None:
    looks = looks_of(path, current, plan)
    append_look(path, {r.run: r for r in current}, looks, "2026-12-06T00:00:00+00:00")


def test_the_ledger_lies_beside_the_runs_sheet_or_scores_file() -> None:
    assert ledger_path("config/runs.tsv") == Path("config/runs.ledger.tsv")
    assert ledger_path("data/scores.csv.gz") == Path("data/scores.ledger.tsv")


def test_without_a_ledger_every_run_is_look_one(tmp_path) -> None:
    looks = looks_of(tmp_path / "runs.ledger.tsv", runs("a-1", "b-1"), PLAN)
    assert not looks.exists
    assert looks.of_run == {"a-1": 1, "b-1": 1}
    assert looks.pending == ("a-1", "b-1") and looks.current == 1 and looks.recorded == 0


def test_new_runs_are_the_next_look_and_a_completed_run_records_them(tmp_path) -> None:
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1", "a-2", "b-1", "b-2"))
    again = looks_of(path, runs("a-1", "a-2", "b-1", "b-2"), PLAN)
    assert again.pending == () and again.current == 1  # nothing new: no look
    more = runs("a-1", "a-2", "b-1", "b-2", "a-3", "b-3")
    looks = looks_of(path, more, PLAN)
    assert looks.pending == ("a-3", "b-3") and looks.current == 2
    assert run_looks(looks) == [[r.run, 1 if r.run[-1] != "3" else 2] for r in more]
    record(path, more)
    rows = read_ledger(path)
    assert [(r.look, r.run) for r in rows][-2:] == [(2, "a-3"), (2, "b-3")]
    assert path.read_text().startswith("# infrepro look ledger")


def test_one_look_gives_no_recorded_looks_to_the_jobs(tmp_path) -> None:
    """While the runs are one look, the runs table carries no looks: today's verdicts."""
    one = looks_of(tmp_path / "x.ledger.tsv", runs("a-1"), PLAN)
    assert run_looks(one) == []
    assert run_looks(None) == []
    assert run_looks(one, planned=True) == [["a-1", 1]]  # a declared plan's first look


def test_a_run_removed_after_its_look_is_refused(tmp_path) -> None:
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1", "b-1"))
    with pytest.raises(InputError, match=r"run 'b-1' of b was analysed at look 1") as err:
        looks_of(path, runs("a-1"), PLAN)
    assert err.value.line == 7  # the preamble's four lines, the header, a-1, then b-1


def test_a_run_changed_after_its_look_is_refused(tmp_path) -> None:
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1", "b-1"))
    changed = [*runs("a-1"), CurrentRun("b", "b-1", "hyps/b-1.txt", "other")]
    with pytest.raises(InputError, match=r"run 'b-1' \(hyps/b-1.txt\) changed after look 1"):
        looks_of(path, changed, PLAN)


def test_a_plan_changed_after_a_sequential_look_is_refused(tmp_path) -> None:
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1", "b-1"))
    record(path, runs("a-1", "b-1", "a-2", "b-2"))
    other = "anytime-valid, mixture scale 1.5, alpha 0.2"
    with pytest.raises(InputError, match="plan changed after look 2") as err:
        looks_of(path, runs("a-1", "b-1", "a-2", "b-2"), other)
    assert err.value.column == "plan"


def test_a_changed_alpha_after_one_look_is_allowed(tmp_path) -> None:
    """One look is read at a fixed level; reading it again at another α is no sequential
    analysis (the option's change reruns the decision, as without a ledger)."""
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1", "b-1"))
    looks = looks_of(path, runs("a-1", "b-1"), "anytime-valid, mixture scale 1.5, alpha 0.2")
    assert looks.current == 1 and looks.pending == ()


def test_a_row_out_of_format_is_refused_naming_its_line(tmp_path) -> None:
    path = tmp_path / "runs.ledger.tsv"
    record(path, runs("a-1"))
    path.write_text(path.read_text() + "x\ta\ta-9\n")
    with pytest.raises(InputError, match="3 cells where the ledger has 7") as err:
        looks_of(path, runs("a-1"), PLAN)
    assert err.value.line == 7


def test_a_declared_look_column_takes_precedence() -> None:
    assert declares_looks({"look_column": "batch"})
    assert declares_looks({"columns": {"look": "batch"}})
    assert not declares_looks({"columns": {"segment": "s"}})


def test_the_plan_records_what_a_sequential_analysis_depends_on() -> None:
    config = {
        "analyses": {
            "sequential": {
                "max_runs": None,
                "spending": "pocock",
                "futility": None,
                "final": False,
                "mixture_scale": 1.5,
            }
        },
        "report": {"alpha": 0.05},
    }
    assert plan_of(config) == PLAN
    config["analyses"]["sequential"].update(max_runs=10, final=True)
    declared = plan_of(config)
    assert declared.startswith("plan ") and '"max_runs": 10' in declared
    config["analyses"]["sequential"]["final"] = False  # declaring a final look is no new plan
    assert plan_of(config) == declared


def test_a_run_that_wrote_no_verdict_records_no_look(tmp_path) -> None:
    """Only a run that rewrote the decision table showed a verdict: a run to a scoring target,
    or one that left the table as it found it, appends nothing."""
    path, verdicts = tmp_path / "runs.ledger.tsv", tmp_path / "decisions.csv"
    current = runs("a-1", "b-1")
    found = (looks_of(path, current, PLAN), current)
    assert record_looks(found, path, verdicts, None) == "" and not path.exists()
    verdicts.write_text("verdicts")
    assert record_looks(found, path, verdicts, file_state(verdicts)) == ""
    assert not path.exists()
    before = file_state(verdicts)
    verdicts.write_text("new verdicts")
    assert "look 1 recorded" in record_looks(found, path, verdicts, before)
    assert len(read_ledger(path)) == 2
