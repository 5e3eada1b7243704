"""Snakemake script: render results/report.html from results/tables/*.csv."""

import logging
import os
from pathlib import Path

from infrepro.core.vocabulary import OPTIONAL_REPORT_TABLES
from infrepro.plots.cache import FigureStore, figures_from
from infrepro.plumbing.atomic import write_text
from infrepro.report import (
    REPORT_TABLES,
    ReportSettings,
    render_report,
)
from infrepro.workflow.jobs import run_rule_script
from infrepro.workflow.outputs import FIGURE_STORE


def main(smk) -> None:
    folder = Path(smk.output.html).parent
    given = dict(smk.input.items())  # the optional tables when the rule has them
    paths = {
        name: given[name] for name in (*REPORT_TABLES, *OPTIONAL_REPORT_TABLES) if name in given
    }
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
        units=dict(smk.params.units),
        looks=dict(smk.params.looks),
    )
    # figures whose data did not change since the last render are not drawn again; the others
    # are drawn in the job's threads' worth of processes
    with figures_from(FigureStore.open(FIGURE_STORE), processes=smk.threads) as figures:
        write_text(smk.output.html, render_report(paths, settings))
    figures.save()  # after the page: a failed render keeps the previous figures
    logging.info("figures: %d of %d from the last render", figures.reused, len(figures.current))


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
