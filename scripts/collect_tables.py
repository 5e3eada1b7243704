"""Snakemake script: concatenate the per-job parts of every table into results/tables/ (a table
no analysis wrote, e.g. classical's when it is not run, gets its header only)."""

from pathlib import Path

from infrepro.analyses.common.tables import combine, conform, joined_parts
from infrepro.io.results import read_text_table
from infrepro.plumbing.atomic import write_csv, write_text
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    for name in smk.output.keys():
        paths = [p for p in smk.input.parts if Path(p).stem == name]
        text = joined_parts(paths)
        if text is not None:
            write_text(smk.output[name], text)
        else:
            parts = [read_text_table(p) for p in paths]
            write_csv(combine(parts) if parts else conform(name, None), smk.output[name])


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
