"""The HTML report: tables in ``results/tables/`` rendered into one self-contained page.

The names below are imported on first use (PEP 562): the workflow's parse reads only
``report.checksums``, and importing the package must not load the renderer, the figures and
scipy for that (they are most of a no-op run's time)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_package

if TYPE_CHECKING:  # the public names (for type checkers as they are; loaded on first use)
    from infrepro.report.checksums import input_checksums, sha256
    from infrepro.report.context import build_context
    from infrepro.report.inputs import REPORT_TABLES, ReportSettings, load_tables, table_paths
    from infrepro.report.page import render, render_report
    from infrepro.report.versions import software_table, software_versions

__getattr__, __all__ = lazy_package(__name__, __file__, globals())
