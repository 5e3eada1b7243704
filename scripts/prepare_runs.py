"""Snakemake script: validate the runs sheet and store its run metadata as Parquet; runs from a
pattern come as the runs sheet the parse derived, also written as results/tables/runs.csv."""

from infrepro.io import read_runs_sheet
from infrepro.io.runs import runs_from_sheet, with_recorded_looks
from infrepro.plumbing.atomic import write_csv, write_parquet
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    sheet = smk.params.get("sheet")
    if sheet:
        runs = runs_from_sheet(sheet)
        write_csv(runs, smk.output.table)
    else:
        runs = read_runs_sheet(
            smk.input.runs, check_files=False, look_column=smk.params.look_column
        )
    runs = with_recorded_looks(runs.drop(columns=["hypotheses"]), smk.params.looks)
    write_parquet(runs, smk.output.runs)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
