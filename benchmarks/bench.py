"""What the benchmark scripts share: the folder their reports go to, the common part of their
command line, and how a report is written."""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def command_line(doc: str, report: str, experiments: int | None = None) -> argparse.ArgumentParser:
    """A benchmark's parser: described by the first paragraph of its docstring (``doc``), with
    ``--out``, where its report goes (default ``RESULTS / report``), and for a simulation
    ``--n``, its experiments per cell (default ``experiments``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / report)
    if experiments is not None:
        parser.add_argument("--n", type=int, default=experiments, help="experiments per cell")
    return parser


def started() -> tuple[float, float, str]:
    """When a benchmark starts: ``time.time()``, the machine's 1-minute load average and the UTC
    minute (``2026-11-27 14:05 UTC``), what its report says of the run and times it from."""
    start = time.time()
    load = os.getloadavg()[0]
    return start, load, datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def publish(out: Path, lines: list[str]) -> None:
    """Write the report's lines to ``out`` and print them."""
    text = "\n".join(lines)
    out.write_text(text, encoding="utf-8")
    print(text)
