"""Snakemake script: validate the test set and store it as Parquet."""

from infrepro.io import read_testset
from infrepro.plumbing.atomic import write_parquet
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    write_parquet(read_testset(smk.input.testset), smk.output.testset)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
