"""Per-job start and end times from Snakemake's own log (its `[date]` lines, 1 s resolution).

Jobs that run inside Snakemake's process or in its long-lived worker processes (`run:` rules,
see `infrepro/workflow/jobs.py`) have no process of their own for `monitor.py` to watch; the log
has every job, however it runs, so both trees of a side-by-side comparison are timed the same way.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")
_FINISHED = re.compile(r"^Finished job(?:id:)? (\d+)")


def parse_jobs(log: Path) -> list[dict[str, object]]:
    """One record per finished job: rule, label (rule + wildcards), start, end (epoch seconds)."""
    stamp: float | None = None
    pending: dict[str, object] | None = None
    started: dict[int, dict[str, object]] = {}
    done: list[dict[str, object]] = []
    for line in log.read_text(errors="replace").splitlines():
        if m := _STAMP.match(line.strip()):
            when = datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
            stamp = when.timestamp()
        elif m := _RULE.match(line):
            pending = {"rule": m.group(1), "label": m.group(1), "start": stamp}
        elif pending is not None and (m := _WILDCARDS.match(line)):
            pending["label"] = f"{pending['rule']} {m.group(1)}"
        elif pending is not None and (m := _JOBID.match(line)):
            started[int(m.group(1))] = pending
        elif m := _FINISHED.match(line):
            job = started.pop(int(m.group(1)), None)
            if job is not None:
                done.append({**job, "end": stamp})
    return done
