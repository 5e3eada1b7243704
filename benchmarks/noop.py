"""Benchmark: the bundled example's rerun with nothing to do, per Python environment, side by side
(issue 31, goal 3: no-op <= 1.3 s).

Usage: `python benchmarks/noop.py --python /path/to/venv/bin/python [--python ...] [--repeat 5]
[--tree .] [--workdir /tmp/infrepro-noop] [--out benchmarks/results/noop.json]`

The example is run once from scratch with the first environment; then, per environment, in turn
(`--repeat` rounds, the environments interleaved so that a change of the machine's load hits
them alike):
- `snakemake --cores 2` with nothing to do (the no-op);
- `snakemake --cores 2 -n` (the dry run: parsing the Snakefile and building the DAG);
- `python -c "import snakemake.cli"`: Snakemake's own start, which no workflow can shorten;
- `snakemake --cores 2` on an empty workflow (one `rule all` with no input): the floor of any
  workflow's no-op in that environment at that moment. The machine's speed drifts by 20 % or
  more over minutes, so "ours - floor" (what infrepro's parse and DAG add), measured in the same
  rounds, is the stable number.

Snakemake imports every installed executor plugin when it starts (to offer their options); the
SLURM plugin (`pip install ".[slurm]"`) imports pandas at its top, which a laptop install
(`pip install ".[test]"`, README) does not have to pay. So each environment is reported with
whether that plugin is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 1.3


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.monotonic()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    return time.monotonic() - start


def has_slurm_plugin(python: str) -> bool:
    code = "import importlib.util as u; print(bool(u.find_spec('snakemake_executor_plugin_slurm')))"
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    return out.stdout.strip() == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", required=True, help="an environment's python")
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-noop"))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/noop.json")
    args = parser.parse_args()
    tree = args.tree.resolve()
    shutil.rmtree(args.workdir, ignore_errors=True)
    example = args.workdir / "example"
    shutil.copytree(tree / "config", example / "config")
    shutil.copytree(tree / "resources" / "example", example / "resources" / "example")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    empty = args.workdir / "empty"
    empty.mkdir()
    (empty / "Snakefile").write_text(
        'rule all:\n    input: "done"\n\nrule done:\n    output: "done"\n'
        "    run:\n        open(output[0], 'w').close()\n"
    )

    def snakemake(python: str, *extra: str) -> list[str]:
        return [python, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"),
                "--directory", str(example), "--cores", "2", *extra]  # fmt: skip

    def floor(python: str) -> list[str]:  # run in the empty workflow's folder
        return [python, "-m", "snakemake", "--cores", "2"]

    load = os.getloadavg()[0]
    timed(floor(args.python[0]), empty, env)  # writes its one output
    first = timed(snakemake(args.python[0]), example, env)
    print(f"bundled example from scratch: {first:.1f} s ({args.python[0]})", flush=True)
    kinds = {  # command, folder
        "noop": (snakemake, example),
        "dry_run": (lambda py: snakemake(py, "-n"), example),
        "snakemake_import": (lambda py: [py, "-c", "import snakemake.cli"], example),
        "empty_workflow": (floor, empty),
    }
    times: dict[str, dict[str, list[float]]] = {py: {k: [] for k in kinds} for py in args.python}
    for _ in range(args.repeat):
        for py in args.python:
            for kind, (command, folder) in kinds.items():
                times[py][kind].append(timed(command(py), folder, env))
    rows = []
    print(f"\n| environment | SLURM plugin | no-op (s) | dry run -n (s) | import snakemake.cli (s) "
          f"| empty workflow's no-op (s) | ours - empty (s) | goal <= {GOAL} s |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for py in args.python:
        mean = {kind: statistics.mean(values) for kind, values in times[py].items()}
        slurm = has_slurm_plugin(py)
        verdict = "met" if mean["noop"] <= GOAL else "not met"
        added = mean["noop"] - mean["empty_workflow"]
        print(f"| {py} | {'yes' if slurm else 'no'} | {mean['noop']:.2f} | {mean['dry_run']:.2f} | "
              f"{mean['snakemake_import']:.2f} | {mean['empty_workflow']:.2f} | {added:.2f} | "
              f"{verdict} |")  # fmt: skip
        rows.append({"python": py, "slurm_plugin": slurm, "mean_s": mean, "runs_s": times[py]})
    print(f"\nmean of {args.repeat}; 1-minute load {load:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end")  # fmt: skip
    args.out.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "tree": str(tree),
                "repeat": args.repeat,
                "load_start": load,
                "load_end": os.getloadavg()[0],
                "environments": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    sys.exit(main())
