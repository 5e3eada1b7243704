"""What the benchmark scripts share: the folder their reports go to, the common part of their
command line, how a report is written, and for a simulation kept in a JSON-lines store (one row
per experiment, so an interrupted run resumes): how it is run, read back and its rates given."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from infrepro.validation.calibration import clopper_pearson

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


def cell_key(row: dict) -> tuple[str, int]:
    """Where a store's row belongs: its cell's key and its experiment ``i``."""
    return row["key"], row["i"]


def load(path: Path, key: Callable[[dict], tuple] = cell_key) -> dict[tuple, dict]:
    """The rows of the store ``path`` by ``key(row)`` (none before the first run)."""
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            done[key(row)] = row
    return done


def run_jobs(
    one: Callable[[tuple], dict],
    jobs: list[tuple],
    store: Path,
    done: dict[tuple, dict],
    processes: int,
    every: int,
    key: Callable[[dict], tuple] = cell_key,
    what: str = "experiments",
) -> None:
    """``one`` on each job in ``processes`` worker processes: each row appended to ``store`` as
    it comes and kept in ``done`` by ``key(row)``; a progress line every ``every`` rows."""
    start = time.time()
    with store.open("a") as sink, multiprocessing.Pool(processes) as pool:
        for count, row in enumerate(pool.imap_unordered(one, jobs, chunksize=4), 1):
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            done[key(row)] = row
            if count % every == 0:
                print(f"{count} / {len(jobs)} {what}, {time.time() - start:.0f} s", flush=True)


def cell_rows(todo: list[tuple[str, dict]], done: dict) -> Iterator[tuple[str, dict, list[dict]]]:
    """Each cell of ``todo`` (key, parameters with its ``n``) with the rows ``done`` holds of
    it; cells with none are left out."""
    for key, p in todo:
        rows = [done[(key, i)] for i in range(p["n"]) if (key, i) in done]
        if rows:
            yield key, p, rows


def rate(k: int, n: int) -> str:
    """``k`` of ``n`` as a rate with its exact 95 % (Clopper-Pearson) interval."""
    low, high = clopper_pearson(k, n)
    return f"{k / n:.3f} [{low:.3f}, {high:.3f}]" if n else "–"


def level_bound(n: int, alpha: float = 0.05) -> float:
    """What a simulated level at ``n`` experiments is held to: α + 1.5 Monte-Carlo SEs."""
    return alpha + 1.5 * math.sqrt(alpha * (1 - alpha) / n)


def level_cells(k: int, n: int) -> str:
    """The cells rate, bound and holds? of a report's row: ``k`` false claims of ``n`` against
    the level 0.05's bound."""
    bound = level_bound(n)
    return f"{rate(k, n)} | ≤ {bound:.3f} | {'yes' if k / n <= bound else '**no**'}"
