"""Versions of the software behind the results (``results/tables/software.csv``)."""

from __future__ import annotations

import platform
from importlib import metadata

import pandas as pd

PACKAGES = (
    "infrepro",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "statsmodels",
    "snakemake",
    "sacrebleu",
    "rouge-score",
    "nltk",
    "textstat",
    "numba",
    "matplotlib",
    "jinja2",
    "jsonschema",
    "pyyaml",
)
SOFTWARE_COLUMNS = ["package", "version"]


def software_versions(packages: tuple[str, ...] = PACKAGES) -> list[tuple[str, str]]:
    """(package, version) for Python and each installed package ('not installed' otherwise)."""
    rows = [("python", platform.python_version())]
    for name in packages:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    return rows


def software_table(rows: list[tuple[str, str]] | None = None) -> pd.DataFrame:
    """The versions as a table."""
    return pd.DataFrame(rows if rows is not None else software_versions(), columns=SOFTWARE_COLUMNS)
