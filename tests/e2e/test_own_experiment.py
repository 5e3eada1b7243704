"""End-to-end: a user's own experiment, exactly as written (issue 12), one test per item.

1. a --configfile config is the whole config (README's commands, another folder, no flags);
2. any column name works in every analysis and reads the same in tables and report;
3. every option is checked before any job;
4. non-finite scores are rejected, incomplete runs rejected or admitted and listed;
5. outputs get the permissions of the user's umask.
"""

from __future__ import annotations

import re
import shutil
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_helpers import (
    REPO_ROOT,
    job_counts,
    make_mini_experiment,
    run_snakemake,
    write_scores,
)

from infrepro.core.schema import SCHEMA as CONFIG_SCHEMA
from infrepro.lmm import fit

pytestmark = pytest.mark.e2e

SCHEMA = yaml.safe_load(CONFIG_SCHEMA.read_text())
DEFAULT_NAME = SCHEMA["properties"]["experiment"]["default"]


def readme_yaml(heading: str) -> dict:
    """The first YAML block of README.md after ``heading``."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text[text.index(heading) :]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def report_title(root: Path) -> str:
    html = (root / "results/report.html").read_text()
    return re.search(r"<h1>(.*?)</h1>", html).group(1)


def scores_frame(
    columns: dict[str, str],
    *,
    systems: tuple[str, str] = ("base", "comp"),
    runs: int = 3,
    segments: int = 10,
    seed: int = 3,
) -> pd.DataFrame:
    """Per-segment scores of ``runs`` runs per system; ``columns`` names each role's column
    (segment, system, run, metric, and optionally facet2, facet3, prop, prop2, prop3,
    category)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s_index, system in enumerate(systems):
        for run in range(1, runs + 1):
            offset = rng.normal(0, 0.02)
            for seg in range(segments):
                length = 5 + (seg * 7) % 23
                row = {
                    columns["segment"]: f"seg {seg}",
                    columns["system"]: system,
                    columns["run"]: run,
                    columns["metric"]: 0.5
                    + 0.05 * s_index
                    + offset
                    + 0.01 * length
                    + rng.normal(0, 0.05),
                }
                extra = {
                    "facet2": run % 2,
                    "facet3": "ä" if run % 3 else "ö",
                    "prop": length,
                    "prop2": (seg * 5) % 7 + 0.5,
                    "prop3": length + 0.25,
                    "category": "kurz" if seg % 2 else "lang",
                }
                row.update({columns[k]: v for k, v in extra.items() if k in columns})
                rows.append(row)
    return pd.DataFrame(rows)


# -- 1. the config given with --configfile is the whole config ---------------------------------


def test_readme_configs_replace_the_bundled_one(tmp_path: Path) -> None:
    """README's scores-mode config runs to the end with `--configfile` beside the bundled
    config/config.yaml, nothing of which leaks; README's raw-mode config passes start-up."""
    root = tmp_path / "clone"
    shutil.copytree(REPO_ROOT / "config", root / "config")
    scores = readme_yaml("### Scores mode")
    columns = scores["columns"]
    frame = scores_frame(
        {
            "segment": columns["segment"],
            "system": columns["system"],
            "run": columns["run"][1],
            "metric": columns["metrics"][0],
            "prop": columns["properties"][0],
        },
        systems=(scores["baseline"], "Marking"),
        runs=2,
        segments=8,
    )
    write_scores(root / scores["scores"], frame)
    (root / "my_experiment.yaml").write_text(yaml.safe_dump(scores))
    result = run_snakemake(root, configfile="my_experiment.yaml", directory=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert report_title(root) == DEFAULT_NAME
    inputs = pd.read_csv(root / "results/tables/inputs.csv")
    assert not any("config/config.yaml" in p for p in inputs["path"])

    raw = readme_yaml("### Raw mode")
    experiment = make_mini_experiment(root / "data", n_segments=6, n_seeds=1)
    testset = pd.read_csv(experiment.root / "testset.tsv", sep="\t", dtype=str)
    testset["domain"] = ["news", "web"] * 3
    testset.to_csv(root / raw["testset"], sep="\t", index=False)
    runs = pd.read_csv(experiment.runs_path, sep="\t", dtype=str)
    runs["system"] = runs["system"].replace({"base": raw["baseline"]})
    runs.to_csv(root / raw["runs"], sep="\t", index=False)
    (root / "raw.yaml").write_text(yaml.safe_dump(raw))
    dry = run_snakemake(root, "-n", configfile="raw.yaml", directory=False)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert job_counts(dry.stdout)["score_run"] == 2


def test_minimal_raw_config_from_another_folder(tmp_path: Path) -> None:
    """`snakemake --snakefile <clone>/Snakefile --directory my_exp --configfile
    my_exp/config.yaml` with a minimal raw config: title and best-run choice are the schema's
    defaults, not the bundled example's; without flags the bundled example still runs."""
    experiment = make_mini_experiment(tmp_path / "my_exp", n_segments=6, n_seeds=2)
    shutil.copytree(REPO_ROOT / "config", experiment.root / "config")
    runs = pd.read_csv(experiment.runs_path, sep="\t", dtype=str)
    runs.drop(columns=["dev_score"]).to_csv(experiment.runs_path, sep="\t", index=False)
    experiment.write_config(
        {"testset": "testset.tsv", "runs": "runs.tsv", "baseline": "base", "metrics": ["ter"]}
    )
    result = run_snakemake(
        experiment.root, configfile="my_exp/config.yaml", cwd=tmp_path, targets=()
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert report_title(experiment.root) == DEFAULT_NAME
    summary = pd.read_csv(experiment.root / "results/tables/run_summary.csv")
    assert set(summary["selected_by"]) == {"test mean (optimistic)"}
    properties = pd.read_csv(experiment.root / "results/tables/property_bins.csv")
    assert set(properties["property"]) <= set(SCHEMA["properties"]["properties"]["default"])

    example = tmp_path / "clone"
    shutil.copytree(REPO_ROOT / "config", example / "config")
    shutil.copytree(REPO_ROOT / "resources/example", example / "resources/example")
    dry = run_snakemake(example, "-n", use_configfile=False)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert job_counts(dry.stdout)["score_run"] == len(
        pd.read_csv(REPO_ROOT / "config/runs.tsv", sep="\t")
    )


# -- 2. any column name --------------------------------------------------------------------------

ODD = {  # formula syntax, operators, spaces, Unicode, a keyword-like name
    "segment": "seg id",
    "system": "sys",
    "run": "rand seed",
    "facet2": "(1|x) + y",
    "facet3": "länge",
    "metric": "comet-22",
    "prop": "srclen",
    "prop2": "srclen-ratio",
    "prop3": "src len",
    "category": "score",
}


def test_any_column_name_works_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "odd"
    write_scores(root / "scores.csv", scores_frame(ODD, systems=("base", "cömp x")))
    props = [ODD["prop"], ODD["prop2"], ODD["prop3"], ODD["category"]]
    config = {
        "scores": "scores.csv",
        "columns": {
            "segment": ODD["segment"],
            "system": ODD["system"],
            "run": [ODD["system"], ODD["run"]],
            "metrics": [ODD["metric"]],
            "facets": [ODD["run"], ODD["facet2"], ODD["facet3"]],
            "properties": props,
        },
        "better": {ODD["metric"]: "higher"},
        "baseline": "base",
        "analyses": {"vca_interactions": [f"{ODD['run']}:{ODD['facet2']}"]},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-3000:]
    tables = root / "results/tables"
    glrt = pd.read_csv(tables / "glrt.csv", keep_default_na=False)
    analyses = set(glrt.loc[glrt["metric"] == ODD["metric"], "analysis"])
    assert {"best_vs_best", "all_runs", "all_runs_run_aware"} <= analyses
    joint = glrt[glrt["analysis"] == "conditional_joint"]
    assert set(props) <= set(joint["property"])
    assert "`comet-22` ~ system * `srclen-ratio` + (1|segment_id)" in set(joint["h1"])
    diagnostics = pd.read_csv(tables / "diagnostics.csv", keep_default_na=False)
    skipped = diagnostics[diagnostics["status"] == "skipped"]
    assert not skipped["reason"].str.contains("syntax|single column|not in list").any()
    components = pd.read_csv(tables / "variance_components.csv", keep_default_na=False)
    facets = [ODD["run"], ODD["facet2"], ODD["facet3"]]
    interaction = f"`{ODD['run']}`:`{ODD['facet2']}`"
    assert {*facets, interaction} <= set(components["component"])
    run_means = pd.read_csv(tables / "run_means.csv")
    assert set(facets) <= set(run_means.columns)

    # the slope labelled srclen-ratio is the slope of srclen-ratio (not of srclen)
    evaluation = pd.read_parquet(root / "results/evaluation.parquet")
    plain = evaluation.rename(columns={ODD["metric"]: "y", ODD["prop2"]: "x"})
    direct = fit("y ~ system * x + (1|segment_id)", plain, reml=False, reference_levels={})
    slopes = pd.read_csv(tables / "slopes.csv")
    row = slopes[
        (slopes["metric"] == ODD["metric"])
        & (slopes["property"] == ODD["prop2"])
        & (slopes["analysis"] == "conditional")
        & (slopes["group"] == "base")
    ]
    assert row["slope"].iloc[0] == pytest.approx(direct.fixed_effects["x"], rel=1e-6)

    html = (root / "results/report.html").read_text()
    for name in [ODD["metric"], ODD["prop2"], ODD["facet3"], "cömp x"]:
        assert name in html


# -- 3. every option checked before any job ------------------------------------------------------

ALIAS_BOMB = "\n".join(
    ["lol0: &a0 [x, x, x, x, x, x, x, x, x]"]
    + [f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
)

OPTION_CASES = {
    "bins not increasing": (
        {"property_options": {"bins": {"length": [55, 15]}}},
        r"property_options.bins.length is \[55, 15\]; cut points must be strictly increasing",
    ),
    "bins and labels of different lengths": (
        {"property_options": {"bins": {"length": [15]}, "bin_labels": {"length": list("abc")}}},
        r"bin_labels.length has 3 labels \['a', 'b', 'c'\], but there are 2 bins "
        r"\(property_options.bins.length has 1 cut point\)",
    ),
    "bins of a property not computed": (
        {"property_options": {"bins": {"domain": [1]}}},
        r"property_options.bins names 'domain', which is not a computed property",
    ),
    "categorical names no column": (
        {"property_options": {"categorical": ["nosuch"]}},
        r"property_options.categorical names 'nosuch', which is not one of the experiment's own",
    ),
    "vca interaction of an unknown facet": (
        {"analyses": {"vca_interactions": ["nosuch:seed"]}},
        r"analyses.vca_interactions has 'nosuch:seed': 'nosuch' is neither segment_id nor a facet",
    ),
    "facets of an unknown system": (
        {"analyses": {"facets": {"transformer": ["seed"]}}},
        r"analyses.facets names system 'transformer', which is not in the runs \(systems: base",
    ),
    "facets naming an unknown facet": (
        {"analyses": {"facets": {"base": ["lambda"]}}},
        r"analyses.facets.base names facet 'lambda', which the runs do not have \(facets: seed\)",
    ),
    "report date as a mapping": (
        {"report": {"date": {"year": 2026}}},
        r"report.date is a mapping \(\{'year': 2026\}\); it must be text",
    ),
    "dev scores without a direction": (
        {"analyses": {}},
        r"runs.tsv column 'dev_score'\), so analyses.dev_score_better is required",
    ),
    "YAML alias bomb": (None, r"the config expands to [\d,]+ values"),
}


@pytest.mark.parametrize("case", list(OPTION_CASES))
def test_every_option_is_checked_before_any_job(tmp_path: Path, case: str) -> None:
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=4, n_seeds=1)
    change, pattern = OPTION_CASES[case]
    if change is None:
        experiment.config_path.write_text(experiment.config_path.read_text() + ALIAS_BOMB + "\n")
    else:
        config = experiment.config()
        for key, value in change.items():
            config[key] = value
        experiment.write_config(config)
    result = run_snakemake(experiment.root)
    assert result.returncode != 0
    output = result.stderr + result.stdout
    assert re.search("infrepro: invalid input: .*" + pattern, output), output[-2000:]
    assert "Traceback" not in output
    assert not (experiment.root / "results").exists()


DRY_RUN_CASES = {
    "bootstrap samples beyond a job's memory": (
        "analyses:\n  dev_score_better: higher\n  bootstrap: {samples: 10000000000000}\n",
        r"<config>: analyses.bootstrap.samples is 10000000000000; it must be at most 1000000",
    ),
    "alpha not a number": (
        "analyses: {dev_score_better: higher}\nreport: {alpha: .nan}\n",
        r"<config>: report.alpha is nan; it must be a finite number",
    ),
    "a key given twice": (
        "analyses: {dev_score_better: higher}\nbaseline: comp\n",
        r"config.yaml:\d+: the key 'baseline' is given twice in one mapping \(first on line \d+\)",
    ),
}


@pytest.mark.parametrize("case", list(DRY_RUN_CASES))
def test_bad_option_is_refused_by_a_dry_run(tmp_path: Path, case: str) -> None:
    """`snakemake -n` refuses the config, naming the option or the file and line."""
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=4, n_seeds=1)
    text, pattern = DRY_RUN_CASES[case]
    kept = [
        line
        for line in experiment.config_path.read_text().splitlines(keepends=True)
        if not line.startswith(("analyses:", "  dev_score_better"))
    ]
    experiment.config_path.write_text("".join(kept) + text)
    result = run_snakemake(experiment.root, "--dry-run")
    assert result.returncode != 0
    output = result.stderr + result.stdout
    assert re.search("infrepro: invalid input: .*" + pattern, output), output[-2000:]
    assert "Traceback" not in output
    assert not (experiment.root / "results").exists()


def test_broken_default_config_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    """Snakemake's own message for config/config.yaml that is not YAML names no file."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config/config.yaml").write_text("baseline: base\nmetrics: [ter\n")
    result = run_snakemake(tmp_path, "--dry-run", use_configfile=False)
    assert result.returncode != 0
    output = result.stderr + result.stdout
    pattern = r"infrepro: invalid input: config/config.yaml:3: not valid YAML: expected ','"
    assert re.search(pattern, output), output[-2000:]


# -- 4. scores that are not finite, runs that are not complete -----------------------------------

PLAIN = {"segment": "seg", "system": "sys", "run": "seed", "metric": "bleurt"}


def plain_config(**extra: object) -> dict:
    return {
        "scores": "scores.csv",
        "columns": {
            "segment": "seg",
            "system": "sys",
            "run": ["sys", "seed"],
            "metrics": ["bleurt"],
        },
        "better": {"bleurt": "higher"},
        "baseline": "base",
        **extra,
    }


@pytest.mark.parametrize("value", ["-Infinity", "1e300"])
def test_non_finite_scores_are_rejected(tmp_path: Path, value: str) -> None:
    frame = scores_frame(PLAIN, runs=2, segments=4).astype({"bleurt": object})
    frame.loc[5, "bleurt"] = value
    write_scores(tmp_path / "scores.csv", frame)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(plain_config()))
    result = run_snakemake(tmp_path)
    assert result.returncode != 0
    pattern = rf"scores.csv:7: column 'bleurt': score '{value}' is not a finite number"
    assert re.search(pattern, result.stderr), result.stderr[-2000:]
    assert not (tmp_path / "results").exists()


def test_incomplete_runs_are_rejected_or_admitted_and_listed(tmp_path: Path) -> None:
    frame = scores_frame(PLAIN, runs=3, segments=8)
    # comp:3 keeps 2 of 8 segments, scored far above every other run (about 0.5-0.85), within
    # the range of a fraction-scale metric (more than 1 % of scores beyond 2 would be refused)
    short = (frame["sys"] == "comp") & (frame["seed"] == 3)
    frame = frame[~short | frame["seg"].isin(["seg 0", "seg 1"])].copy()
    frame.loc[(frame["sys"] == "comp") & (frame["seed"] == 3), "bleurt"] = 1.5
    write_scores(tmp_path / "scores.csv", frame)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(plain_config()))
    rejected = run_snakemake(tmp_path)
    assert rejected.returncode != 0
    assert "1 run is incomplete (of 8 segments): comp:3 lacks 6 segments" in rejected.stderr
    assert not (tmp_path / "results").exists()

    config = plain_config(incomplete_runs="admit", analyses={"run": ["comparison", "classical"]})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    admitted = run_snakemake(tmp_path)
    assert admitted.returncode == 0, admitted.stderr[-3000:]
    tables = tmp_path / "results/tables"
    summary = pd.read_csv(tables / "run_summary.csv").set_index("system")
    assert summary.loc["comp", "best_run"] != "comp:3"
    diagnostics = pd.read_csv(tables / "diagnostics.csv", keep_default_na=False)
    notes = diagnostics[diagnostics["status"] == "note"]
    assert list(notes["subset"]) == ["comp:3"]
    reason = "run comp:3 is incomplete: it lacks 6 segments of 8"
    assert reason in notes["reason"].iloc[0]
    assert reason in (tmp_path / "results/report.html").read_text()


# -- 5. files others can read --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)], ids=["umask 022", "umask 077"]
)
def test_outputs_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    write_scores(tmp_path / "scores.csv", scores_frame(PLAIN, runs=2, segments=4))
    config = plain_config(analyses={"run": ["comparison"]})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    targets = () if umask == 0o022 else ("results/evaluation.parquet",)
    result = run_snakemake(tmp_path, umask=umask, targets=targets)
    assert result.returncode == 0, result.stderr[-3000:]
    files = [p for p in (tmp_path / "results").rglob("*") if p.is_file()]
    assert (tmp_path / "results/tables/property_bins.csv") in files
    if umask == 0o022:
        assert (tmp_path / "results/report.html") in files
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert set(modes.values()) == {oct(mode)}, modes
