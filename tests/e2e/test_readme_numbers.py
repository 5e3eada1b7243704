"""README's numbers (issue 44): every number README prints in digits in its prose is accounted for,
and each one that describes the bundled runs or data is what they give, to its printed digits.

A number is one of:

- a result of the bundled example (``RESULTS``): checked against the tables of the example run
  and of ``config/sequential.yaml`` (the session's shared runs, tests/e2e/conftest.py);
- a fact of a bundled file (``FILES``): checked against that file (the data, a benchmark's
  results, pyproject.toml), without running the workflow;
- checked by another test (``ELSEWHERE``): the plan after a new seed (tests/e2e/test_readme.py);
  the worked example's table (its rows, left out of the scan) by test_kreutzer_example.py;
- no claim about data (``ALLOWED``), each with its reason: a citation, a wall time.

Fenced blocks (commands), code spans (names, options), link targets and list markers are no
claims and are left out; numbers spelled in words are counts that test_readme_counts.py (tests
that may skip) and test_readme.py (the plan's one ``score_run``) check. Each pattern must match
README exactly once, so a reworded sentence fails here rather than going unchecked.
"""

from __future__ import annotations

import gzip
import json
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from readme_numbers import as_printed
from workflow_helpers import REPO_ROOT

from infrepro.report.verdict import PAPER_GLRT_LEVEL

pytestmark = pytest.mark.e2e  # runs on the worker of the example run (tests/conftest.py)

N = r"(\d[\d.,]*\d|\d)"  # one number as README prints it: 7.1, 0.046, 1,041, 33
# a number in prose: not a part of a name, a section (§4.2), a range's second end or a version
NUMBER = re.compile(r"(?<![\w.§/,-])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:e[-+]\d+)?)(?![\w.]\w)")

RESULTS = {
    "best vs best": rf"best vs best favours the competitor \(TER {N} points better\)",
    "over retraining": (
        rf"over retraining the baseline is better \(TER {N} points, p = {N}; "
        rf"the run-SD ratio, {N}, lies outside the band"
    ),
    "three looks": (
        rf"The example as three looks \(TER: worse at p = {N} in one look, \"no difference "
        rf"shown\" at the planned maximum, repeated p = {N}\)"
    ),
}
FILES = {
    "python": rf"Python ≥ {N}",
    "first run": rf"first run takes {N}× a warm run",
    "sentences": rf"three replications each\) on {N} test sentences",
    "grids": rf"the bundled grids hold {N} and {N} configurations",
    "paper GLRT level": rf"rejects identical systems in {N}-{N} % of simulated A-vs-A",
}
ELSEWHERE = {
    "tests/e2e/test_readme.py: the plan of `snakemake -n` after a new seed": (
        rf"The plan \( \) lists {N} jobs: .*? the {N} analysis jobs \({N} analyses × {N} metrics\)"
    ),
}
ALLOWED = {
    "a citation (the paper's venue and year)": rf"\(ICLR {N}\)",
    "a citation (the data's authors and year)": rf"Kreutzer et al\. \({N}\) The thesis",
    "a citation (the thesis' year and chapters)": rf"\(Hagmann {N}, chapters {N} and {N}\)",
    "a wall time on a developer's two idle cores; it varies with the machine": (
        rf"in about {N} s on two idle cores"
    ),
    "a wall time on a developer's machine; it varies with the machine": (rf"each in about {N} s"),
    "the tolerance of test_kreutzer_example.py and the thesis' printed bound, not results": (
        rf"\(Table {N}'s p to {N}; bold: printed \"< {N}\" by the thesis"
    ),
    "the thesis' table numbers and its grid's size, as the thesis prints them": (
        rf"Tables {N}-{N} \(meta-parameter grids\).*?configurations, not {N} \("
    ),
}
PATTERNS = {**RESULTS, **FILES, **ELSEWHERE, **ALLOWED}
META_PARAMETERS = [
    "learning_rate",
    "seed",
    "encoder_dropout",
    "decoder_dropout",
    "decoder_dropout_hidden",
    "delta_scheme",
]


def readme_prose(text: str) -> str:
    """README's prose on one line: no fenced blocks, table rows (the worked example's, checked by
    test_kreutzer_example.py), code spans, link targets or list markers."""
    text = re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)
    lines = [line for line in text.splitlines() if not line.startswith("| ")]
    text = "\n".join(re.sub(r"^\d+\. ", "", line) for line in lines)
    text = re.sub(r"`[^`\n]+`", " ", text)
    text = re.sub(r"\]\([^)\s]*\)", "]", text)
    return " ".join(text.split())


def stated(prose: str, patterns: dict[str, str]) -> dict[str, list[str]]:
    """Each pattern's numbers as README prints them; each pattern matches exactly once."""
    found = {}
    for name, pattern in patterns.items():
        matches = list(re.finditer(pattern, prose))
        assert len(matches) == 1, f"README states {name!r} {len(matches)} times: {pattern}"
        found[name] = list(matches[0].groups())
    return found


def uncovered(prose: str, patterns: dict[str, str]) -> list[str]:
    """The numbers of ``prose`` that no pattern's number group covers, with their context."""
    spans = [
        match.span(group)
        for pattern in patterns.values()
        for match in re.finditer(pattern, prose)
        for group in range(1, (match.lastindex or 0) + 1)
    ]
    return [
        prose[max(0, m.start() - 40) : m.end() + 20]
        for m in NUMBER.finditer(prose)
        if not any(start <= m.start() < end for start, end in spans)
    ]


@pytest.fixture(scope="module")
def prose() -> str:
    return readme_prose((REPO_ROOT / "README.md").read_text(encoding="utf-8"))


def test_every_number_readme_prints_is_checked_or_allowed(prose: str) -> None:
    stated(prose, PATTERNS)
    missing = uncovered(prose, PATTERNS)
    assert not missing, f"README numbers with no check and no reason: {missing}"
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    worked = text.split("### Worked example", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows == [line for line in worked.splitlines() if line.startswith("| ")], (
        "a table outside the worked example: its numbers would not be scanned"
    )


def test_a_new_number_or_a_reworded_claim_is_caught(prose: str) -> None:
    """The scan sees a number no pattern covers, and a claim whose sentence changed."""
    (extra,) = uncovered(prose + " It runs 12 jobs.", PATTERNS)
    assert extra.endswith("It runs 12 jobs.")
    with pytest.raises(AssertionError, match="0 times"):
        stated(prose.replace("favours the competitor", "favors the competitor"), RESULTS)


def configurations(name: str) -> int:
    """The number of meta-parameter configurations in a bundled grid file."""
    frame = pd.read_csv(REPO_ROOT / "resources/kreutzer2020" / name, usecols=META_PARAMETERS)
    return len(frame.drop_duplicates())


def file_values() -> dict[str, list[str]]:
    """The numbers FILES states, as the files give them (formatted as README prints them)."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    first_run = json.loads((REPO_ROOT / "benchmarks/results/first_run.json").read_text())
    with gzip.open(REPO_ROOT / "resources/kreutzer2020/data_ter.csv.gz", "rt") as handle:
        sentences = pd.read_csv(handle, usecols=["sentence_id"])["sentence_id"].nunique()
    level = re.search(r"(\d+)-(\d+) %", PAPER_GLRT_LEVEL)
    validity = (REPO_ROOT / "benchmarks/results/validity.md").read_text(encoding="utf-8")
    low = re.search(
        r"paper's GLRT, which treats runs as fixed, declares identical systems "
        r"different in (\d+)-\d+ %",
        " ".join(validity.split()),
    )
    high = re.search(r"already rejects (\d+) % under the null", " ".join(validity.split()))
    assert level is not None and low is not None and high is not None
    assert [low.group(1), high.group(1)] == list(level.groups()), "the report's level is stale"
    return {
        "python": [pyproject["project"]["requires-python"].removeprefix(">=")],
        "first run": [as_printed(first_run["trees"]["after"]["ratio"], "0.00")],
        "sentences": [f"{sentences:,}"],
        "grids": [
            str(configurations("data_hyperparameter-marking_partial.csv.gz")),
            str(configurations("data_hyperparameter-marking_full.csv.gz")),
        ],
        "paper GLRT level": list(level.groups()),
    }


def test_readme_numbers_are_the_bundled_files(prose: str) -> None:
    """Facts of bundled files: the Python version, the first run's measured ratio, the data's
    sentences and grids, the paper GLRT's measured level (as the report and validity.md say)."""
    assert stated(prose, FILES) == file_values()


def decision(root: Path, metric: str = "ter") -> pd.Series:
    """The decision of the competitor against the baseline (the baseline's family)."""
    frame = pd.read_csv(root / "results/tables/decisions.csv")
    rows = frame[(frame["metric"] == metric) & (frame["family"] == "baseline")]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def result_values(example: Path, sequential: Path) -> dict[str, list[float]]:
    """The numbers RESULTS states, from the runs' tables, in the order README prints them; the
    words around them (better, worse, reversed, outside the band) checked on the way."""
    one, looks = decision(example), decision(sequential)
    assert one["verdict"] == "worse" and one["survival"] == "reversed over retraining"
    assert one["best_vs_best"] > 0 and one["run_sd_ratio"] > one["band"]
    assert looks["verdict"] == "no difference shown" and looks["looks"] == 3
    assert looks["action"] == "stop: maximum reached"
    return {
        "best vs best": [100 * one["best_vs_best"]],
        "over retraining": [-100 * one["improvement"], one["p_adjusted"], one["run_sd_ratio"]],
        "three looks": [one["p_adjusted"], looks["p_adjusted"]],
    }


def printed_as(values: dict[str, list[float]], printed: dict[str, list[str]]) -> dict:
    """``values`` with the digits README prints."""
    return {
        name: [as_printed(v, text) for v, text in zip(values[name], printed[name], strict=True)]
        for name in printed
    }


def test_readme_numbers_are_the_bundled_example_results(
    prose: str, example_run: Path, sequential_example_run: Path
) -> None:
    printed = stated(prose, RESULTS)
    values = result_values(example_run, sequential_example_run)
    assert printed_as(values, printed) == printed


def test_a_wrong_digit_is_caught() -> None:
    """The comparison above fails when one printed digit differs from the value."""
    printed = {"over retraining": ["3.84", "0.046", "7.1"]}
    assert printed_as({"over retraining": [3.8447, 0.04559, 7.0618]}, printed) == printed
    wrong = {"over retraining": ["3.85", "0.046", "7.1"]}
    assert printed_as({"over retraining": [3.8447, 0.04559, 7.0618]}, wrong) != wrong
