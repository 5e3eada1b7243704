"""Benchmark: the whole workflow on 30 systems x 5 runs x 500 segments x 2 metrics (issue 20,
item 8; other designs with --systems/--runs/--segments, e.g. 62 x 3 x 40 for issue 31): wall
time with `snakemake --cores 2`, time per job, size of `results/tables/*.csv` (total and per
file), size of the report page, the height of its top (header, decision tables, forest plots)
and of the whole page at 1400 px, for two source trees side by side in one invocation.

Usage: `python benchmarks/many_systems.py [--before /tmp/before] [--after .] [--workdir
/tmp/infrepro-many] [--repeat 1] [--only before|after] [--systems 30] [--runs 5] [--segments
500] [--out benchmarks/results/many_systems.json]`

`--before` is a checkout of the older tree (e.g. `git worktree add /tmp/before 521ae8a`); each
tree runs its own Snakefile with `PYTHONPATH=<tree>`, so its own package is imported. The trees
run one after the other (never at once: the machine has 2 cores), alternating when `--repeat` > 1.

The experiment (scores mode, seeded, written once and given to both trees; the defaults): systems
S00..S29, 5 runs each (column `seed`, also the facet, as the Kreutzer example's replication), 500
segments with a numeric property `length`, metrics `chrf` (higher is better) and `ter` (lower),
with planted system, run, segment and length effects. Per job, the time is Snakemake's own:
from the timestamp printed before the job starts to the one before its `Finished jobid`.
The top of the report is measured as tests/e2e/test_report_layout.py does (headless Chromium
over the DevTools pipe of tests/e2e/test_report_browser.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
SYSTEMS, RUNS, SEGMENTS = 30, 5, 500
WIDTH, SCREEN = 1400, 900
SEED = 20
LARGEST = 5  # tables listed by name in the summary (all are in the JSON)
TOP = (
    "Math.max(...Array.from(document.querySelectorAll("
    "'#decision table.decision-table, #decision svg.plot')).map("
    "e => e.getBoundingClientRect().bottom + window.scrollY))"
)
PAGE = "document.documentElement.scrollHeight"
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]")
STARTED = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):")
JOBID = re.compile(r"^\s+jobid: (\d+)")
FINISHED = re.compile(r"^Finished jobid: (\d+)")


def write_experiment(
    root: Path, systems: int = SYSTEMS, runs: int = RUNS, segments: int = SEGMENTS
) -> None:
    """The seeded scores file and its config (identical bytes on every call with the same
    design; the defaults are the design of the committed results)."""
    rng = np.random.default_rng(SEED)
    length = rng.integers(5, 60, segments)
    difficulty = rng.normal(0, 8, segments)
    frames = []
    for i in range(systems):
        effect, slope = rng.normal(0, 2), rng.normal(0, 0.05)
        for seed in range(1, runs + 1):
            shift = rng.normal(0, 1)
            chrf = 50 + effect + shift + difficulty + slope * length + rng.normal(0, 5, segments)
            ter = 60 - 0.8 * (effect + shift) - difficulty + rng.normal(0, 6, segments)
            frames.append(
                pd.DataFrame(
                    {
                        "segment": [f"seg{s:03d}" for s in range(segments)],
                        "system": f"S{i:02d}",
                        "seed": str(seed),
                        "length": length,
                        # fractions, as scores mode expects (the report shows x 100)
                        "chrf": np.round(chrf / 100, 6),
                        "ter": np.round(ter / 100, 6),
                    }
                )
            )
    root.mkdir(parents=True, exist_ok=True)
    pd.concat(frames).to_csv(root / "scores.csv", index=False)
    config = {
        "experiment": f"{systems} systems x {runs} runs x {segments} segments",
        "scores": "scores.csv",
        "columns": {
            "segment": "segment",
            "system": "system",
            "run": ["system", "seed"],
            "metrics": ["chrf", "ter"],
            "facets": ["seed"],
            "properties": ["length"],
        },
        "better": {"chrf": "higher", "ter": "lower"},
        "baseline": "S00",
        "report": {"date": "not set"},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def job_times(output: str) -> dict[str, list[float]]:
    """Seconds per job, by rule, from Snakemake's printed timestamps."""
    started: dict[str, tuple[str, datetime]] = {}
    times: dict[str, list[float]] = defaultdict(list)
    stamp, rule = None, None
    for line in output.splitlines():
        if match := STAMP.match(line):
            stamp = datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif match := STARTED.match(line):
            rule = match.group(1)
        elif (match := JOBID.match(line)) and rule and stamp:
            started[match.group(1)] = (rule, stamp)
            rule = None
        elif (match := FINISHED.match(line)) and match.group(1) in started and stamp:
            name, begin = started.pop(match.group(1))
            times[name].append((stamp - begin).total_seconds())
    return dict(times)


def page_heights(report: Path) -> tuple[float | None, float | None]:
    """Bottom of the last decision table or forest plot, and the whole page's height (its
    details closed, as it opens), in px at 1400 px wide ((None, None) without Chromium)."""
    sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "e2e")]
    from optional_tools import find_chromium
    from test_report_browser import Browser

    executable = find_chromium()
    if executable is None:
        return None, None
    with Browser(executable, timeout=300) as browser:
        browser.open(report.as_uri(), width=WIDTH, height=SCREEN)
        return float(browser.evaluate(TOP)), float(browser.evaluate(PAGE))


def _children_cpu() -> float:
    """User + system CPU seconds of every finished child process (and theirs) so far: the
    workflow's CPU time, which other work on a shared machine does not inflate much."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tree(tree: Path, data: Path, workdir: Path) -> dict[str, object]:
    """Run the tree's workflow from scratch on the experiment; times, sizes, the package used."""
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(data, workdir)
    env = dict(os.environ, PYTHONPATH=str(tree))
    package = subprocess.run(
        [sys.executable, "-c", "import infrepro; print(infrepro.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=workdir,  # as Snakemake runs: from here, not from a checkout that shadows the path
    ).stdout.strip()
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"),
        "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"), "--cores", "2",
    ]  # fmt: skip
    load = os.getloadavg()
    begin, cpu = time.perf_counter(), _children_cpu()
    result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=workdir)
    wall, cpu = time.perf_counter() - begin, _children_cpu() - cpu
    (workdir / "snakemake.out").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise SystemExit(f"{tree}: snakemake failed\n{result.stderr[-4000:]}")
    report = workdir / "results" / "report.html"
    tables = {p.name: p.stat().st_size for p in sorted((workdir / "results/tables").glob("*.csv"))}
    return {
        "tree": str(tree),
        "package": package,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "jobs": job_times(result.stdout + result.stderr),
        "page_bytes": report.stat().st_size,
        "tables_bytes": sum(tables.values()),
        "table_bytes": dict(sorted(tables.items(), key=lambda item: -item[1])),
        **dict(zip(("top_px", "page_px"), page_heights(report), strict=True)),
    }


def _row(label: str, cells: list[str]) -> str:
    return f"| {label} | " + " | ".join(cells) + " |"


def _job_cell(times: list[float]) -> str:
    return f"{len(times)} x, max {max(times):.0f}, sum {sum(times):.0f}" if times else ""


def _top_cell(top: float | None) -> str:
    return f"{top:.0f} px ({top / SCREEN:.2f} screens)" if top else "n/a"


def summarise(runs: list[dict]) -> str:
    """A markdown table of the runs, side by side."""
    rules = sorted({rule for run in runs for rule in run["jobs"]})
    lines = [
        _row("", [Path(str(run["tree"])).name for run in runs]),
        "|---" * (len(runs) + 1) + "|",
        _row("whole workflow, wall (s)", [str(r["wall_s"]) for r in runs]),
        _row("whole workflow, CPU (s)", [str(r["cpu_s"]) for r in runs]),
    ]
    lines += [
        _row(f"{rule} (s)", [_job_cell(r["jobs"].get(rule, [])) for r in runs]) for rule in rules
    ]
    lines.append(_row("page (MB)", [f"{r['page_bytes'] / 1e6:.2f}" for r in runs]))
    lines.append(
        _row("results/tables/*.csv (MB)", [f"{r['tables_bytes'] / 1e6:.2f}" for r in runs])
    )
    largest = sorted({name for r in runs for name in list(r["table_bytes"])[:LARGEST]})
    lines += [
        _row(f"{name} (MB)", [f"{r['table_bytes'].get(name, 0) / 1e6:.2f}" for r in runs])
        for name in largest
    ]
    lines.append(_row("top of report at 1400 px", [_top_cell(r["top_px"]) for r in runs]))
    lines.append(_row("whole page at 1400 px", [_top_cell(r.get("page_px")) for r in runs]))
    loads = [f"{r['load_before'][0]} / {r['load_after'][0]}" for r in runs]
    lines.append(_row("load average (1 min) at start / end", loads))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"))
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-many"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=["before", "after"])
    parser.add_argument("--systems", type=int, default=SYSTEMS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--segments", type=int, default=SEGMENTS)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/many_systems.json")
    args = parser.parse_args()
    data = args.workdir / "data"
    design = {"systems": args.systems, "runs": args.runs, "segments": args.segments}
    write_experiment(data, **design)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    if args.only:
        trees = {args.only: trees[args.only]}
    runs = []
    for repeat in range(args.repeat):
        for name, tree in trees.items():
            run = run_tree(tree, data, args.workdir / f"{name}-{repeat}")
            print(json.dumps(run, indent=1), flush=True)
            runs.append(run)
    print(summarise(runs))
    record = {"date": datetime.now().isoformat(), "design": design, "runs": runs}
    args.out.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
