"""Benchmark: how each workflow stage's cost grows (issue 45, item 1). One axis of a scores-mode
experiment grows at a time, the others held at a stated base: each rule's wall time, CPU time
and peak memory at every size, for two source trees side by side; the log-log slope
(exponent) per stage and axis; a figure of the curves; every job whose measured peak exceeds
the ``mem_mb`` the SLURM profile would ask for it.

Usage: `python benchmarks/growth.py [--before /tmp/ci] [--after .] [--axes systems runs
segments facet_levels] [--sizes N ...] [--only before|after] [--quick] [--until 01:00]
[--workdir /tmp/infrepro-growth] [--report-only]`

The experiment is many_systems.py's (`write_experiment`: seeded, planted system, run, segment
and length effects) with one metric, `chrf` on the points scale (0-100, declared `scale:
points`), one facet (the seed) and one numeric property (`length`); default analyses. Axes
(the base in brackets): systems 10, 25, 50, 100, 200 [3 runs per system, 400 segments]; runs
per system 3, 10, 30, 100, 300 [4 systems, 400 segments]; segments 1,000, 10,000, 100,000
[2 systems, 20 runs per system]; the facet's levels 2, 5, 10, 30 at constant rows [4 systems,
30 runs per system, 400 segments; the facet `grid`, run i of a system at level i mod L, instead
of the seed].
Along the first three axes the evaluation table's rows are proportional to the axis, so an
exponent in the axis is the exponent in rows. The older tree is not run above 100 systems
(it is killed for memory at 200, issue 45).

Every run is plain Snakemake (``INFREPRO_PLAIN_SNAKEMAKE=1``: no worker pool, every job a
Python process of its own, the same tables), `--cores 2`, from scratch. Per job: wall time from
Snakemake's log (1 s resolution, `many_systems.job_times`'s reading); CPU time and peak
resident memory (the kernel's ``VmHWM``) of the job's processes, polled every 0.1 s under
/proc and attributed to the job by the log file it holds open (each rule has its own ``log:``).
Each process runs under an address-space limit (``RLIMIT_AS``, `--limit-gb`, 16 by default),
and the run is stopped when its processes together hold more than `--cap-gb` resident (14);
a job that dies is recorded with its rule and the memory it reached. The runs are kept one
per line in ``growth.jsonl`` (an interrupted run resumes), the report is written from it.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from bench import command_line, load, publish
from many_systems import job_times, write_experiment
from paper_scale.monitor import _cmdline, _descendants, _read, _vm_hwm

REPO = Path(__file__).resolve().parents[1]
AXES = {  # axis: (sizes, base design)
    "systems": ([10, 25, 50, 100, 200], {"systems": 10, "runs": 3, "segments": 400}),
    "runs": ([3, 10, 30, 100, 300], {"systems": 4, "runs": 3, "segments": 400}),
    "segments": ([1_000, 10_000, 100_000], {"systems": 2, "runs": 20, "segments": 1_000}),
    # the facet's levels at constant rows: facet `grid` (run i of a system at level i mod L)
    # instead of the seed
    "facet_levels": (
        [2, 5, 10, 30],
        {"systems": 4, "runs": 30, "segments": 400, "facet_levels": 2},
    ),
}
QUICK = {  # --quick: tiny sizes, one tree, seconds
    "systems": ([3, 6], {"systems": 3, "runs": 2, "segments": 50}),
}
REASONS = {  # (stage, axis): why its cost grows faster than the axis (suspected, from the code)
    ("analysis_conditional", "systems"): (
        "quadratic by the model: its run-aware model has a run variance per system (k = "
        "systems + 2 variance parameters; conditional.run_intercepts), and what a fit of k "
        "variance parameters needs has k^2 entries: the optimizer's Newton polish takes k + 1 "
        "gradients per Hessian, each linear in the systems (lmm/optimize.py grad_hess, the "
        "arrowhead elimination lmm/arrow.py), and Kenward-Roger's vcovAdj sums over the k^2 / 2 "
        "pairs of variance parameters (Q_rs, lmm/kr.py PairProducts); the fixed-effect design X "
        "is held dense (rows x 2 systems: memory ~ systems^2)"
    ),
    ("analysis_summary", "systems"): (
        "quadratic by nature: a record for every pair of systems, which the compact letters and "
        "the rank intervals read (systems^2/2: 19,900 calibrated few-run tests at 200 systems, "
        "each two quadratures bound by the incomplete beta function, stats/calibrated.py), like "
        "all_pairs; model M (decision/model.py) carries a run variance per system (its fit "
        "about 11 of 64 s in process at 200 systems)"
    ),
    ("analysis_metaparam", "systems"): (
        "its per-system fits are of constant size, but each takes its rows from the whole "
        "table (metaparam.py: evaluation[evaluation[system] == s] in a loop over the systems: "
        "systems x rows comparisons)"
    ),
    ("analysis_metaparam", "runs"): (
        "quadratic by nature of the configuration: its facet here is the seed, whose levels are "
        "the runs, and it compares every pair of a facet's levels within each property bin "
        "(conditional.cells: 538,000 pairs at 4 x 300 runs); its per-system fits of facet x "
        "property have 2 fixed effects per run (p ~ runs over n ~ runs rows, X held dense: "
        "lmm/design.py matrix)"
    ),
    ("paper_tables", "systems"): "under 2.5 CPU-s at 200 systems, mostly start-up: not assessed",
    ("analysis_comparison", "systems"): (
        "quadratic by the model: its omnibus model over all systems has a run variance per "
        "system (vocabulary.headline_formula): its Hessian and Kenward-Roger have k^2 entries "
        "as the conditional model's; its 199 pair fits grow linearly"
    ),
}
# What the reader of a measurement must know (the machine shared, a run stopped): given with
# --note AXIS:TREE:SIZE=TEXT when the runs are made, kept in the store's meta file.
NOTE = re.compile(r"(\w+):(before|after):(\d+)=(.+)", re.S)
BEFORE_MAX = {"systems": 100}  # the older tree is killed for memory at 200 systems (~21 GB)
INTERVAL = 0.1
SCRIPT = re.compile(r"/scripts/(\w+)\.py\b")
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
FIT_LAST = (
    2  # the exponent: the slope between the last two sizes (start-up costs bias a longer fit low)
)
LINEAR = 1.15  # exponents above this are named (issue 45, acceptance 1)


def write_design(
    root: Path, systems: int, runs: int, segments: int, facet_levels: int | None = None
) -> None:
    """many_systems.py's experiment with one metric on the points scale (its `ter` dropped);
    with ``facet_levels`` L, the facet is `grid` (run i of each system at level i mod L), not
    the seed."""
    write_experiment(root, systems, runs, segments)
    scores = pd.read_csv(root / "scores.csv", dtype={"seed": str})
    scores["chrf"] = (scores["chrf"] * 100).round(4)
    if facet_levels:
        scores["grid"] = "g" + ((scores["seed"].astype(int) - 1) % facet_levels).astype(str)
    scores.drop(columns="ter").to_csv(root / "scores.csv", index=False)
    config = yaml.safe_load((root / "config.yaml").read_text())
    config["columns"]["metrics"] = ["chrf"]
    config["better"] = {"chrf": "higher"}
    config["scale"] = {"chrf": "points"}
    if facet_levels:
        config["columns"]["facets"] = ["grid"]
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


class Monitor:
    """Polls the descendants of a Snakemake process: per process its peak resident memory
    (VmHWM), CPU seconds (its own and its waited-for children's) and the log file it holds
    open under ``logs/`` (which job it runs); the resident total of all, against a cap."""

    def __init__(self, root: int, workdir: Path, cap_kib: int) -> None:
        self.root, self.workdir, self.cap_kib = root, workdir, cap_kib
        self.root_cmd = _cmdline(root)
        self.procs: dict[int, dict] = {}
        self.root_peak_kib = 0
        self.total_peak_kib = 0
        self.capped: dict | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Monitor:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(INTERVAL)

    def poll(self) -> None:
        total = _rss(self.root)
        self.root_peak_kib = max(self.root_peak_kib, _vm_hwm(self.root))
        parents = {}
        for pid in _descendants(self.root):
            stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
            if not stat:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            parents[pid] = int(fields[1])
            proc = self.procs.get(pid)
            cmd = _cmdline(pid)
            # new, or it has exec'd since (an exiting process reads as no command: kept)
            if proc is None or (cmd and proc["cmd"] != cmd[-120:]):
                script = SCRIPT.search(cmd)
                proc = self.procs[pid] = {
                    "cmd": cmd[-120:], "log": None, "peak_kib": 0,
                    # a job too short to be seen holding its log: its script's name
                    "script": f"script:{script.group(1)}" if script else None,
                }  # fmt: skip
            proc["parent"] = parents[pid]
            if proc["log"] is None:
                proc["log"] = self._log(pid)
            if cmd and cmd != self.root_cmd:
                # a fork of Snakemake that has not yet exec'd its job carries Snakemake's
                # VmHWM (1.9 GiB at 100,000 segments), which is no job's: not counted
                proc["peak_kib"] = max(proc["peak_kib"], _vm_hwm(pid))
            cpu = sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
            proc["cpu_s"] = max(proc.get("cpu_s", 0.0), cpu)
            rss = _rss(pid)
            proc["rss_kib"] = rss
            total += rss
        self.total_peak_kib = max(self.total_peak_kib, total)
        if total > self.cap_kib and self.capped is None:
            # the largest process goes first: it is the job that would take the machine down
            pid = max(parents, key=lambda p: self.procs[p].get("rss_kib", 0))
            self.capped = {"pid": pid, "log": self.label(pid), "total_kib": total}
            os.kill(pid, signal.SIGKILL)

    def _log(self, pid: int) -> str | None:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith(str(self.workdir / "logs")) and target.endswith(".log"):
                    return os.path.relpath(target, self.workdir)
        except OSError:
            pass
        return None

    def label(self, pid: int) -> str | None:
        """The log of the job ``pid`` belongs to: its own, or its nearest ancestor's."""
        first = pid
        while pid in self.procs:
            if self.procs[pid]["log"]:
                return self.procs[pid]["log"]
            pid = self.procs[pid].get("parent", -1)
        return self.procs.get(first, {}).get("script")


def _rss(pid: int) -> int:
    text = _read(f"/proc/{pid}/statm").split()
    return int(text[1]) * PAGE // 1024 if len(text) > 1 else 0


def job_records(output: str) -> dict[str, dict]:
    """Per job log path: its rule and the ``mem_mb`` Snakemake computed for it (None when the
    rule declares none), from the job blocks of Snakemake's output."""
    jobs, rule, block = {}, None, {}
    for line in output.splitlines():
        if line.startswith(("rule ", "localrule ", "checkpoint ")) and line.endswith(":"):
            rule, block = line.split()[1].rstrip(":"), {}
        elif rule and line.startswith("    ") and ":" in line:
            key, _, value = line.strip().partition(": ")
            block[key] = value
            if key == "log":
                jobs[value.split(" (")[0]] = block
                block["rule"] = rule
        elif rule and not line.startswith("    "):
            rule = None
    for block in jobs.values():
        resources = dict(
            item.split("=", 1) for item in block.get("resources", "").split(", ") if "=" in item
        )
        block["mem_mb"] = int(resources["mem_mb"]) if "mem_mb" in resources else None
    return {log: {"rule": b["rule"], "mem_mb": b["mem_mb"]} for log, b in jobs.items()}


def slurm_mem_mb(tree: Path) -> tuple[dict[str, int], int]:
    """The SLURM profile's fixed ``mem_mb`` per rule and its default (rules that compute theirs
    from the rows are not in it: their computed value is in Snakemake's output)."""
    profile = yaml.safe_load((tree / "profiles/slurm/config.yaml").read_text())
    fixed = {r: v["mem_mb"] for r, v in profile.get("set-resources", {}).items() if "mem_mb" in v}
    return fixed, int(profile.get("default-resources", {}).get("mem_mb", 1000))


def _limit(gigabytes: float) -> None:
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_once(tree: Path, data: Path, workdir: Path, args, deadline: float | None) -> dict:
    """The tree's workflow from scratch on ``data``, in plain Snakemake, polled."""
    import shutil

    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(data, workdir)
    env = dict(os.environ, PYTHONPATH=str(tree), INFREPRO_PLAIN_SNAKEMAKE="1")
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"),
        "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
        "--cores", "2", "--printshellcmds",
    ]  # fmt: skip
    out = (workdir / "snakemake.out").open("w")
    load_before = os.getloadavg()[0]
    begin = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
        preexec_fn=lambda: _limit(args.limit_gb), start_new_session=True,
    )  # fmt: skip
    stopped = None
    with Monitor(process.pid, workdir, int(args.cap_gb * 2**20)) as monitor:
        while process.poll() is None:
            time.sleep(0.5)
            if deadline is not None and time.time() > deadline and stopped is None:
                stopped = "deadline"
                os.killpg(process.pid, signal.SIGTERM)
            elif time.perf_counter() - begin > args.timeout and stopped is None:
                stopped = "timeout"
                os.killpg(process.pid, signal.SIGTERM)
    wall = time.perf_counter() - begin
    out.close()
    output = (workdir / "snakemake.out").read_text(errors="replace")
    records = job_records(output)
    rule_of = {r["rule"]: r["rule"] for r in records.values()}
    mem_of = {r["rule"]: r["mem_mb"] for r in records.values()}
    for log, rule in list(rule_of.items()):
        records.setdefault(f"script:{log}", {"rule": rule, "mem_mb": mem_of[rule]})
    jobs: dict[str, dict] = {}  # per job (log): rule, peak, cpu
    for pid, proc in monitor.procs.items():
        log = monitor.label(pid)
        job = jobs.setdefault(log or "(unattributed)", {"peak_kib": 0, "cpu_s": 0.0})
        job["peak_kib"] += proc["peak_kib"]  # a job's processes: the sum of their peaks
        if log is None:  # not a job's: what it was
            job.setdefault("cmds", []).append(proc["cmd"][-60:])
        if proc["log"] or not (log or "").startswith(
            "logs/"
        ):  # the job's own process (its CPU includes its children)
            job["cpu_s"] += proc.get("cpu_s", 0.0)
    stages: dict[str, dict] = {}
    for log, job in jobs.items():
        rule = records.get(log, {}).get("rule", log)
        stage = stages.setdefault(rule, {"peak_mib": 0.0, "cpu_s": 0.0, "jobs": []})
        stage["peak_mib"] = max(stage["peak_mib"], job["peak_kib"] / 1024)
        stage["cpu_s"] += job["cpu_s"]
        mem_mb = records.get(log, {}).get("mem_mb")
        stage["jobs"].append(
            {"log": log, "peak_mib": round(job["peak_kib"] / 1024, 1),
             "cpu_s": round(job["cpu_s"], 2), "mem_mb": mem_mb, "cmds": job.get("cmds")}
        )  # fmt: skip
    for rule, times in job_times(output).items():
        stage = stages.setdefault(rule, {"peak_mib": 0.0, "cpu_s": 0.0, "jobs": []})
        stage["wall_s"] = sum(times)
        stage["n"] = len(times)
    failed = sorted({line.split()[3].rstrip(":") for line in output.splitlines()
                     if line.startswith("Error in rule ")})  # fmt: skip
    dead = []
    for log, job in jobs.items():
        rule = records.get(log, {}).get("rule", log)
        if rule in failed:
            dead.append({"rule": rule, "log": log, "peak_mib": round(job["peak_kib"] / 1024)})
    killed = "kill" in output.lower() or "memoryerror" in output.lower()
    return {
        "tree": str(tree),
        "ok": process.returncode == 0,
        "returncode": process.returncode,
        "stopped": stopped,
        "capped": monitor.capped,
        "failed": dead or failed,
        "killed_hint": killed and process.returncode != 0,
        "tail": output[-1500:] if process.returncode != 0 else "",
        "wall_s": round(wall, 1),
        "snakemake_peak_mib": round(monitor.root_peak_kib / 1024, 1),
        "total_peak_mib": round(monitor.total_peak_kib / 1024, 1),
        "largest_mib": _largest(stages),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "stages": {
            r: {k: (round(v, 2) if isinstance(v, float) else v) for k, v in s.items()}
            for r, s in sorted(stages.items())
        },  # fmt: skip
    }


def _largest(stages: dict) -> float:
    """The largest job's peak (MiB): of the workflow's jobs, not of Snakemake's own helper
    processes (its scheduler's solver) gathered as "(unattributed)"."""
    return round(
        max((s["peak_mib"] for r, s in stages.items() if r != "(unattributed)"), default=0), 1
    )


def fit(sizes: list[float], values: list[float]) -> float | None:
    """The least-squares slope of log(value) on log(size) over the last FIT_LAST sizes."""
    pairs = [(s, v) for s, v in zip(sizes, values, strict=True) if v and v > 0][-FIT_LAST:]
    if len(pairs) < 2:
        return None
    x, y = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(x, y, 1)[0])


def _cell(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _exp(value: float | None) -> str:
    if value is None:
        return "–"
    return f"**{value:.2f}**" if value > LINEAR else f"{value:.2f}"


def report(rows: dict, axes: dict, trees: dict, out: Path, figure: Path, meta: dict) -> None:
    """growth.md, growth.json and the figure from the stored runs."""
    lines = [
        "# How cost grows (issue 45, item 1)",
        "",
        f"`python benchmarks/growth.py` ({meta['started']}, load {meta['load']:.1f} at start; "
        "machine: 2 cores, 24 GiB, shared). Trees: "
        + ", ".join(f"**{n}** = `{t['path']}` at {t['commit']}" for n, t in trees.items())
        + ". The experiment: many_systems.py's (`write_experiment`), one metric (`chrf`, points "
        "scale), one facet (the seed), one numeric property (`length`), default analyses; "
        "one axis grows at a time, the others at the base in its heading. Every run from "
        "scratch, `--cores 2`, **plain Snakemake** (`INFREPRO_PLAIN_SNAKEMAKE=1`: every job a "
        "process of its own, so that a job's peak memory is its own processes' VmHWM, polled "
        "every 0.1 s; the worker pool's runs take less CPU, the tables are the same). Wall per "
        "stage: the sum over the rule's jobs of Snakemake's logged times (1 s resolution; two "
        "jobs at a time share the 2 cores); CPU per stage: the jobs' processes' user + system "
        "time; memory per stage: the largest job's peak resident set (summed over the job's "
        "processes: an upper bound for the report, which forks); Snakemake MiB: its own "
        "process's peak (it checks the inputs while parsing); all MiB: the largest sum of "
        "the resident sets of every process of the run at one poll. Along the systems, runs "
        "and segments axes the evaluation table's rows are proportional to the axis, so the "
        "exponent in the axis is the exponent in rows. The machine was shared (1-minute load "
        "in the JSON; others' test suites ran at times): the CPU times carry the comparisons, "
        "the wall times are inflated by the load. One run per size and tree: the CPU ratios "
        "where both trees do the same work (the runs and facet-level axes) show the noise. "
        "Exponent: the "
        f"slope of log(cost) on log(size) between the last {FIT_LAST} sizes a stage finished "
        "(the local exponent at the largest size: start-up costs, imports of about 1-2 CPU-s "
        f"per job, bias a fit over more sizes low); **bold** above {LINEAR}.",
        "",
        f"![growth curves]({figure.name})",
        "",
    ]
    summary: dict = {"meta": meta, "trees": trees, "axes": {}}
    for axis, (sizes, base) in axes.items():
        runs = {(r["tree_name"], r["size"]): r for r in rows.values() if r["axis"] == axis}
        if not runs:
            continue
        fixed = ", ".join(f"{k} {v}" for k, v in base.items() if k != axis)
        commits = ", ".join(
            sorted({f"{r['tree_name']} {r.get('commit', '?')}" for r in runs.values()})
        )
        lines += [f"## Axis: {axis} ({fixed})", "", f"Trees measured: {commits}.", ""]
        names = [n for n in trees if any((n, s) in runs for s in sizes)]
        header = ["size", "rows"] + [
            f"{n} {what}"
            for n in names
            for what in ("wall s", "CPU s", "largest job MiB", "Snakemake MiB", "all MiB")
        ]
        lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
        for size in sizes:
            if not any((n, size) in runs for n in names):
                continue
            design = {**base, axis: size}
            cells = [f"{size:,}", f"{design['systems'] * design['runs'] * design['segments']:,}"]
            for name in names:
                run = runs.get((name, size))
                if run is None:
                    cells += ["not run"] + ["–"] * 4
                    continue
                status = "" if run["ok"] else f" ({_failure(run)})"
                cells += [f"{run['wall_s']:.0f}{status}", f"{_cpu(run):.0f}",
                          f"{_largest(run['stages']):.0f}", f"{run['snakemake_peak_mib']:.0f}",
                          f"{run['total_peak_mib']:.0f}"]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        given = meta.get("notes", {})
        notes = [f"- {n} at {sz:,}: {given[f'{axis}:{n}:{sz}']}" for n, sz in sorted(runs)
                 if f"{axis}:{n}:{sz}" in given]  # fmt: skip
        asked = meta.get("sizes") or sizes
        missing = [
            f"{n} at {sz:,}"
            for sz in sizes
            for n in trees
            if (n, sz) not in runs
            and sz in asked
            and not (n == "before" and sz > BEFORE_MAX.get(axis, math.inf))
        ]
        if missing:
            notes.append("- **not measured** (past --until, or not yet run): " + ", ".join(missing))
        if axis == "facet_levels":
            notes.append("- the rows are constant along this axis: the exponent is in the levels")
        if axis in BEFORE_MAX and "before" in names:
            notes.append(
                f"- before above {BEFORE_MAX[axis]:,}: not run (at 200 systems the "
                "before tree is killed for memory at about 21 GB, issue 45)"
            )
        if notes:
            lines += [""] + notes
        if any(not r["ok"] for r in runs.values()):
            lines.append("")
            for (name, size), run in sorted(runs.items()):
                if not run["ok"]:
                    lines.append(f"- {name} at {size:,}: {_failure(run, long=True)}")
        lines.append("")
        # per stage: costs per size and exponents, per tree
        rules = sorted({rule for r in runs.values() for rule in r["stages"]})
        axis_fit: dict = {}
        for name in names:
            # a run stopped or failed keeps the stages it finished
            done = [s for s in sizes if (name, s) in runs]
            table = []
            for rule in rules:
                if rule in ("all", "(unattributed)"):
                    continue
                wall, cpu, mem = ([_finished(runs[(name, s)], rule, what) for s in done]
                                  for what in ("wall_s", "cpu_s", "peak_mib"))  # fmt: skip
                exps = {"wall": fit(done, wall), "cpu": fit(done, cpu), "mem": fit(done, mem)}
                axis_fit.setdefault(rule, {})[name] = {
                    "sizes": done,
                    "wall_s": wall,
                    "cpu_s": cpu,
                    "peak_mib": mem,
                    "exponent": exps,
                }
                table.append((rule, wall, cpu, mem, exps))
            if not table:
                continue
            lines += [
                f"### {name}: per stage (wall s / CPU s / peak MiB at sizes "
                + ", ".join(f"{s:,}" for s in done)
                + ")",
                "",
                "| stage | wall s | CPU s | peak MiB | exponent wall | CPU | memory |",
                "|---|---|---|---|---|---|---|",
            ]
            for rule, wall, cpu, mem, exps in sorted(table, key=lambda t: -(t[2][-1] or 0)):
                lines.append(
                    f"| {rule} | {' / '.join(_cell(v) for v in wall)} | "
                    f"{' / '.join(_cell(v, 1) for v in cpu)} | "
                    f"{' / '.join(_cell(v) for v in mem)} | {_exp(exps['wall'])} | "
                    f"{_exp(exps['cpu'])} | {_exp(exps['mem'])} |"
                )
            lines.append("")
        # ratios after / before at the sizes both ran
        if len(names) == 2:
            both = [s for s in sizes if all((n, s) in runs and runs[(n, s)]["ok"] for n in names)]
            if both:
                b, a = names
                lines += [f"Ratio {a} / {b} (whole run: wall; CPU; largest job's peak): "
                    + "; ".join(
                    f"{s:,}: {runs[(a, s)]['wall_s'] / runs[(b, s)]['wall_s']:.2f} / "
                    f"{_cpu(runs[(a, s)]) / _cpu(runs[(b, s)]):.2f} / "
                    f"{_largest(runs[(a, s)]['stages']) / _largest(runs[(b, s)]['stages']):.2f}"
                    for s in both) + ".", ""]  # fmt: skip
        summary["axes"][axis] = {
            "base": base, "sizes": sizes, "stages": axis_fit,
            "runs": {f"{n} {s}": runs[(n, s)] for n, s in runs},
        }  # fmt: skip
    at = lines.index(f"![growth curves]({figure.name})")
    lines[at:at] = _headline(summary)
    lines += _exponents(summary)
    lines += _memory_check(rows, trees)
    publish(out, lines)
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    _figure(summary, figure)


def _headline(summary: dict) -> list[str]:
    """Per axis: the whole run's CPU exponent and the stages above LINEAR (after tree)."""
    lines = ["## Summary", ""]
    for axis, data in summary["axes"].items():
        runs = data["runs"]
        whole = {}
        for name in ("before", "after"):
            done = sorted(r["size"] for r in runs.values() if r["tree_name"] == name and r["ok"])
            cpu = [_cpu(runs[f"{name} {size}"]) for size in done]
            span = f" over {done[-2]:,}-{done[-1]:,}" if len(done) > 1 else ""
            whole[name] = f"{_exp(fit(done, cpu))}{span}"
        above = [
            f"{rule} (CPU {_exp(f['after']['exponent']['cpu'])}, "
            f"memory {_exp(f['after']['exponent']['mem'])})"
            for rule, f in sorted(data["stages"].items())
            if "after" in f
            and any((f["after"]["exponent"][w] or 0) > LINEAR for w in ("cpu", "mem"))
        ]
        lines.append(
            f"- **{axis}**: whole run's CPU exponent {whole['after']} after "
            f"({whole['before']} before); stages above {LINEAR} after: "
            + (", ".join(above) if above else "none")
            + "."
            + _bounds(axis, data)
        )
    return lines + [""]


def _bounds(axis: str, data: dict) -> str:
    """The stages a run stopped before they finished: the least exponent their CPU time then
    implies against the size before (a lower bound: they were still running)."""
    out = []
    for run in sorted(data["runs"].values(), key=lambda r: (r["tree_name"], r["size"])):
        if run["ok"]:
            continue
        for rule, stage in sorted(run["stages"].items()):
            if "wall_s" in stage or not stage.get("jobs") or rule.startswith(("(", "script:")):
                continue
            fits = data["stages"].get(rule, {}).get(run["tree_name"], {})
            earlier = [
                (size, cpu)
                for size, cpu in zip(fits.get("sizes", []), fits.get("cpu_s", []), strict=True)
                if size < run["size"] and cpu
            ]
            if not earlier:
                continue
            size, cpu = earlier[-1]
            bound = math.log(stage["cpu_s"] / cpu) / math.log(run["size"] / size)
            out.append(
                f"{run['tree_name']} {rule} unfinished at {run['size']:,} after "
                f"{stage['cpu_s']:.0f} CPU-s ({cpu:.0f} at {size:,}): CPU exponent "
                f"**≥ {bound:.2f}**"
                + (f" ({REASONS[(rule, axis)]})" if (rule, axis) in REASONS else "")
            )
    return " Stopped: " + "; ".join(out) + "." if out else ""


def _exponents(summary: dict) -> list[str]:
    """One table of every stage's exponents on every axis (after; before in brackets), the
    named reason of each above LINEAR."""
    axes = list(summary["axes"])
    stages = sorted({rule for a in axes for rule in summary["axes"][a]["stages"]})
    lines = [
        "## Exponents per stage and axis",
        "",
        "CPU time and peak memory: the after tree's exponent (the before tree's in brackets) "
        f"between the last {FIT_LAST} sizes each tree finished; **bold** above {LINEAR}. Stages "
        "under about 2 CPU-s at the largest size are mostly start-up (imports): their "
        "exponents say little.",
        "",
        "| stage | "
        + " | ".join(f"{a}: CPU | {a}: memory" for a in axes)
        + " | why above linear |",
        "|---" * (2 * len(axes) + 2) + "|",
    ]
    for rule in stages:
        cells, named = [], []
        for axis in axes:
            fits = summary["axes"][axis]["stages"].get(rule, {})
            for what in ("cpu", "mem"):
                after = fits.get("after", {}).get("exponent", {}).get(what)
                before = fits.get("before", {}).get("exponent", {}).get(what)
                cells.append(f"{_exp(after)} ({_exp(before)})")
                reason = f"{axis}: {REASONS.get((rule, axis), 'not named')}"
                if after is not None and after > LINEAR and reason not in named:
                    named.append(reason)
        lines.append(f"| {rule} | " + " | ".join(cells) + f" | {'; '.join(named)} |")
    return lines + [""] + _same_interval(summary)


def _same_interval(summary: dict) -> list[str]:
    """Where the after tree ran further than the before tree: the after tree's exponents over
    the before tree's last interval, so that the two compare like with like."""
    lines = []
    for axis, data in summary["axes"].items():
        cells = []
        for rule, fits in sorted(data["stages"].items()):
            if "before" not in fits or "after" not in fits:
                continue
            before, after = fits["before"], fits["after"]
            span = before["sizes"][-FIT_LAST:]
            if span == after["sizes"][-FIT_LAST:] or not set(span) <= set(after["sizes"]):
                continue
            picked = [after["sizes"].index(size) for size in span]
            exps = {
                what: fit(span, [after[key][i] for i in picked])
                for what, key in (("cpu", "cpu_s"), ("mem", "peak_mib"))
            }
            if any((v or 0) > LINEAR for v in exps.values()) or any(
                (before["exponent"][w] or 0) > LINEAR for w in ("cpu", "mem")
            ):
                cells.append(
                    f"{rule} CPU {_exp(exps['cpu'])} ({_exp(before['exponent']['cpu'])}), "
                    f"memory {_exp(exps['mem'])} ({_exp(before['exponent']['mem'])})"
                )
        if cells:
            lines += [
                f"On the {axis} axis, the after tree over the before tree's last interval "
                f"({span[0]:,}-{span[-1]:,}; before in brackets): " + "; ".join(cells) + ".",
                "",
            ]
    return lines


def _finished(run: dict, rule: str, what: str) -> float | None:
    """A stage's cost in ``run`` when the stage finished there (None otherwise)."""
    stage = run["stages"].get(rule, {})
    return stage.get(what) if run["ok"] or "wall_s" in stage else None


def _unfinished(run: dict) -> str:
    """The stages a stopped or failed run had started but not finished, with their cost then."""
    return ", ".join(
        f"{rule} unfinished at {stage['cpu_s']:.0f} CPU-s, {stage['peak_mib']:.0f} MiB"
        for rule, stage in run["stages"].items()
        if "wall_s" not in stage and stage.get("jobs") and not rule.startswith(("(", "script:"))
    )


def _cpu(run: dict) -> float:
    """CPU seconds of all the run's job processes (Snakemake's own process not counted)."""
    return sum(stage.get("cpu_s", 0.0) for stage in run["stages"].values())


def _failure(run: dict, long: bool = False) -> str:
    if run.get("capped"):
        capped = run["capped"]
        what = f"stopped by the {capped['total_kib'] / 2**20:.1f} GiB cap in {capped['log']}"
    elif run.get("stopped"):
        what = f"stopped at the {run['stopped']}"
    elif run.get("failed"):
        what = "failed: " + ", ".join(
            f"{f['rule']} at {f['peak_mib']} MiB" if isinstance(f, dict) else f
            for f in run["failed"]
        )
    else:
        what = f"failed (exit {run['returncode']})"
    if run.get("stopped") or run.get("capped"):
        what += f" ({_unfinished(run)})" if _unfinished(run) else ""
    if long and run.get("tail"):
        what += f"; last lines: `{run['tail'].strip().splitlines()[-1][:200]}`"
    return what


def _memory_check(rows: dict, trees: dict) -> list[str]:
    """Every job whose measured peak exceeds the mem_mb the SLURM profile would give it."""
    lines = [
        "## Declared memory (SLURM profile) against measured peaks",
        "",
        "A job's `mem_mb` under `profiles/slurm`: the profile's `set-resources` where it names "
        "the rule, else the value the rule computes from the rows (infrepro/workflow/"
        "resources.py, as Snakemake's log prints it for the job), else the profile's "
        "default. Listed: every job whose measured peak (MB = 10^6 bytes) exceeds it, i.e. "
        "a job SLURM would kill for memory.",
        "",
    ]
    over = []
    for row in rows.values():
        fixed, default = slurm_mem_mb(Path(row["tree"]))
        for rule, stage in row["stages"].items():
            for job in stage.get("jobs", []):
                declared = fixed.get(rule) or job.get("mem_mb") or default
                peak_mb = job["peak_mib"] * 1.048576
                if peak_mb > declared:
                    over.append((row["tree_name"], row["axis"], row["size"], rule, job["log"],
                                 peak_mb, declared))  # fmt: skip
    if over:
        lines += ["| tree | axis | size | rule | job | peak MB | mem_mb |", "|---" * 7 + "|"]
        lines += [f"| {t} | {a} | {s:,} | {r} | {j} | {p:.0f} | {d} |"
                  for t, a, s, r, j, p, d in sorted(over)]  # fmt: skip
    else:
        lines.append("None: every measured job's peak is within its declared mem_mb.")
    return lines + [""]


def _figure(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: a smaller, diffable file
    matplotlib.rcParams["svg.hashsalt"] = "growth"  # its ids the same on every run
    import matplotlib.pyplot as plt

    axes = [a for a in summary["axes"] if summary["axes"][a]["stages"]]
    if not axes:
        return
    fig, grid = plt.subplots(2, len(axes), figsize=(5.5 * len(axes), 8), squeeze=False)
    styles = {"before": "--", "after": "-"}
    for col, axis in enumerate(axes):
        stages = summary["axes"][axis]["stages"]

        # the six costliest stages (CPU at the largest size each tree finished)
        def cost(rule: str, stages: dict = stages) -> float:
            fits = stages[rule]
            last = [f["cpu_s"][-1] or 0 for f in fits.values() if f["cpu_s"]]
            return max(last, default=0)

        top = sorted(stages, key=cost, reverse=True)[:6]
        colours = dict(zip(top, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
        for rule in top:
            for name, f in stages[rule].items():
                for row, key in enumerate(("cpu_s", "peak_mib")):  # the two rows of panels
                    grid[row][col].plot(
                        f["sizes"],
                        [v or np.nan for v in f[key]],
                        styles.get(name, "-"),
                        marker="o",
                        color=colours[rule],
                        label=f"{rule} ({name})",
                    )
        for row, what in enumerate(("CPU s per stage", "peak MiB of the stage's largest job")):
            ax = grid[row][col]
            ax.set_xscale("log")
            ax.set_yscale("log")
            sizes = summary["axes"][axis]["sizes"]
            limits = ax.get_ylim()
            low = limits[0] * 1.5
            for slope, style in ((1, ":"), (2, "-.")):  # guides: linear and quadratic
                ax.plot(
                    [sizes[0], sizes[-1]],
                    [low, low * (sizes[-1] / sizes[0]) ** slope],
                    style,
                    color="grey",
                    linewidth=0.8,
                    label=f"slope {slope}",
                )
            ax.set_ylim(limits)  # the data's range, not the guides'
            ax.set_xlabel(axis)
            ax.set_ylabel(what)
            ax.grid(True, which="both", alpha=0.3)
        grid[0][col].set_title(f"{axis} (solid: after, dashed: before)")
        grid[0][col].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})  # the same bytes from the same data


def _commit(tree: Path) -> str:
    result = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True)  # fmt: skip
    return result.stdout.strip() or "unknown"


def main() -> None:
    parser = command_line(__doc__, "growth.md")
    parser.add_argument("--before", type=Path, default=Path("/tmp/ci"))
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--only", choices=["before", "after"])
    parser.add_argument("--axes", nargs="+", choices=list(AXES), default=list(AXES))
    parser.add_argument("--sizes", type=int, nargs="+", help="only these sizes of the axes")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, the after tree only")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-growth"))
    parser.add_argument("--until", help="UTC HH:MM: start no run after it, stop one running")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per run")
    parser.add_argument("--limit-gb", type=float, default=16, help="RLIMIT_AS per process")
    parser.add_argument("--cap-gb", type=float, default=14, help="resident total of a run")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        help="AXIS:TREE:SIZE=TEXT, printed under that run's axis (e.g. the machine was shared)",
    )
    args = parser.parse_args()
    notes = [NOTE.fullmatch(note) for note in args.note]
    for note, match in zip(args.note, notes, strict=True):
        if match is None:
            parser.error(f"--note {note!r}: expected AXIS:TREE:SIZE=TEXT (systems:after:200=...)")
    axes = QUICK if args.quick else {a: AXES[a] for a in args.axes}
    if args.quick:
        args.only, args.out = "after", args.workdir / "growth-quick.md"
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    shown = {"after": trees["after"]} if args.quick else dict(trees)  # the report's trees
    if args.only:
        trees = {args.only: trees[args.only]}
    store = args.out.with_suffix(".jsonl")
    done = load(store, key=lambda r: (r["axis"], r["tree_name"], r["size"]))
    deadline = None
    if args.until:
        hour, minute = map(int, args.until.split(":"))
        now = datetime.now(UTC)
        stop = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        deadline = stop.timestamp() + (86400 if stop < now else 0)
    meta_path = store.with_suffix(".meta.json")
    meta = (
        json.loads(meta_path.read_text())
        if meta_path.is_file()
        else {
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "load": os.getloadavg()[0],
        }
    )
    for match in notes:
        axis, tree, size, text = match.groups()
        meta.setdefault("notes", {})[f"{axis}:{tree}:{size}"] = text
    if args.sizes:
        meta["sizes"] = sorted(set(meta.get("sizes", [])) | set(args.sizes))
    # the report names a tree it runs or the store has runs of (not a before tree never run)
    shown = {n: t for n, t in shown.items() if n in trees or any(k[1] == n for k in done)}
    tree_info = {n: {"path": str(t), "commit": _commit(t)} for n, t in shown.items()}
    meta_path.parent.mkdir(parents=True, exist_ok=True)
    meta_path.write_text(json.dumps(meta))
    for axis, (sizes, base) in axes.items():
        if args.report_only:
            break
        for size in sizes:
            if args.sizes and size not in args.sizes:
                continue
            design = {**base, axis: size}
            data = args.workdir / "data" / f"{axis}-{size}"
            for name, tree in trees.items():
                if (
                    (axis, name, size) in done
                    or size > BEFORE_MAX.get(axis, math.inf)
                    and name == "before"
                ):
                    continue
                if deadline is not None and time.time() > deadline:
                    print(f"deadline: {axis} {size} {name} not run", flush=True)
                    continue
                if not (data / "config.yaml").is_file():
                    write_design(data, **design)
                print(f"{datetime.now(UTC):%H:%M:%S} {axis}={size} {name} ...", flush=True)
                run = run_once(tree, data, args.workdir / f"{axis}-{size}-{name}", args, deadline)
                run.update(axis=axis, size=size, tree_name=name, design=design,
                           commit=_commit(tree))  # fmt: skip
                print(f"  wall {run['wall_s']} s, largest {run['largest_mib']} MiB, ok {run['ok']}",
                      flush=True)  # fmt: skip
                with store.open("a") as sink:
                    sink.write(json.dumps(run) + "\n")
                done[(axis, name, size)] = run
    every = QUICK if args.quick else AXES  # the report: every axis the store has runs of
    report(done, every, tree_info, args.out, args.out.with_suffix(".svg"), meta)


if __name__ == "__main__":
    main()
