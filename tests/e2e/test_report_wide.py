"""End-to-end: wide experiments at 1400 px (issue 44 items 4 and 5): 15 and 24 systems named as
a meta-parameter sweep names them, two or three runs each, a facet and a property (scores mode,
40 segments), measured in headless Chromium: no figure label overlaps another or leaves its SVG
(the look history's title of two 24-character names left it before it spanned both panels);
after a rerun that adds a seed the header says what changed since the last look."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_report_browser import Browser
from test_report_layout import SCREEN, WIDTH, label_problems
from workflow_helpers import run_snakemake

pytestmark = pytest.mark.e2e
SEGMENTS = 40
NEW_SEED = 9  # the seed added before the rerun, to the first competitor


def sweep_names(count: int) -> list[str]:
    """``transformer-big lr=3e-4 warmup=4000 s=02``: the names a sweep reported as systems gets."""
    return [
        f"transformer-{('base', 'big')[i % 2]} lr={(1, 3, 5)[i % 3]}e-4 "
        f"warmup={(2000, 4000, 8000, 16000)[i % 4]} v{i:02d}"
        for i in range(count)
    ]


def scores(names: list[str], extra: bool) -> pd.DataFrame:
    """Per-segment scores: system i better by 0.4 i points, 2 or 3 seeds each (facet
    ``dropout`` cycling over the runs), a numeric property; ``extra``: one more seed of the
    first competitor, drawn last so that every other run stays as it was."""
    rng = np.random.default_rng(44)
    length = rng.integers(5, 60, SEGMENTS)
    difficulty = rng.normal(0, 8, SEGMENTS)
    runs = [(i, seed) for i in range(len(names)) for seed in range(3 if i % 2 == 0 else 2)]
    runs += [(1, NEW_SEED)] if extra else []
    rows = []
    for run, (i, seed) in enumerate(runs):
        values = 50 + 0.4 * i + rng.normal(0, 1) + difficulty + rng.normal(0, 5, SEGMENTS)
        rows += [
            {
                "segment": f"seg{j}",
                "system": names[i],
                "seed": seed,
                "dropout": f"{(0.1, 0.2, 0.3)[run % 3]}",
                "length": int(length[j]),
                "bleu": float(values[j]),
            }
            for j in range(SEGMENTS)
        ]
    return pd.DataFrame(rows)


def write_experiment(root: Path, count: int, extra: bool = False) -> list[str]:
    names = sweep_names(count)
    root.mkdir(parents=True, exist_ok=True)
    scores(names, extra).to_csv(root / "scores.csv", index=False)
    config = {
        "experiment": f"{count} systems of a sweep",
        "scores": "scores.csv",
        "columns": {
            "segment": "segment",
            "system": "system",
            "run": ["system", "seed"],
            "metrics": ["bleu"],
            "facets": ["dropout"],
            "properties": ["length"],
        },
        "better": {"bleu": "higher"},
        "scale": {"bleu": "points"},
        "baseline": names[0],
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return names


@pytest.fixture(scope="module", params=[15, 24], ids=lambda n: f"{n}-systems")
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of ``count`` systems; with 15, of the rerun after a new seed (look 2)."""
    count = request.param
    root = tmp_path_factory.mktemp(f"wide{count}") / "run"
    write_experiment(root, count)
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-4000:]
    if count == 15:
        write_experiment(root, count, extra=True)
        result = run_snakemake(root)
        assert result.returncode == 0, result.stderr[-4000:]
    return root / "results" / "report.html"


@pytest.fixture(scope="module")
def page(chromium_executable: str, report: Path) -> Iterator[Browser]:
    with Browser(chromium_executable, timeout=180) as browser:
        browser.open(report.as_uri(), width=WIDTH, height=SCREEN)
        browser.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        yield browser


def test_no_figure_label_overlaps_or_is_clipped(page: Browser) -> None:
    assert label_problems(page) == []


def test_the_header_says_what_changed_since_the_last_look(report: Path) -> None:
    """After the rerun that added a seed to the first competitor (15 systems), the header names
    look 2 and the run gained; a first run (24 systems) has no such line."""
    html = report.read_text(encoding="utf-8")
    names = sweep_names(24)
    line = (
        "look 2 of an undeclared sequence, recorded in scores.ledger.tsv; new since look 1: "
        f"{names[1]}: +1 run</dd>"
    )
    assert (line in html) == ("15 systems of a sweep" in html)
    assert ("This run" in html) == ("15 systems of a sweep" in html)
