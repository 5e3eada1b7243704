"""Snakemake script of the report rules: provenance tables, or the HTML report itself."""

import os
from pathlib import Path

from infrepro.io import write_csv, write_text
from infrepro.report import (
    REPORT_TABLES,
    ReportSettings,
    input_checksums,
    render_report,
    software_table,
)
from infrepro.scripting import run_rule_script


def provenance(smk) -> None:
    write_csv(input_checksums(smk.input.inputs), smk.output.inputs)
    write_csv(software_table([tuple(row) for row in smk.params.versions]), smk.output.software)


def html(smk) -> None:
    folder = Path(smk.output.html).parent
    paths = {name: smk.input[name] for name in REPORT_TABLES}
    links = {name: Path(os.path.relpath(path, folder)).as_posix() for name, path in paths.items()}
    settings = ReportSettings(
        name=smk.params.name,
        baseline=smk.params.baseline,
        systems=list(smk.params.systems),
        metrics=list(smk.params.metrics),
        better=dict(smk.params.better),
        properties=list(smk.params.properties),
        facets=list(smk.params.facets),
        config=smk.params.config,
        date=None if smk.params.date is None else str(smk.params.date),
        alpha=float(smk.params.alpha),
        links=links,
        rerun=smk.params.rerun,
    )
    write_text(smk.output.html, render_report(paths, settings, smk.params.templates))


def main(smk) -> None:
    if smk.rule == "report_provenance":
        provenance(smk)
    else:
        html(smk)


run_rule_script(main, snakemake)  # noqa: F821
