# infrepro: from raw ML experiment outputs to a statistical report on inferential reproducibility.
# Thin by design: load and validate the config, include one rule file per stage, define `all`.
from snakemake.utils import min_version

from snakemake.exceptions import WorkflowError

from infrepro.io.errors import InputError
from infrepro.io.config import check_config, check_config_file
from infrepro.workflow import snakemake_door

min_version("9.0")


# A config given with --configfile is the whole config: the bundled example's is read only when
# none is given, so none of its settings leak into a user's experiment. Defaults come only from
# the schema (check_config sets them, nested ones included).
if not snakemake_door.given_configfiles(workflow):
    try:  # Snakemake's own message for a YAML error names neither the file nor the line
        check_config_file("config/config.yaml")
    except InputError as err:
        raise WorkflowError(f"infrepro: invalid input: {err}") from None

    configfile: "config/config.yaml"


try:
    # size, duplicate keys, finite numbers, the package's schema (one file for the workflow and
    # the API): each error names the option; the schema's defaults are filled in, nested ones too
    check_config(config, snakemake_door.configfiles(workflow))
except InputError as err:
    raise WorkflowError(f"infrepro: invalid input: {err}") from None


include: "workflow/rules/common.smk"

if RAW_MODE:  # scores mode reads per-segment scores instead of scoring hypotheses

    include: "workflow/rules/inputs.smk"
    include: "workflow/rules/score.smk"
    include: "workflow/rules/properties.smk"

include: "workflow/rules/evaluation.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/outputs.smk"


rule all:
    input:
        final_outputs(),
        paper_outputs(),
    default_target: True
