"""End-to-end: every kind of bad input stops Snakemake before any job, with a specific message."""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from workflow_helpers import MiniExperiment, make_mini_experiment, run_snakemake

pytestmark = pytest.mark.e2e


def extra_line(exp: MiniExperiment) -> str:
    with (exp.root / "hyps/comp_s1.txt").open("a") as handle:
        handle.write("one line too many\n")
    return r"comp_s1.txt: has 9 lines but the test set has 8 segments"


def missing_line(exp: MiniExperiment) -> str:
    path = exp.root / "hyps/base_s2.txt"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    return r"base_s2.txt: has 7 lines but the test set has 8 segments"


def missing_file(exp: MiniExperiment) -> str:
    (exp.root / "hyps/base_s1.txt").unlink()
    return r"runs.tsv:2: column 'hypotheses': hypotheses file not found: .*base_s1.txt"


def duplicate_run(exp: MiniExperiment) -> str:
    lines = exp.runs_path.read_text().splitlines()
    exp.runs_path.write_text("\n".join([*lines, lines[1]]) + "\n")
    return r"runs.tsv:6: column 'run_id': duplicate run_id 'base_s1' \(first seen on line 2\)"


def no_system_column(exp: MiniExperiment) -> str:
    lines = [line.split("\t") for line in exp.runs_path.read_text().splitlines()]
    exp.runs_path.write_text("".join("\t".join(f[:1] + f[2:]) + "\n" for f in lines))
    return r"runs.tsv: required column 'system' is missing"


def unknown_baseline(exp: MiniExperiment) -> str:
    config = exp.config()
    config["baseline"] = "transformer"
    exp.write_config(config)
    return r"baseline 'transformer' names no system; systems found: base, comp"


def invalid_utf8(exp: MiniExperiment) -> str:
    path = exp.root / "hyps/comp_s2.txt"
    data = path.read_bytes()
    offset = data.index(b"\n", data.index(b"\n") + 1) + 1  # start of line 3
    path.write_bytes(data[:offset] + b"\xe9t\xe9 " + data[offset:])
    return rf"comp_s2.txt:3: invalid UTF-8 at byte offset {offset}"


def duplicate_segment(exp: MiniExperiment) -> str:
    path = exp.root / "testset.tsv"
    lines = path.read_text().splitlines()
    lines[3] = lines[2]
    path.write_text("\n".join(lines) + "\n")
    return (
        r"testset.tsv:4: column 'segment_id': duplicate segment_id 's001' \(first seen on line 3\)"
    )


def unknown_metric(exp: MiniExperiment) -> str:
    config = exp.config()
    config["metrics"] = ["ter", "meteor"]
    exp.write_config(config)
    return r"metrics\[1\] is 'meteor'; choose one of ter, "


def unknown_property(exp: MiniExperiment) -> str:
    config = exp.config()
    config["properties"] = ["length", "domain"]
    exp.write_config(config)
    return r"properties names 'domain', which is neither built in .* nor a column of the test set"


def scores_mode(exp: MiniExperiment, metric_value: str, column: str) -> None:
    path = exp.root / "scores.csv.gz"
    rows = ["seg,sys,seed,bleurt"]
    for seg in ("a", "b"):
        for sys_name in ("base", "comp"):
            for seed in ("1", "2"):
                rows.append(f"{seg},{sys_name},{seed},0.5")
    rows[5] = rows[5].rsplit(",", 1)[0] + "," + metric_value
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    exp.write_config(
        {
            "scores": "scores.csv.gz",
            "columns": {
                "segment": "seg",
                "system": "sys",
                "run": ["sys", column],
                "metrics": ["bleurt"],
                "facets": ["seed"],
            },
            "better": {"bleurt": "higher"},
            "baseline": "base",
        }
    )


def missing_mapped_column(exp: MiniExperiment) -> str:
    scores_mode(exp, "0.5", "replication")
    return r"scores.csv.gz: column 'replication': columns.run names 'replication'"


def non_numeric_score(exp: MiniExperiment) -> str:
    scores_mode(exp, "n/a?", "seed")
    return r"scores.csv.gz:6: column 'bleurt': non-numeric score 'n/a\?'"


def scores_not_gzip(exp: MiniExperiment) -> str:
    scores_mode(exp, "0.5", "seed")
    path = exp.root / "scores.csv.gz"
    path.write_bytes(gzip.decompress(path.read_bytes()))
    return r"scores.csv.gz: cannot read it as gzip-compressed text \(is it gzip, and complete\?\)"


def scores_header_only(exp: MiniExperiment) -> str:
    scores_mode(exp, "0.5", "seed")
    path = exp.root / "scores.csv.gz"
    path.write_bytes(gzip.compress(b"seg,sys,seed,bleurt\n"))
    return r"scores.csv.gz: file has a header \(seg, sys, seed, bleurt\) but no rows of scores"


def renamed_system(exp: MiniExperiment, name: str) -> None:
    """The runs sheet with the last run's system (line 5, a comp run) renamed ``name``."""
    lines = exp.runs_path.read_text(encoding="utf-8").splitlines()
    fields = lines[-1].split("\t")
    lines[-1] = "\t".join([fields[0], name, *fields[2:]])
    exp.runs_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def zero_width_space(exp: MiniExperiment) -> str:
    renamed_system(exp, "comp\u200b")
    return (
        r"runs.tsv:5: column 'system': system 'comp\\u200b' \(comp\\u200b\) and system 'comp' "
        r"\(line 4\) differ only by invisible characters.*U\+200B ZERO WIDTH SPACE"
    )


def right_to_left_override(exp: MiniExperiment) -> str:
    renamed_system(exp, "other\u202e")
    return r"runs.tsv:5: column 'system': system .* holds U\+202E RIGHT-TO-LEFT OVERRIDE"


def spreadsheet_formula(exp: MiniExperiment) -> str:
    renamed_system(exp, "=cmd|' /C calc'!A0")
    return r"runs.tsv:5: column 'system': system .* starts with '=', .*spreadsheet formulas"


CASES: dict[str, Callable[[MiniExperiment], str]] = {
    "system name with a zero-width space": zero_width_space,
    "system name with a right-to-left override": right_to_left_override,
    "system name that is a spreadsheet formula": spreadsheet_formula,
    "hypotheses file with an extra line": extra_line,
    "hypotheses file with a missing line": missing_line,
    "missing hypotheses file": missing_file,
    "duplicate run_id": duplicate_run,
    "runs sheet without system": no_system_column,
    "baseline that names no system": unknown_baseline,
    "invalid UTF-8": invalid_utf8,
    "duplicate segment_id": duplicate_segment,
    "unknown metric": unknown_metric,
    "unknown property": unknown_property,
    "scores-mode mapping names a missing column": missing_mapped_column,
    "non-numeric scores": non_numeric_score,
    "scores file that is not gzip": scores_not_gzip,
    "scores file with a header only": scores_header_only,
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_fails_fast(tmp_path: Path, case: str) -> None:
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=8)
    pattern = CASES[case](experiment)
    result = run_snakemake(experiment.root)
    assert result.returncode != 0
    assert re.search(pattern, result.stderr + result.stdout), result.stderr[-2000:]
    results = experiment.root / "results"
    assert not results.exists() or not any(p.is_file() for p in results.rglob("*"))
