"""The classical tests' edge cases (analyses.classical_tests)."""

from __future__ import annotations

import pandas as pd

from infrepro.analyses import MetricData
from infrepro.analyses.classical import classical_tests
from infrepro.analyses.common.fitlog import FitLog


def test_paired_bootstrap_on_one_segment_is_skipped_with_its_reason() -> None:
    """One difference resampled is always itself: the bootstrap would report the smallest
    possible p. It is skipped, saying why; approximate randomization gives its honest p = 1."""
    evaluation = pd.DataFrame(
        {
            "run_id": ["b1", "b2", "c1", "c2"],
            "system": ["base", "base", "comp", "comp"],
            "segment_id": ["s0"] * 4,
            "ter": [0.5, 0.52, 0.4, 0.41],
        }
    )
    data = MetricData(
        metric="ter",
        better="lower",
        baseline="base",
        evaluation=evaluation,
        runs=evaluation[["run_id", "system"]],
        facets=[],
        properties=[],
        options={"bootstrap": {"samples": 99}, "randomization": {"samples": 99}},
    )
    log = FitLog("ter")
    table = classical_tests(data, log)["classical"].set_index("test")
    assert "paired bootstrap" not in table.index
    assert table.loc["approximate randomization", "p_value"] == "1"
    reasons = list(log.diagnostics()["reason"])
    assert "paired bootstrap: the best runs share 1 segment; resampling needs at least 2" in reasons
