"""Versions of the software behind the results, import-light (Snakemake reads them while
parsing the workflow; ``results/tables/software.csv`` is built from them)."""

from __future__ import annotations

import platform
from importlib import metadata

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


def software_versions(packages: tuple[str, ...] = PACKAGES) -> list[tuple[str, str]]:
    """(package, version) for Python and each installed package ('not installed' otherwise)."""
    rows = [("python", platform.python_version())]
    for name in packages:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    return rows
