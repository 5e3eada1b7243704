"""The HTML report: tables in ``results/tables/`` rendered into one self-contained page."""

from .checksums import input_checksums, sha256
from .context import build_context
from .inputs import REPORT_TABLES, ReportSettings, load_tables, table_paths
from .render import render, render_report
from .versions import software_table, software_versions

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
