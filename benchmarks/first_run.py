"""Benchmark: a new user's first run of the bundled example against a warm run (issue 31, goal 4:
the first run within 1.5x of a warm one), for one or two source trees side by side.

Usage: `python benchmarks/first_run.py [--before /tmp/base] [--after .] [--repeat 2]
[--workdir /tmp/infrepro-first-run] [--out benchmarks/results/first_run.json]`

Per tree, one after the other (never at once: the machine has 2 cores):

1. A fresh copy of the tree's committed files (`git archive HEAD`) in `<workdir>/<name>`: no byte
   code, no numba cache, no results, as a fresh clone is; the runs use it through
   `PYTHONPATH=<copy>`, as an editable install (`pip install -e .`) would.
2. Empty user caches: `XDG_CACHE_HOME` (Snakemake's, and numba's user-wide cache, used where the
   package folder is read-only) and `MPLCONFIGDIR` (matplotlib's font list) point into empty
   folders of the copy; numba caches the kernels next to their sources, in the copy, as it does
   for a clone. The venv is the one every run uses: pip byte-compiles installed packages at
   install time, so a new user's venv is in that state too.
3. `snakemake --cores 2` on the bundled example (`config/config.yaml`): the first run.
4. Then the state of every later run: wait until no kernel compile runs in the background (the
   compile lock in the copy's numba cache is free), remove `results/`, `logs/` and
   `.snakemake/`, and run again, `--repeat` times: the warm runs.

Prints each tree's first run, warm runs (mean) and their ratio; writes the numbers to `--out`.
"""

from __future__ import annotations

import argparse
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 1.5  # the first run within 1.5x of a warm one


def fresh_copy(tree: Path, copy: Path) -> None:
    """The tree's committed files, as a fresh clone has them."""
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(tree), "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(copy, filter="data")


def environment(copy: Path) -> dict[str, str]:
    """The copy on the path and every user cache empty (created on first use)."""
    caches = copy / ".user-caches"
    return dict(
        os.environ,
        PYTHONPATH=str(copy),
        XDG_CACHE_HOME=str(caches / "xdg"),
        MPLCONFIGDIR=str(caches / "matplotlib"),
    )


def run_example(copy: Path, env: dict[str, str], name: str) -> dict[str, float]:
    """`snakemake --cores 2` from scratch in the copy; wall seconds and the load around it."""
    for folder in ("results", "logs", ".snakemake"):
        shutil.rmtree(copy / folder, ignore_errors=True)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    (copy / f"snakemake_{name}.log").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        sys.exit(f"{copy}: snakemake failed\n{result.stderr[-3000:]}")
    return {"wall_s": round(wall, 2), "load_before": load, "load_after": os.getloadavg()[0]}


def wait_for_background_compile(copy: Path, timeout: float = 900.0) -> float:
    """Seconds waited until the copy's kernel compile lock is free (0 if it has none)."""
    lock = next(copy.rglob("infrepro-compile.lock"), None)  # in numba's cache folder
    start = time.perf_counter()
    if lock is None:
        return 0.0
    with lock.open("a") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(handle, fcntl.LOCK_UN)
                return time.perf_counter() - start
            except OSError:
                if time.perf_counter() - start > timeout:
                    sys.exit(f"{copy}: the background compile still runs after {timeout:.0f} s")
                time.sleep(0.5)


def measure(name: str, tree: Path, workdir: Path, repeat: int) -> dict[str, object]:
    copy = workdir / name
    fresh_copy(tree, copy)
    env = environment(copy)
    first = run_example(copy, env, "first")
    print(f"{name}: first run {first['wall_s']:.1f} s", flush=True)
    waited = wait_for_background_compile(copy)
    warm = [run_example(copy, env, f"warm{i}") for i in range(repeat)]
    mean = sum(w["wall_s"] for w in warm) / len(warm)
    print(f"{name}: warm runs {[w['wall_s'] for w in warm]} (waited {waited:.0f} s)", flush=True)
    return {
        "tree": str(tree),
        "commit": subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip(),
        "first": first,
        "waited_for_background_compile_s": round(waited, 1),
        "warm": warm,
        "warm_mean_s": round(mean, 2),
        "ratio": round(first["wall_s"] / mean, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the older tree")
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--repeat", type=int, default=2, help="warm runs per tree")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-first-run"))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/first_run.json")
    args = parser.parse_args()
    trees = {"after": args.after.resolve()}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    results = {n: measure(n, t, args.workdir.resolve(), args.repeat) for n, t in trees.items()}
    print("\n| | " + " | ".join(f"{n} ({r['commit']})" for n, r in results.items()) + " |")
    print("|---" * (len(results) + 1) + "|")
    for label, cell in (
        ("first run after a fresh install (s)", lambda r: f"{r['first']['wall_s']:.1f}"),
        ("warm run, mean (s)", lambda r: f"{r['warm_mean_s']:.1f}"),
        (f"first / warm (goal <= {GOAL})", lambda r: f"{r['ratio']:.2f}"),
        ("load average at the first run", lambda r: f"{r['first']['load_before']:.2f}"),
    ):
        print(f"| {label} | " + " | ".join(cell(r) for r in results.values()) + " |")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    args.out.write_text(json.dumps({"date": stamp, "trees": results}, indent=1))


if __name__ == "__main__":
    main()
