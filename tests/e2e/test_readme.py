"""End-to-end: the README's shell blocks, run verbatim and in order in a fresh copy of the
repository, with this test's Python environment first on PATH.

A block preceded by ``<!-- not run in tests: reason -->`` is not run (installing packages, the
test suite itself, a cluster, long benchmarks); every other ```bash block is. Before the Quick
start's blocks the copy gets what that section asks a user to have: a test set (``testset.tsv``)
and a folder of outputs, ``outputs/<system>/<seed>.txt`` (the bundled example's hypotheses of the
baseline's six seeds and of one competitor setting's three).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from readme_numbers import WORD, is_number, number
from workflow_helpers import REPO_ROOT, job_counts

pytestmark = pytest.mark.e2e

NOT_RUN = re.compile(r"<!-- not run in tests: (.+) -->")
SHELL_FENCE = re.compile(r"```(?:bash|sh|shell)\s*$")
IGNORED = (".git", ".snakemake", "results", "logs", ".venv*", "__pycache__", "*.egg-info")
# "When new seeds arrive": the sentence that says what `snakemake -n` plans
PLAN = re.compile(rf"The plan \(`-n`\) lists ({WORD}) jobs: (.*?)\.(?:\s|$)")
ANALYSIS_JOBS = re.compile(rf"the ({WORD}) analysis jobs \(({WORD}) analyses × ({WORD}) metrics\)")
NAMED_RULE = re.compile(rf"(?:\b({WORD}) )?`(\w+)`")  # a rule in backquotes, after its count
DRY_RUN_END = "This was a dry-run"
QUICK_START = "Quick start"
HEREDOC = re.compile(r"cat > (\S+) <<'EOF'\n(.*?)\nEOF\n", re.S)
EXAMPLE = Path("resources/example")
# the runs the Quick start's folder holds: {system: (the bundled file of each seed, 1, 2, ...)}
OWN_OUTPUTS = {
    "baseline": tuple(f"baseline_s{seed}.txt" for seed in range(1, 7)),
    "competitor": tuple(f"competitor_l0.5_gauss_s{seed}.txt" for seed in (1, 2, 3)),
}


@dataclass(frozen=True)
class Block:
    """One shell block of the README: its section, its code, why it is not run (or None)."""

    heading: str
    code: str
    not_run: str | None


def shell_blocks(text: str) -> list[Block]:
    """The README's shell blocks in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    heading, index = "", 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and not blocks_open(lines, index):
            heading = line.lstrip("#").strip()
        if SHELL_FENCE.fullmatch(line):
            end = lines.index("```", index + 1)
            previous = next((p for p in reversed(lines[:index]) if p.strip()), "")
            marker = NOT_RUN.fullmatch(previous.strip())
            code = "\n".join(lines[index + 1 : end]) + "\n"
            blocks.append(Block(heading, code, marker.group(1) if marker else None))
            index = end
        index += 1
    return blocks


def blocks_open(lines: list[str], index: int) -> bool:
    """Whether line ``index`` is inside a fenced block (a ``#`` there is a comment)."""
    return sum(1 for line in lines[:index] if line.startswith("```")) % 2 == 1


def own_outputs(root: Path) -> list[str]:
    """A user's test set and folder of outputs, as the Quick start describes them, in ``root``;
    the run ids the runs pattern makes of them."""
    shutil.copy2(root / EXAMPLE / "testset.tsv", root / "testset.tsv")
    ids = []
    for system, files in OWN_OUTPUTS.items():
        (root / "outputs" / system).mkdir(parents=True)
        for seed, name in enumerate(files, 1):
            shutil.copy2(root / EXAMPLE / "hyps" / name, root / "outputs" / system / f"{seed}.txt")
            ids.append(f"{system}_{seed}")
    return ids


def readme_blocks() -> list[Block]:
    return shell_blocks((REPO_ROOT / "README.md").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class StatedPlan:
    """What README says `snakemake -n` plans after a new seed: the jobs in all; the analysis
    rules (``analysis_*``), the metrics (jobs per analysis rule) and their jobs; every other
    rule it names in backquotes, with its count (a number word before it, else one)."""

    total: int
    analyses: int
    metrics: int
    analysis_jobs: int
    rules: dict[str, int]


def stated_plan(readme: str) -> StatedPlan:
    """The plan README's sentence ("The plan (`-n`) lists N jobs: ...") states."""
    found = PLAN.search(" ".join(readme.split()))
    assert found is not None, "README states no plan: 'The plan (`-n`) lists N jobs: ...'"
    analysis = ANALYSIS_JOBS.search(found.group(2))
    assert analysis is not None, f"no 'the N analysis jobs (A analyses × M metrics)': {found[0]}"
    named = NAMED_RULE.findall(found.group(2).replace(analysis.group(0), ""))
    rules = {rule: number(count) if is_number(count) else 1 for count, rule in named}
    assert len(rules) == len(named), f"a rule named twice: {found[0]}"
    jobs, analyses, metrics = (number(word) for word in analysis.groups())
    return StatedPlan(number(found.group(1)), analyses, metrics, jobs, rules)


def assert_plan_as_stated(plan: dict[str, int], stated: StatedPlan) -> None:
    """Every count and rule the sentence names is the plan's ({rule: jobs}, job_counts), and
    the plan has no rule the sentence omits."""
    analysis = {rule: n for rule, n in plan.items() if rule.startswith("analysis_")}
    others = {rule: n for rule, n in plan.items() if rule not in analysis}
    assert stated.rules == others, f"README names {stated.rules}; the plan has {others}"
    assert (len(analysis), sum(analysis.values())) == (stated.analyses, stated.analysis_jobs)
    assert set(analysis.values()) == {stated.metrics}, analysis
    assert stated.analysis_jobs == stated.analyses * stated.metrics
    assert sum(plan.values()) == stated.total, plan


def fresh_copy(destination: Path) -> Path:
    """The repository's files as a fresh clone has them: the files git tracks or would track
    (uncommitted edits included), else everything but outputs, caches and environments."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        shutil.copytree(REPO_ROOT, destination, ignore=shutil.ignore_patterns(*IGNORED))
        return destination
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def test_every_block_not_run_says_why_and_the_guide_is_run() -> None:
    blocks = readme_blocks()
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    markers = re.findall(rf"^{NOT_RUN.pattern}$", text, re.M)
    assert len(markers) == sum(b.not_run is not None for b in blocks), (
        "a `not run in tests` marker must stand right before a ```bash block"
    )
    run = {b.heading for b in blocks if b.not_run is None}
    assert {QUICK_START, "Run", "Describe your own experiment", "When new seeds arrive"} <= run
    assert blocks[0].heading == QUICK_START, "the Quick start comes first"


def test_the_quick_start_is_three_commands_with_a_short_config() -> None:
    """From a fresh clone: install, write a config of at most six lines, run (each a command);
    the config is one the schema takes, with its runs as a path pattern."""
    import yaml

    from infrepro.io.config import check_config

    blocks = [b for b in readme_blocks() if b.heading == QUICK_START]
    (install,) = [b for b in blocks if b.not_run is not None]
    assert install.code.startswith("pip install")
    (written,) = [HEREDOC.search(b.code) for b in blocks if b.not_run is None]
    assert written is not None, "the Quick start writes its config with cat > <file> <<'EOF'"
    config = written.group(2)
    assert len(config.splitlines()) <= 6
    code = [b for b in blocks if b.not_run is None][0].code.replace(written.group(0), "")
    commands = [line for line in code.splitlines() if line.strip()]
    assert commands == [f"snakemake --cores 2 --configfile {written.group(1)}"]
    assert "{system}" in yaml.safe_load(config)["runs"]
    check_config(yaml.safe_load(config))


def test_readme_shell_blocks_run_verbatim(tmp_path: Path) -> None:
    """Each block runs in the copy with status 0; the Quick start's makes a report on the folder
    of outputs, whose runs are the files; the new-seed block plans and scores only the new run,
    and its results include it."""
    root = fresh_copy(tmp_path / "clone")
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    outputs: dict[str, str] = {}
    own: list[str] | None = None
    for block in readme_blocks():
        if block.not_run is not None:
            continue
        if block.heading == QUICK_START and own is None:
            own = own_outputs(root)
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.code],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        output = result.stdout + result.stderr
        assert result.returncode == 0, (
            f"README block under {block.heading!r}:\n{block.code}\n{output[-3000:]}"
        )
        outputs[block.heading] = outputs.get(block.heading, "") + output
        if block.heading == QUICK_START:
            runs = pd.read_csv(root / "results" / "tables" / "runs.csv", dtype=str)
            assert list(runs["run_id"]) == own, runs
            assert set(runs["seed"]) == {"1", "2", "3", "4", "5", "6"}
            html = (root / "results" / "report.html").read_text(encoding="utf-8")
            assert "<code>runs: outputs/{system}/{seed}.txt</code> matched" in html
        if block.heading == "Run":
            assert (root / "results" / "report.html").is_file()
        if block.heading == "When new seeds arrive":
            assert DRY_RUN_END in output, output[-3000:]
            plan = job_counts(output.split(DRY_RUN_END, 1)[0])
            assert plan["score_run"] == 1, output[-3000:]
            assert_plan_as_stated(plan, stated_plan(text))
            means = pd.read_csv(root / "results" / "tables" / "run_means.csv")
            assert "competitor_l0.5_gauss_s4" in set(means["run_id"])
    assert {QUICK_START, "When new seeds arrive"} <= set(outputs)


def test_the_plan_check_sees_a_wrong_count_or_rule() -> None:
    """The check above fails when README's sentence leaves out a planned rule, names one that is
    not planned, or states a wrong count (the plan here: the one the sentence states)."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    sentence = PLAN.search(" ".join(readme.split())).group(0)
    stated = stated_plan(sentence)
    plan = dict(stated.rules)
    plan.update({f"analysis_{i}": stated.metrics for i in range(stated.analyses)})
    assert_plan_as_stated(plan, stated)
    analyses = ANALYSIS_JOBS.search(sentence).group(0)
    wrong = [
        sentence.replace("`paper_tables`, ", ""),  # a planned rule left out
        sentence.replace("`collect_tables`", "`collect_tables`, `make_coffee`"),  # not planned
        sentence.replace(" one `score_run`", " two `score_run`"),
        sentence.replace(analyses, "the 15 analysis jobs (5 analyses × 3 metrics)"),
        PLAN.sub(lambda m: m.group(0).replace(m.group(1), str(stated.total + 1), 1), sentence),
    ]
    for text in wrong:
        assert text != sentence
        with pytest.raises(AssertionError):
            assert_plan_as_stated(plan, stated_plan(text))
