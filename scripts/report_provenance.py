"""Snakemake script: the provenance tables (input checksums, software versions)."""

from infrepro.plumbing.atomic import write_csv
from infrepro.report import input_checksums, software_table
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    # the inputs' SHA-256 from the parse (the rerun trigger), not computed again
    write_csv(input_checksums(smk.input.inputs, known=smk.params.content), smk.output.inputs)
    write_csv(software_table([tuple(row) for row in smk.params.versions]), smk.output.software)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
