"""Per-job wall time and peak memory of a Snakemake run, by polling /proc (Linux only).

Worker processes (``multiprocessing`` spawn children that run many ``run:`` jobs, see
``infrepro/workflow/jobs.py``) are recorded under the label ``workers``: their peak bounds every job
they ran. Job times then come from Snakemake's log (``joblog.py``).

Snakemake runs every ``script:`` job as a child ``python .snakemake/scripts/tmpXXXX.<name>.py``
process. A background thread scans the descendants of the Snakemake process every
``interval`` seconds and records, per job process, when it was first and last seen and its
``VmHWM`` (the kernel's peak resident set size of the process, so a short spike between two polls
is still counted, unless it happens in the last interval before exit). The job is identified by
the log path that Snakemake pickles into the temporary script (every rule has a ``log:``), read
once when the process is first seen. Wall times are therefore accurate to about one interval.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^/\s]*\.py")
_LOG = re.compile(rb"logs/[A-Za-z0-9_./+=@:-]+?\.log")


@dataclass
class JobRecord:
    """One job process: its label, first/last sighting (monotonic seconds) and peak RSS (KiB)."""

    pid: int
    label: str
    start: float
    end: float
    peak_kib: int = 0


@dataclass
class ProcessMonitor:
    """Poll the descendants of ``root_pid``; ``jobs`` holds one record per job process."""

    root_pid: int
    workdir: Path
    interval: float = 0.2
    jobs: dict[int, JobRecord] = field(default_factory=dict)
    root_peak_kib: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def poll(self) -> None:
        now = time.monotonic()
        for pid in _descendants(self.root_pid):
            cmdline = _cmdline(pid)
            match = _SCRIPT.search(cmdline)
            worker = "multiprocessing.spawn" in cmdline  # a long-lived worker: many jobs
            if (match is None and not worker) or not cmdline.lstrip().split(" ")[0].endswith(
                ("python", "python3")
            ):
                continue
            peak = _vm_hwm(pid)
            record = self.jobs.get(pid)
            if record is None:
                label = "workers" if worker else self._label(match.group(0))
                record = self.jobs[pid] = JobRecord(pid, label, now, now)
            record.end = now
            record.peak_kib = max(record.peak_kib, peak)
        self.root_peak_kib = max(self.root_peak_kib, _vm_hwm(self.root_pid))

    def _label(self, script: str) -> str:
        """The job's log path, from the pickled ``snakemake`` object in its temporary script."""
        text = _read(str(self.workdir / script))
        found = _LOG.search(text)
        return found.group(0).decode() if found else script


def stage_of(label: str) -> str:
    """The rule a job label (its log path) belongs to."""
    parts = label.removeprefix("logs/").removesuffix(".log").split("/")
    if parts[0] == "score":
        return "score_run"
    return parts[0]


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        text = _read(str(stat)).decode(errors="replace")
        if not text:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            out.append(child)
            todo.append(child)
    return out


def _vm_hwm(pid: int) -> int:
    for line in _read(f"/proc/{pid}/status").decode(errors="replace").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _cmdline(pid: int) -> str:
    """A process's command line, its arguments joined by spaces ("" once it has exited)."""
    return _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""
