# The HTML report (results/report.html): provenance tables, then one self-contained page rendered
# from results/tables/*.csv. Both are also registered with Snakemake's own report (--report).
from pathlib import Path

from infrepro.core.provenance import software_versions
from infrepro.report.assets import TEMPLATE_DIR, TEMPLATE_FILES
from infrepro.core.vocabulary import REPORT_TABLES

REPORT_OPTIONS = config["report"]
TEMPLATES = {name: file_digest(TEMPLATE_DIR / name) for name in TEMPLATE_FILES}

# As every input is named (infrepro.io.paths.portable_path: relative to the working directory when
# inside it): the config files in use (once each), and the command that reruns this experiment
# (with the config files given on the command line, if any).
CONFIG_FILES = list(
    dict.fromkeys(
        portable_path(p) for p in snakemake_door.configfiles(workflow) if Path(p).is_file()
    )
)
RERUN_COMMAND = " ".join(
    [
        "snakemake --cores 2",
        *(f"--configfile {portable_path(p)}" for p in snakemake_door.given_configfiles(workflow)),
    ]
)


rule report_provenance:
    input:
        inputs=list(dict.fromkeys([*EXPERIMENT.inputs, *CONFIG_FILES])),
    output:
        inputs=report(
            f"{RESULTS}/tables/inputs.csv",
            caption="../report/captions/inputs.rst",
            category="Provenance",
        ),
        software=report(
            f"{RESULTS}/tables/software.csv",
            caption="../report/captions/software.rst",
            category="Provenance",
        ),
    params:
        script=rule_script("report_provenance.py"),
        versions=software_versions(),
        content=content_of(*EXPERIMENT.inputs, *CONFIG_FILES),
    log:
        "logs/report_provenance.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    run:
        # in a worker (Snakemake's process stays free to start jobs); the inputs' digests are
        # the `content` parameter's, computed at parse (kept by file state), not read again
        run_script(locals(), worker=True)


rule report:
    input:
        **{name: f"{RESULTS}/tables/{name}.csv" for name in REPORT_TABLES},
        **({RUNS_TABLE: RUNS_CSV} if RUNS_FROM_PATTERN else {}),
    output:
        html=report(
            f"{RESULTS}/report.html",
            caption="../report/captions/report.rst",
            category="Report",
            labels={"name": "infrepro report"},
        ),
    params:
        script=rule_script("report.py"),
        name=verbatim(EXPERIMENT.name),
        baseline=verbatim(EXPERIMENT.baseline),
        systems=verbatim(EXPERIMENT.systems),
        metrics=verbatim(EXPERIMENT.metrics),
        better=EXPERIMENT.better,
        units=verbatim(EXPERIMENT.units),
        properties=verbatim(EXPERIMENT.properties),
        facets=verbatim(EXPERIMENT.facets),
        config=config,
        date=verbatim(REPORT_OPTIONS.get("date")),
        alpha=REPORT_OPTIONS["alpha"],
        rerun=RERUN_COMMAND,
        looks=verbatim(LOOKS_SEEN),
        # package data, by name and content (where the package is installed is no input)
        templates=TEMPLATES,
    log:
        "logs/report.log",
    threads: REPORT_OPTIONS["threads"]  # figures drawn side by side (plots.cache)
    resources:
        mem_mb=2000,
        runtime=30,
    run:
        run_script(locals(), worker=True)
