"""End-to-end: scores mode assembles the evaluation table from the Kreutzer et al. files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import kreutzer_config, run_snakemake

pytestmark = pytest.mark.e2e
PROPERTIES = {"src_length", "src_length_class"}


def run_scores_mode(workdir: Path, config: dict) -> pd.DataFrame:
    workdir.mkdir(parents=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = run_snakemake(workdir, targets=("results/evaluation.parquet",))
    assert result.returncode == 0, result.stderr[-3000:]
    return pd.read_parquet(workdir / "results/evaluation.parquet")


def test_data_ter(kreutzer_dir: Path, tmp_path: Path) -> None:
    shipped = kreutzer_config()  # the contract, as config/kreutzer2020.yaml ships it
    config = {key: shipped[key] for key in ("columns", "better", "baseline")}
    config["scores"] = str(kreutzer_dir / "data_ter.csv.gz")
    table = run_scores_mode(tmp_path / "ter", config)
    source = pd.read_csv(kreutzer_dir / "data_ter.csv.gz")
    assert len(table) == len(source) == 7287
    assert list(table.columns) == [
        "run_id",
        "system",
        "replication",
        "segment_id",
        "src_length",
        "src_length_bin",
        "ter",
    ]
    assert table["run_id"].nunique() == 7
    assert table.groupby("run_id").size().eq(1041).all()
    assert table["ter"].sum() == pytest.approx(source["ter"].sum(), rel=1e-12)


def test_hyperparameter_grid(kreutzer_dir: Path, tmp_path: Path) -> None:
    path = kreutzer_dir / "data_hyperparameter-marking_full.csv.gz"
    # the grid's meta-parameters: every column but the score, sentence, system and properties
    header = pd.read_csv(path, nrows=0).columns
    facets = [c for c in header if c not in {"ter", "sentence_id", "system"} | PROPERTIES]
    assert len(facets) == 6
    config = {
        "scores": str(path),
        "columns": {
            "segment": "sentence_id",
            "system": "system",
            "run": facets,
            "metrics": ["ter"],
            "facets": facets,
            "properties": sorted(PROPERTIES),
        },
        "baseline": "Marking",
    }
    table = run_scores_mode(tmp_path / "grid", config)
    assert len(table) == 337_284
    assert table["run_id"].nunique() == 324
    assert table["segment_id"].nunique() == 1041
    assert set(table["src_length_class"]) == {"short", "typical", "very long"}
    assert "src_length_bin" in table and "src_length_class_bin" not in table
