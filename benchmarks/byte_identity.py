"""Byte identity of two source trees' results (issue 40, item 6): a change that moves code and
changes no statistic leaves every file under ``results/`` as it was.

Four experiments, each run from scratch by both trees on the same copy of its inputs: the
bundled example (``config/config.yaml``), both Kreutzer configs (``config/kreutzer2020.yaml``,
``config/kreutzer2020_annotation.yaml``) and a 12-system scores-mode experiment (runs 1 to 5 per
system, every analysis). Every file under ``results/`` of the two runs is compared byte for
byte; a column that the newer tree adds on purpose is named with ``--added FILE:COLUMN`` (the
CSV is then compared with that column dropped, everything else byte for byte).

Usage: ``python benchmarks/byte_identity.py --before /tmp/before [--after .] [--workdir
/tmp/infrepro-identity] [--added decisions.csv:few_runs] [--out
benchmarks/results/byte_identity.md]``; ``--before`` is a checkout of the older tree (``git
worktree add /tmp/before <rev>``). Each tree runs its own Snakefile with ``PYTHONPATH=<tree>``,
one after the other (the machine has 2 cores).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from workflow_helpers import many_systems_experiment  # noqa: E402

RUNS_12 = {f"S{i:02d}": 1 + i % 5 for i in range(12)}


def example(root: Path) -> Path:
    shutil.copytree(REPO / "config", root / "config")
    shutil.copytree(REPO / "resources" / "example", root / "resources" / "example")
    return root / "config" / "config.yaml"


def kreutzer(name: str):
    def make(root: Path) -> Path:
        (root / "config").mkdir(parents=True)
        shutil.copy(REPO / "config" / name, root / "config" / name)
        shutil.copytree(REPO / "resources" / "kreutzer2020", root / "resources" / "kreutzer2020")
        return root / "config" / name

    return make


def twelve_systems(root: Path) -> Path:
    path = many_systems_experiment(root, RUNS_12, segments=80, seed=12)
    config = yaml.safe_load(path.read_text())
    config["analyses"] = {"run": ["comparison", "variance", "classical", "summary", "planning"]}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


EXPERIMENTS = {
    "example": example,
    "kreutzer2020": kreutzer("kreutzer2020.yaml"),
    "kreutzer2020_annotation": kreutzer("kreutzer2020_annotation.yaml"),
    "scores_12_systems": twelve_systems,
}


def run(tree: Path, root: Path, config: Path) -> float:
    """The workflow of ``tree`` on the experiment in ``root``, from scratch; its wall time."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(tree / "Snakefile"),
        "--directory",
        str(root),
        "--configfile",
        str(config),
        "--cores",
        "2",
        "--quiet",
    ]
    start = time.perf_counter()
    # run in the experiment's folder: `python -m` puts the working folder first on sys.path
    done = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree} on {root} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def same_without(a: Path, b: Path, columns: list[str]) -> bool:
    """Equal CSVs once the columns the newer tree added are dropped from it (its other bytes
    as the older tree wrote them)."""
    old = pd.read_csv(a, dtype=str, keep_default_na=False)
    new = pd.read_csv(b, dtype=str, keep_default_na=False)
    new = new.drop(columns=[c for c in columns if c in new.columns])
    return old.to_csv(index=False) == new.to_csv(index=False)


def compare(before: Path, after: Path, added: dict[str, list[str]]) -> tuple[int, list[str]]:
    """The number of files compared and those that differ (or exist on one side only)."""
    files_a = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    files_b = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    differ = sorted(f"only in one tree: {p}" for p in files_a ^ files_b)
    for rel in sorted(files_a & files_b):
        a, b = before / rel, after / rel
        if filecmp.cmp(a, b, shallow=False):
            continue
        if rel.name in added and same_without(a, b, added[rel.name]):
            continue
        differ.append(str(rel))
    return len(files_a | files_b), differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-identity"))
    parser.add_argument("--added", action="append", default=[], metavar="FILE:COLUMN")
    parser.add_argument("--only", action="append", choices=sorted(EXPERIMENTS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    added: dict[str, list[str]] = {}
    for item in args.added:
        name, _, column = item.partition(":")
        added.setdefault(name, []).append(column)
    shutil.rmtree(args.workdir, ignore_errors=True)
    lines = [
        "| experiment | files | differing | before (s) | after (s) |",
        "|---|---|---|---|---|",
    ]
    failed = False
    for name in args.only or EXPERIMENTS:
        roots = {}
        seconds = {}
        for side, tree in (("before", args.before.resolve()), ("after", args.after.resolve())):
            root = args.workdir / name / side
            root.mkdir(parents=True)
            config = EXPERIMENTS[name](root)
            seconds[side] = run(tree, root, config)
            roots[side] = root / "results"
        count, differ = compare(roots["before"], roots["after"], added)
        failed |= bool(differ)
        lines.append(
            f"| {name} | {count} | {len(differ)} | {seconds['before']:.1f} | "
            f"{seconds['after']:.1f} |"
        )
        for path in differ:
            lines.append(f"|  | `{path}` differs | | | |")
        print(lines[-1 - len(differ)], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
