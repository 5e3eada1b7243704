"""What the report is built from: the tables in ``results/tables/`` and the experiment's names.

Tables are read with their declared types (infrepro.io.results), so labels such as facet levels
(``0.10``), bins and the preformatted p-values keep their exact spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from infrepro.core.catalog import POINTS
from infrepro.core.vocabulary import OPTIONAL_REPORT_TABLES, REPORT_TABLES
from infrepro.io.results import read_result_table


@dataclass(frozen=True)
class ReportSettings:
    """The experiment as the report names it (no numbers: those come from the tables)."""

    name: str
    baseline: str
    systems: list[str]
    metrics: list[str]
    better: Mapping[str, str]
    properties: list[str] = field(default_factory=list)
    facets: list[str] = field(default_factory=list)
    config: Mapping[str, Any] = field(default_factory=dict)
    date: str | None = None
    alpha: float = 0.05
    links: Mapping[str, str] = field(default_factory=dict)
    rerun: str = "snakemake --cores 2"
    units: Mapping[str, str] = field(default_factory=dict)  # per metric; default points
    # where the looks come from (docs/method.md §4e.12): source ('ledger' or 'look column'),
    # the ledger's path and the look this run is
    looks: Mapping[str, object] = field(default_factory=dict)

    def unit(self, metric: str) -> str:
        """How the report's scores of ``metric`` read: ``points`` (stored fractions x 100) or,
        for a raw scale such as 1-5 ratings, ``as given``."""
        return self.units.get(metric, POINTS) or "as given"

    def link(self, table: str) -> str:
        """The relative link from the report to a table's CSV."""
        return self.links.get(table, f"tables/{table}.csv")

    @property
    def competitors(self) -> list[str]:
        return [s for s in self.systems if s != self.baseline]


def load_tables(paths: Mapping[str, str | Path]) -> dict[str, pd.DataFrame]:
    """Every report table by name, the optional ones too; a table without a path is empty."""
    return {
        name: read_result_table(name, paths[name]) if name in paths else pd.DataFrame()
        for name in (*REPORT_TABLES, *OPTIONAL_REPORT_TABLES)
    }


def table_paths(directory: str | Path) -> dict[str, Path]:
    """``results/tables/<name>.csv`` for every report table present in ``directory``."""
    root = Path(directory)
    paths = {name: root / f"{name}.csv" for name in (*REPORT_TABLES, *OPTIONAL_REPORT_TABLES)}
    return {name: path for name, path in paths.items() if path.is_file()}
