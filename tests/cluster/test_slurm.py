"""The workflow on a real single-node SLURM cluster gives the same results as a local run.

Opt-in, because it starts daemons and takes minutes: `INFREPRO_SLURM_TEST=1 pytest
tests/cluster` runs the whole bundled example, `INFREPRO_SLURM_TEST=quick` a smaller part of it
(4 of its 24 runs, TER only, the system comparisons only). It needs root and Debian's
`slurmctld slurmd slurm-client munge` packages plus the `.[slurm]` extra; once opted in, their
absence is a failure, not a skip. start_slurm.sh starts munged, slurmctld and slurmd; the
example runs once with `snakemake --cores 2` and once with `snakemake --profile profiles/slurm`;
(side by side, as the SLURM run mostly waits); every result file must be the same (CSV byte
for byte, Parquet frame-equal); stop_slurm.sh ends the daemons whatever happens.

Both modes also check that the data-sized rules (assemble, analysis_*, collect_tables) ask SLURM
for resources computed from the evaluation table (infrepro/workflow/resources.py) rather than the
profile's defaults: a dry run with the SLURM profile on the example plus a fake evaluation table
of 50 times the paper's rows prints every planned analysis job's mem_mb and runtime. The dry
run plans the SLURM jobs without submitting them, so this check needs no running cluster.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO_ROOT, copy_example, job_counts, snakemake_command

HERE = Path(__file__).resolve().parent
QUICK_RUNS = 4  # quick mode: the first two baseline and two competitor runs
SLURM_TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")
TIMEOUT = 3600  # seconds per Snakemake run

# Opt-in: every test requests the slurm_opt_in fixture (tests/conftest.py), directly or through
# slurm_env, and skips without INFREPRO_SLURM_TEST (a skip that fails the run under CI).
pytestmark = pytest.mark.cluster


def which(tool: str) -> str | None:
    """A tool on PATH or in /usr/sbin (where Debian puts the daemons)."""
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin")


def missing_requirements() -> list[str]:
    """What this test needs and this machine lacks."""
    missing = [tool for tool in SLURM_TOOLS if which(tool) is None]
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        missing.append("snakemake-executor-plugin-slurm (pip install -e '.[slurm]')")
    if os.geteuid() != 0:
        missing.append("root (slurmd runs jobs as their user)")
    return missing


@pytest.fixture(scope="module")
def slurm_env(
    slurm_opt_in: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """A running single-node SLURM cluster; the environment that points its commands at it."""
    missing = missing_requirements()
    assert not missing, f"INFREPRO_SLURM_TEST is set but this machine lacks: {missing}"
    state = tmp_path_factory.mktemp("slurm")
    env = {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}:/usr/sbin"
    try:
        started = subprocess.run(
            ["bash", str(HERE / "start_slurm.sh"), str(state)],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
        assert started.returncode == 0, started.stdout + started.stderr
        yield env
    finally:
        subprocess.run(
            ["bash", str(HERE / "stop_slurm.sh"), str(state)],
            capture_output=True,
            env=env,
            timeout=180,
        )


def example(destination: Path, mode: str) -> Path:
    """The bundled example's config and data in ``destination`` (reduced in quick mode)."""
    copy_example(destination)
    config_path = destination / "config" / "config.yaml"
    if mode == "quick":
        runs_path = destination / "config" / "runs.tsv"
        runs = pd.read_csv(runs_path, sep="\t", dtype=str, keep_default_na=False)
        subset = runs.groupby("system", sort=False).head(QUICK_RUNS // 2)
        subset.to_csv(runs_path, sep="\t", index=False)
        # The committed ledger records the full example's runs; the subset is another
        # experiment, whose looks start over (a run withdrawn after a look is refused).
        (destination / "config" / "runs.ledger.tsv").unlink()
        config = yaml.safe_load(config_path.read_text())
        config["metrics"] = ["ter"]
        config.setdefault("analyses", {})["run"] = ["comparison"]  # keeps dev_score_better
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    return destination


def start_snakemake(
    workdir: Path, *options: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start the repository's workflow on the example in ``workdir`` (all of `rule all`)."""
    command = [*snakemake_command(workdir, workdir / "config" / "config.yaml"), *options]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workdir,
        env=env,
    )


def finish(process: subprocess.Popen[str]) -> str:
    """Wait for a Snakemake run from start_snakemake; its output (stdout, then stderr)."""
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
    assert process.returncode == 0, (stdout + stderr)[-6000:]
    return stdout + stderr


def result_files(root: Path) -> dict[str, Path]:
    """Every file under ``root/results``, by its path relative to the working directory."""
    return {
        str(path.relative_to(root)): path
        for path in sorted((root / "results").rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def runs(
    slurm_opt_in: str, slurm_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, str]:
    """The example run locally and on SLURM: (local root, SLURM root, SLURM run's output).

    Both runs go side by side: the SLURM run spends most of its time waiting for job states."""
    local = example(tmp_path_factory.mktemp("local"), slurm_opt_in)
    cluster = example(tmp_path_factory.mktemp("slurm_run"), slurm_opt_in)
    on_slurm = start_snakemake(
        cluster,
        "--profile",
        str(REPO_ROOT / "profiles" / "slurm"),
        # No accounting database on the test cluster: job states come from squeue, first 1 s
        # after submission (then every 11, 21, ... s while no job ends; 1 s again after one does).
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "1",
        env=slurm_env,
    )
    try:
        finish(start_snakemake(local, "--cores", "2"))
    finally:
        output = finish(on_slurm)
    return local, cluster, output


LARGE_ROWS = 50 * 551_520  # 50 times the paper's evaluation table


def planned_resources(output: str, rule: str) -> dict[str, str]:
    """{resource: value} of the (last) job of ``rule`` in a dry run."""
    planned: dict[str, str] = {}
    for block in output.split(f"rule {rule}:")[1:]:
        found = re.search(r"resources: (.*)", block)
        assert found is not None, block
        planned = dict(item.split("=", 1) for item in found.group(1).split(", "))
    return planned


def test_analysis_jobs_ask_for_what_a_large_evaluation_table_needs(
    slurm_opt_in: str, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from infrepro.core.registry import ANALYSES
    from infrepro.workflow.resources import ANALYSIS_COST

    profile_dir = REPO_ROOT / "profiles" / "slurm"
    profile = yaml.safe_load((profile_dir / "config.yaml").read_text())
    default = profile["default-resources"]
    rules = ["assemble", *(f"analysis_{a}" for a in ANALYSES), "collect_tables"]
    assert not set(rules) & set(profile["set-resources"])
    root = example(tmp_path / "large", slurm_opt_in)
    # From scratch, the data-sized jobs' resources wait for their input (<TBD> in the plan).
    scratch = finish(start_snakemake(root, "--profile", str(profile_dir), "--dry-run"))
    planned_rules = [rule for rule in rules if f"rule {rule}:" in scratch]
    assert "assemble" in planned_rules and "collect_tables" in planned_rules
    assert any(rule.startswith("analysis_") for rule in planned_rules)  # quick: comparison only
    for rule in planned_rules:
        values = planned_resources(scratch, rule)
        assert values["mem_mb"] == "<TBD>" and values["runtime"] == "<TBD>", (rule, values)
    # A large evaluation table (one cheap int8 column: only the Parquet footer is read).
    results = root / "results"
    (results / "inputs").mkdir(parents=True)
    (results / "tables").mkdir(parents=True)
    column = pa.repeat(pa.scalar(0, pa.int8()), LARGE_ROWS)
    pq.write_table(pa.table({"x": column}), results / "evaluation.parquet", compression="zstd")
    systems = ["baseline", "comp", "other"]  # the runs table's systems size memory too
    pq.write_table(pa.table({"system": systems}), results / "inputs" / "runs.parquet")
    (results / "tables" / "property_bins.csv").touch()
    targets = [f"results/analyses/ter/{a}/diagnostics.csv" for a in ANALYSES]
    options = ["--profile", str(profile_dir), "--dry-run", "--allowed-rules"]
    options += [f"analysis_{a}" for a in ANALYSES]
    plan = finish(start_snakemake(root, *options, "--", *targets))
    planned = {a: planned_resources(plan, f"analysis_{a}") for a in ANALYSES}
    for analysis, values in planned.items():
        cost = ANALYSIS_COST[analysis]
        mem_mb = cost.mem_mb(LARGE_ROWS, systems=len(systems), runs=1)
        assert int(values["mem_mb"]) == mem_mb > int(default["mem_mb"])
        assert int(values["runtime"]) == cost.runtime(LARGE_ROWS)
    # the slowest analyses need more time than the default too (the fast ones need less)
    assert int(planned["conditional"]["runtime"]) > int(default["runtime"])
    assert int(planned["metaparam"]["runtime"]) > int(default["runtime"])


def slurm_submissions(output: str) -> dict[str, str]:
    """{SLURM job id: the rule_<rule> or group_<group> its log folder names}."""
    pattern = r"submitted with SLURM jobid (\d+) \(log: \S*?/slurm_logs/((?:rule|group)_[^/]+)/"
    return dict(re.findall(pattern, output))


def scoring_batch_size() -> int:
    """The number of score_run jobs per SLURM job set by the profile's group-components."""
    profile = yaml.safe_load((REPO_ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    sizes = dict(entry.split("=") for entry in profile["group-components"])
    return int(sizes["scoring"])


def test_jobs_ran_on_slurm_with_scoring_grouped(runs: tuple[Path, Path, str]) -> None:
    _, cluster, output = runs
    counts = job_counts(output)
    n_runs = len(pd.read_csv(cluster / "config" / "runs.tsv", sep="\t"))
    assert counts["score_run"] == n_runs
    assert len({p.parent for p in (cluster / "results" / "scores").glob("*/*.parquet")}) == n_runs
    submitted = sorted(slurm_submissions(output).values())
    # Every job but the target `all` went to SLURM; score_run jobs in batches of the `scoring`
    # group (the profile's group-components), not one SLURM job per run.
    batches = -(-n_runs // scoring_batch_size())
    expected = sorted(
        [
            f"rule_{rule}"
            for rule, n in counts.items()
            if rule not in {"all", "score_run"}
            for _ in range(n)
        ]
        + ["group_scoring_score_run"] * batches
    )
    assert submitted == expected


def test_slurm_results_equal_local_results(runs: tuple[Path, Path, str]) -> None:
    local, cluster, _ = runs
    local_files, cluster_files = result_files(local), result_files(cluster)
    assert sorted(cluster_files) == sorted(local_files)
    assert "results/evaluation.parquet" in local_files
    assert "results/tables/glrt.csv" in local_files
    for name, local_path in local_files.items():
        cluster_path = cluster_files[name]
        if local_path.suffix == ".parquet":
            pd.testing.assert_frame_equal(
                pd.read_parquet(cluster_path), pd.read_parquet(local_path), check_exact=True
            )
        else:
            assert cluster_path.read_bytes() == local_path.read_bytes(), name
