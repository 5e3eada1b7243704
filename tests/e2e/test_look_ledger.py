"""End-to-end: runs that arrive in batches with nothing declared (issue 41, acceptance 3;
docs/method.md §4e.12).

A scores-mode experiment with no look column, rerun after each of three batches of runs: the
ledger beside the scores file holds three looks, ``decisions.csv`` names the sequential verdict
("look 3 of an undeclared sequence"), and a from-scratch run of a copy with the ledger gives the
tables byte for byte. The experiment is renamed at the third look: the header names that option
as changed since look 2, in the rerun and in the copy alike (the ledger records each look's
options; issue 44 item 4). Swapping run ids within a batch changes no number; a run changed
after its look is refused before any job runs."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from decision_views import check_views
from workflow_helpers import job_counts, run_snakemake, scores_config, write_scores

from infrepro.core.decisions import ANYTIME, RECORDED_LOOKS

pytestmark = pytest.mark.e2e
SEGMENTS = 60
BATCHES = 3  # two runs per system arrive in each batch
TITLE, RENAMED = "batches, nothing declared", "batches, renamed at look 3"


def batch_scores(batches: int, swap: bool = False) -> pd.DataFrame:
    """Per-segment scores of base and comp (comp better by about 3 run-mean SDs), two runs per
    system per batch; ``swap`` gives each batch's two runs of a system each other's seeds."""
    rng = np.random.default_rng(41)
    segment = rng.normal(0.0, 0.15, SEGMENTS)
    rows = []
    for batch in range(BATCHES):
        for system, mean in (("base", 0.50), ("comp", 0.54)):
            for k in range(2):
                level = mean + rng.normal(0.0, 0.012)
                scores = np.clip(level + segment + rng.normal(0.0, 0.05, SEGMENTS), 0.0, 1.0)
                seed = 2 * batch + (1 - k if swap else k) + 1
                if batch < batches:
                    rows += [
                        {"segment": f"g{j:03d}", "system": system, "seed": str(seed), "score": v}
                        for j, v in enumerate(np.round(scores, 6))
                    ]
    return pd.DataFrame(rows)


def write_experiment(root: Path, batches: int, swap: bool = False) -> Path:
    write_scores(root / "scores.csv", batch_scores(batches, swap))
    title = RENAMED if batches == BATCHES else TITLE
    return scores_config(root, title, "base", {"run": ["summary"]})


def run(root: Path) -> str:
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def tables(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in (root / "results" / "tables").glob("*.csv"))


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> Path:
    """The experiment rerun after each of three batches, as a user adds seeds."""
    root = tmp_path_factory.mktemp("batches")
    for batches in range(1, BATCHES + 1):
        write_experiment(root, batches)
        run(root)
    return root


def test_the_ledger_holds_one_look_per_batch(batches: Path) -> None:
    ledger = pd.read_csv(batches / "scores.ledger.tsv", sep="\t", comment="#", dtype=str)
    assert ledger.groupby("look")["run"].count().to_dict() == {"1": 4, "2": 4, "3": 4}
    assert ledger["sha256"].str.fullmatch("[0-9a-f]{64}").all()


def test_the_decision_names_the_undeclared_sequence(batches: Path) -> None:
    decisions = pd.read_csv(batches / "results" / "tables" / "decisions.csv")
    record = decisions.iloc[0]
    assert record["sequential"] == ANYTIME and record["look_source"] == RECORDED_LOOKS
    assert record["looks"] == BATCHES
    page = (batches / "results" / "report.html").read_text(encoding="utf-8")
    assert "of an undeclared sequence" in page
    assert check_views(batches / "results", "base", alpha=0.05) == 1


def this_run(root: Path) -> str:
    """The header's "This run" line of the report."""
    page = (root / "results" / "report.html").read_text(encoding="utf-8")
    return page.split("<dt>This run</dt>", 1)[1].split("</dd>", 1)[0]


def test_the_header_names_the_option_changed_since_the_last_look(batches: Path) -> None:
    line = this_run(batches)
    assert "look 3 of an undeclared sequence" in line and "base: +2 runs; comp: +2 runs" in line
    assert line.endswith(f"options changed since look 2: experiment {TITLE} → {RENAMED}")


def test_a_rerun_with_nothing_new_records_no_look_and_runs_nothing(batches: Path) -> None:
    before = (batches / "scores.ledger.tsv").read_text()
    output = run(batches)
    assert "Nothing to be done" in output or job_counts(output) == {}
    assert (batches / "scores.ledger.tsv").read_text() == before


def test_a_copy_with_the_ledger_gives_the_same_tables_from_scratch(batches, tmp_path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("scores.csv", "config.yaml", "scores.ledger.tsv"):
        shutil.copy(batches / name, copy / name)
    run(copy)
    assert tables(copy) == tables(batches)
    differ = [p for p in tables(batches) if not filecmp.cmp(batches / p, copy / p, shallow=False)]
    assert differ == []
    assert (copy / "scores.ledger.tsv").read_text() == (batches / "scores.ledger.tsv").read_text()
    assert this_run(copy) == this_run(batches)  # what changed is read from the ledger


def test_swapping_run_ids_within_a_batch_changes_no_number(batches, tmp_path) -> None:
    """The same scores with each batch's two seeds of a system exchanged: the pairs of the
    confidence sequence follow the scores, not the ids (docs/method.md §4e.7)."""
    swapped = tmp_path / "swapped"
    for n in range(1, BATCHES + 1):
        write_experiment(swapped, n, swap=True)
        run(swapped)
    columns = ["improvement", "se", "lower", "upper", "p_value", "p_adjusted", "verdict", "look"]
    ours = pd.read_csv(batches / "results" / "tables" / "decisions.csv")[columns]
    theirs = pd.read_csv(swapped / "results" / "tables" / "decisions.csv")[columns]
    pd.testing.assert_frame_equal(ours, theirs)
    looks = ["improvement", "lower", "upper", "p_value"]
    pd.testing.assert_frame_equal(
        pd.read_csv(batches / "results" / "tables" / "looks.csv")[looks],
        pd.read_csv(swapped / "results" / "tables" / "looks.csv")[looks],
    )


def test_a_run_changed_after_its_look_is_refused(batches, tmp_path) -> None:
    copy = tmp_path / "changed"
    shutil.copytree(batches, copy, ignore=shutil.ignore_patterns("results", ".snakemake"))
    scores = pd.read_csv(copy / "scores.csv")
    first = (scores["system"] == "comp") & (scores["seed"] == 1)
    scores.loc[first, "score"] = scores.loc[first, "score"] * 0.9
    scores.to_csv(copy / "scores.csv", index=False)
    result = run_snakemake(copy)
    assert result.returncode != 0
    assert "changed after look 1" in result.stderr and "scores.ledger.tsv:" in result.stderr
    assert not (copy / "results").exists()
