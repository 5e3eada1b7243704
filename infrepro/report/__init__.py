"""The HTML report: tables in ``results/tables/`` rendered into one self-contained page.

The names below are imported on first use (PEP 562): the workflow's parse reads only
``report.checksums``, and importing the package must not load the renderer, the figures and
scipy for that (they are most of a no-op run's time)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_getattr

_WHERE = {
    "input_checksums": "checksums",
    "sha256": "checksums",
    "build_context": "context",
    "REPORT_TABLES": "inputs",
    "ReportSettings": "inputs",
    "load_tables": "inputs",
    "table_paths": "inputs",
    "render": "page",
    "render_report": "page",
    "software_table": "versions",
    "software_versions": "versions",
}

__all__ = [
    "REPORT_TABLES",
    "ReportSettings",
    "build_context",
    "input_checksums",
    "load_tables",
    "render",
    "render_report",
    "sha256",
    "software_table",
    "software_versions",
    "table_paths",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from infrepro.report.checksums import input_checksums, sha256
    from infrepro.report.context import build_context
    from infrepro.report.inputs import REPORT_TABLES, ReportSettings, load_tables, table_paths
    from infrepro.report.page import render, render_report
    from infrepro.report.versions import software_table, software_versions


__getattr__ = lazy_getattr(__name__, _WHERE, globals())
