"""Helpers shared by the tests: the bundled example or a small generated experiment in a
temporary folder, the command that runs Snakemake on it (tests/e2e, tests/cluster), and the
bundled Kreutzer et al. (2020) TER data as config/kreutzer2020.yaml reads it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from infrepro.analyses import load_metric_data
from infrepro.analyses.common.data import MetricData
from infrepro.experiment import import_scores
from infrepro.io import ScoresColumns

REPO_ROOT = Path(__file__).resolve().parents[1]
KREUTZER_CONFIG = REPO_ROOT / "config" / "kreutzer2020.yaml"
WORDS = (
    "the a model system data test seed run score value good bad high low new old long short "
    "translation summary evaluation significant variance reliability interaction property "
    "notwithstanding heterogeneity institutional considerable"
).split()


@dataclass
class MiniExperiment:
    """A tiny raw-mode experiment in a temporary folder."""

    root: Path
    n_segments: int

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def runs_path(self) -> Path:
        return self.root / "runs.tsv"

    def config(self) -> dict:
        return yaml.safe_load(self.config_path.read_text())

    def write_config(self, config: dict) -> None:
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    def add_run(self, run_id: str, system: str, seed: str, rng_seed: int) -> None:
        """Write a hypotheses file and append its row to the runs sheet."""
        references = [
            line.split("\t")[2] for line in (self.root / "testset.tsv").read_text().splitlines()[1:]
        ]
        rng = np.random.default_rng(rng_seed)
        path = self.root / "hyps" / f"{run_id}.txt"
        path.write_text("".join(corrupt(ref, rng) + "\n" for ref in references))
        with self.runs_path.open("a") as handle:
            handle.write(f"{run_id}\t{system}\thyps/{run_id}.txt\t{rng.random():.4f}\t{seed}\n")


def sentence(rng: np.random.Generator) -> str:
    n = int(rng.integers(3, 25))
    return " ".join(rng.choice(WORDS, size=n)) + "."


def corrupt(reference: str, rng: np.random.Generator) -> str:
    tokens = reference.split()
    for i in range(len(tokens)):
        if rng.random() < 0.3:
            tokens[i] = str(rng.choice(WORDS))
    if len(tokens) > 3 and rng.random() < 0.3:
        tokens = tokens[2:] + tokens[:2]
    return " ".join(tokens)


def copy_example(destination: Path) -> Path:
    """Copy the bundled example's config and data so the workflow can run in ``destination``."""
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO_ROOT / "config", destination / "config")
    shutil.copytree(REPO_ROOT / "resources" / "example", destination / "resources" / "example")
    return destination


WORKFLOW_FILES = ("Snakefile", "workflow", "scripts", "profiles")


def copy_workflow(destination: Path) -> Path:
    """Copy the workflow (Snakefile, rules, scripts, profiles) without the package's source, as a
    scratch clone to edit or to run against an installed package; returns its Snakefile."""
    destination.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO_ROOT / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)
    return destination / "Snakefile"


DEFAULT_METRICS = ("ter", "rouge1", "rougeL")
DEFAULT_PROPERTIES = ("length", "readability", "word_rarity")


def make_mini_experiment(
    root: Path,
    n_segments: int = 30,
    n_seeds: int = 2,
    *,
    metrics: tuple[str, ...] = DEFAULT_METRICS,
    properties: tuple[str, ...] = DEFAULT_PROPERTIES,
) -> MiniExperiment:
    """Write a test set, hypotheses of baseline and competitor runs, runs sheet and config.

    Every metric adds one job per analysis: tests that need no particular metric or property
    save time with ``metrics=("ter",), properties=("length",)``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "hyps").mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    lines = ["segment_id\tsource\treference"]
    for i in range(n_segments):
        lines.append(f"s{i:03d}\t{sentence(rng)}\t{sentence(rng)}")
    (root / "testset.tsv").write_text("\n".join(lines) + "\n")
    (root / "runs.tsv").write_text("run_id\tsystem\thypotheses\tdev_score\tseed\n")
    experiment = MiniExperiment(root, n_segments)
    for system_index, system in enumerate(["base", "comp"]):
        for seed in range(1, n_seeds + 1):
            experiment.add_run(f"{system}_s{seed}", system, str(seed), 100 * system_index + seed)
    experiment.write_config(
        {
            "experiment": "mini",
            "testset": "testset.tsv",
            "runs": "runs.tsv",
            "baseline": "base",
            "metrics": list(metrics),
            "properties": list(properties),
            "analyses": {"dev_score_better": "higher"},
            "scoring": {"threads": 1},
        }
    )
    return experiment


# A small experiment that runs every rule of the workflow (raw mode, one metric, every analysis
# and property): tests/e2e/conftest.py's `mini_run`, run once for the tests that compare another
# way of running the workflow with the usual one.
MINI_RUN = {"n_segments": 12, "metrics": ("ter",)}


def beside_mini_run(
    request: Any, root: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """The small experiment (MINI_RUN) made at ``root`` and run with ``args`` and ``env`` while
    the session's ``mini_run`` (tests/e2e/conftest.py) is made, if it is not yet (``request``:
    the test's pytest request): (mini_run's folder, this folder, this run's result)."""
    work = make_mini_experiment(root, **MINI_RUN).root
    with ThreadPoolExecutor(max_workers=1) as pool:
        run = pool.submit(run_snakemake, work, *args, env=env)
        shared = request.getfixturevalue("mini_run")
        return shared, work, run.result()


def snakemake_command(
    workdir: Path | None,
    configfile: Path | str | None = None,
    *,
    use_configfile: bool = True,
    snakefile: Path | None = None,
) -> list[str]:
    """The command that runs the repository's workflow (no cores, no targets).

    ``workdir`` None leaves out ``--directory`` (Snakemake then works in its own working
    directory); ``use_configfile`` False leaves out ``--configfile`` (the bundled example's);
    ``snakefile`` runs a copy of the workflow (`copy_workflow`) instead.
    """
    snakefile = snakefile or REPO_ROOT / "Snakefile"
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile)]
    if workdir is not None:
        command += ["--directory", str(workdir)]
    if use_configfile:
        command += ["--configfile", str(configfile or Path(workdir or ".") / "config.yaml")]
    return command


def run_snakemake(
    workdir: Path,
    *args: str,
    configfile: Path | str | None = None,
    targets: tuple[str, ...] = (),
    cwd: Path | None = None,
    directory: bool = True,
    use_configfile: bool = True,
    umask: int | None = None,
    snakefile: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the repository's workflow in ``workdir`` with 2 cores and capture its output.

    By default Snakemake is started in ``workdir`` with ``--directory workdir``; ``cwd`` starts
    it elsewhere, ``directory`` False drops ``--directory``, ``umask`` sets the process's umask,
    ``snakefile`` runs a copy of the workflow, ``env`` sets environment variables for it.
    """
    command = [
        *snakemake_command(
            workdir if directory else None,
            configfile,
            use_configfile=use_configfile,
            snakefile=snakefile,
        ),
        "--cores",
        "2",
        *args,
        *targets,
    ]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=cwd or workdir,
        timeout=900,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
        env=None if env is None else {**os.environ, **env},
    )


TEST_ARTIFACTS = {"report-screenshot.png"}  # written beside the results by the browser test


def digest_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under results/, by relative path (test artifacts left out)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((root / "results").rglob("*"))
        if path.is_file() and path.name not in TEST_ARTIFACTS
    }


def write_scores(path: Path, frame: pd.DataFrame) -> Path:
    """Write a scores-mode file (CSV, gzip when the name ends .gz) with the columns as named."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def two_by_two_scores(path: Path, cells: Callable[[int], dict[str, object]]) -> Path:
    """A scores file of systems A and B with runs 0 and 1 each on segments s0 and s1 (columns
    seg, sys, rep), row k (0 ... 7, in that order) with the columns of ``cells(k)`` too."""
    rows = [
        {"seg": f"s{j}", "sys": s, "rep": r, **cells(4 * i + 2 * r + j)}
        for i, s in enumerate(("A", "B"))
        for r in (0, 1)
        for j in (0, 1)
    ]
    return write_scores(path, pd.DataFrame(rows))


def job_counts(output: str) -> dict[str, int]:
    """Parse Snakemake's 'Job stats' table (dry run or real run) into {rule: count}."""
    counts: dict[str, int] = {}
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == "Job stats:":
            for row in lines[index + 3 :]:
                parts = row.split()
                if len(parts) != 2 or not parts[1].isdigit():
                    break
                if parts[0] != "total":
                    counts[parts[0]] = int(parts[1])
            break
    return counts


def kreutzer_config() -> dict:
    """The shipped scores-mode config of the Kreutzer et al. (2020) TER data."""
    return yaml.safe_load(KREUTZER_CONFIG.read_text())


def kreutzer_ter(with_properties: bool = True) -> MetricData:
    """The Kreutzer TER data as the analyses see them, read as config/kreutzer2020.yaml says
    (with its source-length bins); ``with_properties=False`` drops the property."""
    config = kreutzer_config()
    mapping = dict(config["columns"])
    if not with_properties:
        mapping["properties"] = []
    bins = config["property_options"] if with_properties else {}
    evaluation, runs, property_bins = import_scores(
        str(REPO_ROOT / config["scores"]),
        ScoresColumns.from_config(mapping),
        cuts=bins.get("bins"),
        labels=bins.get("bin_labels"),
    )
    (metric,) = mapping["metrics"]
    return load_metric_data(
        evaluation,
        runs,
        property_bins,
        metric=metric,
        better=config["better"][metric],
        baseline=config["baseline"],
        facets=mapping["facets"],
        properties=mapping["properties"],
        options={},
    )


def many_systems_experiment(
    root: Path, runs: dict[str, int], *, segments: int = 60, seed: int = 5
) -> Path:
    """A scores-mode experiment (one score per run and segment, fractions, higher is better) of
    the systems in ``runs`` (name -> number of runs; the first is the baseline), system means
    spread over 0.3 run-mean SDs to 3, run SD 0.02, segment SD 0.15, residual SD 0.05; returns
    its config's path (analyses: comparison and summary)."""
    rng = np.random.default_rng(seed)
    seg = rng.normal(0.0, 0.15, segments)
    rows = []
    for i, (system, n) in enumerate(runs.items()):
        mean = 0.5 + 0.012 * (i % 5) * (1 if i % 2 else -1)
        for r in range(n):
            level = mean + rng.normal(0.0, 0.02)
            scores = np.clip(level + seg + rng.normal(0.0, 0.05, segments), 0.0, 1.0)
            rows += [
                {"segment": f"g{j:03d}", "system": system, "seed": str(r + 1), "score": v}
                for j, v in enumerate(scores)
            ]
    root.mkdir(parents=True, exist_ok=True)
    write_scores(root / "scores.csv", pd.DataFrame(rows))
    analyses = {"run": ["comparison", "summary"]}
    return scores_config(root, f"{len(runs)} systems", next(iter(runs)), analyses)


def scores_config(
    root: Path,
    name: str,
    baseline: str,
    analyses: dict[str, object],
    metric: str = "score",
    scale: str | None = None,
    **columns: object,
) -> Path:
    """``root``/config.yaml of a scores-mode experiment whose ``scores.csv`` has the columns
    segment, system, seed (the run with the system, and its facet) and ``metric`` (higher is
    better; ``scale``: its declared scale), and ``columns`` (e.g. ``look``, or another ``run``);
    returns its path."""
    config: dict[str, object] = {
        "experiment": name,
        "scores": "scores.csv",
        "columns": {
            "segment": "segment",
            "system": "system",
            "run": ["system", "seed"],
            "metrics": [metric],
            "facets": ["seed"],
            **columns,
        },
        "better": {metric: "higher"},
        **({"scale": {metric: scale}} if scale else {}),
        "baseline": baseline,
        "analyses": analyses,
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
