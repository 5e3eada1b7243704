# infrepro: from raw ML experiment outputs to a statistical report on inferential reproducibility.
# Thin by design: load and validate the config, include one rule file per stage, define `all`.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"

if RAW_MODE:  # scores mode reads per-segment scores instead of scoring hypotheses

    include: "workflow/rules/inputs.smk"
    include: "workflow/rules/score.smk"
    include: "workflow/rules/properties.smk"

include: "workflow/rules/evaluation.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        final_outputs(),
    default_target: True
