"""Every interval is labelled with the level it was computed at (issue 42, item 1): at
``report.alpha`` 0.01, 0.05 and 0.2 the decision's intervals are (1 − α) intervals, and the
record, the sentence to quote, the decision table's header and the paste-ready LaTeX and
Markdown (header and caption) say 99 %, 95 % and 80 %; the model means and ranks, computed at
95 % whatever α, say 95 %. The workflow's own test at the three levels, every surface of the
page included, is tests/e2e/test_interval_levels.py."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
from scipy import stats
from workflow_helpers import kreutzer_ter

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import FAMILY_BASELINE, PairDecision
from infrepro.report.decisions import sentence
from infrepro.report.paper import header, paper_files

LEVELS = {0.01: "99 %", 0.05: "95 %", 0.2: "80 %"}
PERCENT = re.compile(r"(\d+(?:\.\d+)?)(?: |~|\\,)?(?:\\)?%")


@pytest.fixture(scope="module")
def data():
    return kreutzer_ter(with_properties=False)


def decided(data, alpha: float, adjust: str) -> tuple[pd.DataFrame, list[PairDecision]]:
    result = decide(data, FitLog(data.metric), Settings(alpha=alpha, adjust=adjust, seed=1))
    return result.summary, [r for r in result.records if r.family == FAMILY_BASELINE]


@pytest.mark.parametrize("adjust", ["step-down", "max-t", "holm"])
@pytest.mark.parametrize("alpha", list(LEVELS))
def test_report_alpha_other_than_0_05_labels_intervals_with_their_level(
    data, alpha: float, adjust: str
) -> None:
    summary, records = decided(data, alpha, adjust)
    level = LEVELS[alpha]
    kind = {"step-down": "step-down", "max-t": "simultaneous", "holm": "unadjusted"}[adjust]
    for record in records:
        assert record.interval == f"{kind} {level}", record.interval
        # the interval is the one of that level: Holm's is the t interval at 1 − α, max-t's
        # and the step-down's critical values lie beyond it (a level α / m or more, below α)
        t = stats.t.ppf(1 - alpha / 2, record.df)
        if adjust == "holm":
            assert record.critical == pytest.approx(t, rel=1e-9)
        else:
            assert record.critical >= t * (1 - 1e-9)
        assert math.isclose(record.upper - record.lower, 2 * record.critical * record.se)
        said = sentence(record, "TER")
        assert f"({kind} {level} CI)" in said, said
        assert (level == "95 %") == ("95 %" in said), said
    titles = [" ".join(h) for h in header(records)]
    improvement = next(t for t in titles if t.startswith("Improvement"))
    assert improvement == f"Improvement [{level} CI, {kind}]"
    tex, md = paper_files(summary, records, data.metric, "lower", alpha)
    for text in (tex, md):
        body = text.replace("\\%", "%").replace("~", " ")
        assert f"{kind} {level} intervals" in body
        assert f"α = {alpha:g}" in body or rf"$\alpha$ = {alpha:g}" in body
        # every level the file states is the decision's or the means' 95 %
        assert {m.group(1) for m in PERCENT.finditer(body)} <= {level[:-2], "95"}, body
        assert "Model means with 95 % CI" in body and "Rank (95 %)" in body


def test_level_text_reads_decimal_levels() -> None:
    from infrepro.core.decisions import interval_parts, level_text

    assert [level_text(1 - a) for a in (0.1, 0.001, 0.025)] == ["90 %", "99.9 %", "97.5 %"]
    assert interval_parts("anytime-valid 99.9 %") == ("anytime-valid", "99.9 %")
