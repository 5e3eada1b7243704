"""What the benchmark scripts share: the folder their reports go to, the common part of their
command line, and how a report is written."""

from __future__ import annotations

import argparse
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


def publish(out: Path, lines: list[str]) -> None:
    """Write the report's lines to ``out`` and print them."""
    text = "\n".join(lines)
    out.write_text(text, encoding="utf-8")
    print(text)
