"""The registry of analyses and models is the one source: the config schema, the resources, the
report labels and the workflow agree with it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from infrepro.core import registry
from infrepro.core.catalog import KNOWN_METRICS
from infrepro.core.registry import ANALYSES, MODELS, resolve, with_needs
from infrepro.core.schema import _schema
from infrepro.core.vocabulary import TABLE_SPECS
from infrepro.workflow import resources

REPO = Path(__file__).resolve().parents[3]


def analyses_schema() -> dict:
    return _schema()["properties"]["analyses"]["properties"]


def test_schema_analyses_enum_and_default_are_the_registry() -> None:
    run = analyses_schema()["run"]
    assert run["items"]["enum"] == list(ANALYSES)
    assert run["default"] == [name for name, spec in ANALYSES.items() if spec.default]


def test_schema_analysis_options_are_those_the_analyses_read() -> None:
    options = set(analyses_schema()) - {"run"}
    read = {option.split(".")[0] for spec in ANALYSES.values() for option in spec.reads}
    assert read == options


def test_schema_metrics_enum_is_the_catalog() -> None:
    metrics = _schema()["properties"]["metrics"]
    assert metrics["items"]["enum"] == list(KNOWN_METRICS)
    assert set(metrics["default"]) <= set(KNOWN_METRICS)


@pytest.mark.parametrize("name", list(ANALYSES))
def test_every_analysis_is_complete(name: str) -> None:
    spec = ANALYSES[name]
    assert spec.name == name
    assert callable(resolve(spec.function))
    assert set(spec.tables) <= set(TABLE_SPECS)
    assert set(registry.LOG_TABLES) <= set(spec.tables)
    for need in spec.needs:
        assert need.table in ANALYSES[need.analysis].tables
        assert need.analysis in with_needs([name])
    assert resources.ANALYSIS_COST[name].mem_mb(0) >= resources.MIN_MEM_MB


def test_an_analysis_runs_after_what_it_needs() -> None:
    assert with_needs(["metaparam"]) == ["variance", "metaparam"]
    assert with_needs(["classical", "comparison"]) == ["comparison", "classical"]
    order = list(ANALYSES)
    for name, spec in ANALYSES.items():
        assert all(order.index(n.analysis) < order.index(name) for n in spec.needs)
    with pytest.raises(ValueError, match="unknown analysis 'nope'"):
        with_needs(["nope"])


def test_resources_take_their_cost_from_the_registry() -> None:
    for name, spec in ANALYSES.items():
        assert resources.ANALYSIS_COST[name] == resources.Cost(**vars(spec.cost))


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_has_a_family_a_label_and_a_formula(name: str) -> None:
    model = MODELS[name]
    assert model.family in (registry.PAPER, registry.RUN_AWARE, registry.JOB)
    assert model.label
    if model.formula:
        assert callable(resolve(model.formula))


def test_registry_is_import_light() -> None:
    tree = ast.parse((REPO / "infrepro" / "core" / "registry.py").read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "importlib", "collections", "dataclasses", "typing"}


def test_no_rule_names_an_analysis() -> None:
    """The analysis rules derive from the registry: no analysis or table name in the rule file."""
    text = (REPO / "workflow" / "rules" / "analysis.smk").read_text(encoding="utf-8")
    for name in (*ANALYSES, "variance_components"):
        assert f'"{name}"' not in text, name
