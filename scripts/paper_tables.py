"""Snakemake script: write results/paper/<metric>.tex and .md from the decision table and the
decision records."""

from infrepro.core.registry import SUMMARY
from infrepro.io.results import read_result_table
from infrepro.plumbing.atomic import write_text
from infrepro.report.decisions import DECISIONS, book_of, records_of
from infrepro.report.paper import paper_files
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    summary = read_result_table(SUMMARY, smk.input.summary)
    frame = read_result_table(DECISIONS, smk.input.decisions)
    decisions = book_of(records_of(frame), smk.params.family)
    for metric, tex, md in zip(smk.params.metrics, smk.output.tex, smk.output.md, strict=True):
        against = [
            r for r in decisions.family_records(metric) if r.reference == smk.params.baseline
        ]
        unit = smk.params.units.get(metric, "points") or "as given"
        tex_text, md_text = paper_files(
            summary, against, metric, smk.params.better[metric], smk.params.alpha, unit
        )
        write_text(tex, tex_text)
        write_text(md, md_text)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
