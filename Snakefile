# infrepro: from raw ML experiment outputs to a statistical report on inferential reproducibility.
# Thin by design: load and validate the config, include one rule file per stage, define `all`.
from snakemake.utils import min_version, validate

from snakemake.exceptions import WorkflowError

from infrepro.io import InputError
from infrepro.io.options import check_config_size

min_version("9.0")


# A config given with --configfile is the whole config: the bundled example's is read only when
# none is given, so none of its settings leak into a user's experiment. Defaults come only from
# the schema (validate sets them, nested ones included).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


try:
    check_config_size(config)  # before the schema check, whose messages print the value
except InputError as err:
    raise WorkflowError(f"infrepro: invalid input: {err}") from None
validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"

if RAW_MODE:  # scores mode reads per-segment scores instead of scoring hypotheses

    include: "workflow/rules/inputs.smk"
    include: "workflow/rules/score.smk"
    include: "workflow/rules/properties.smk"

include: "workflow/rules/evaluation.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/paper.smk"


rule all:
    input:
        final_outputs(),
        paper_outputs(),
    default_target: True
