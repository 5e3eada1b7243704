"""Every option of the config schema has a type and finite bounds, and a bad value of any option
is refused at start-up with an error that names the option (the checks the Snakefile runs:
check_config, which also fills the schema's defaults, then load_experiment)."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate
from workflow_helpers import make_mini_experiment

from infrepro.core.schema import SCHEMA, schema
from infrepro.experiment import load_experiment
from infrepro.io import InputError
from infrepro.io.config import check_config, option_name

# A name the user chooses in each open mapping of the schema (``*`` in an option's path): one
# that the base experiments below have. A new open mapping needs an entry here.
CHOSEN = {
    ("better", "*"): "ter",
    ("property_options", "bins", "*"): "length",
    ("property_options", "bin_labels", "*"): "length",
    ("analyses", "facets", "*"): "base",
    ("scale", "*"): "ter",
}
SCORES_MODE = {"scores", "columns", "incomplete_runs", "scale"}  # options of scores mode only
NUMERIC = {"number", "integer"}


def iter_options(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple]:
    """Every option the schema describes, as (path, schema node): ``*`` stands for a name the
    user chooses, ``[]`` for the entries of a list of numbers."""
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    if properties or isinstance(extra, Mapping):
        for key, child in (properties or {}).items():
            yield from iter_options(child, (*path, key))
        if isinstance(extra, Mapping):
            yield from iter_options(extra, (*path, "*"))
        return
    yield path, node
    items = node.get("items")
    if isinstance(items, Mapping) and set(_types(items)) & NUMERIC:
        yield (*path, "[]"), items


def _types(node: Mapping[str, Any]) -> list[str]:
    kind = node.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


OPTIONS = dict(iter_options(schema()))


def concrete(path: tuple[str, ...]) -> tuple[object, ...]:
    """The option's path in a config: ``*`` replaced by a chosen name, ``[]`` by index 0."""
    parts: list[object] = []
    for index, part in enumerate(path):
        if part == "*":
            parts.append(CHOSEN[path[: index + 1]])
        else:
            parts.append(0 if part == "[]" else part)
    return tuple(parts)


def with_option(config: dict[str, Any], path: tuple[object, ...], value: object) -> dict:
    out = copy.deepcopy(config)
    node = out
    for part in path[:-1]:
        if isinstance(part, int):
            continue
        node = node.setdefault(part, {}) if not isinstance(node.get(part), dict) else node[part]
    last = path[-1]
    if isinstance(last, int):  # an entry of a list: the option before it holds the list
        parent_node = out
        for part in path[:-2]:
            parent_node = parent_node[part]
        parent_node[path[-2]] = [value]
    else:
        node[last] = value
    return out


def start_up(config: dict[str, Any], files: tuple[Path, ...] = ()) -> object:
    """What the Snakefile and common.smk run before any job, in the same order."""
    config = copy.deepcopy(config)
    check_config(config, files)
    return load_experiment(config)


REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "given",
    [
        "bundled",
        {"analyses": {}},  # a section given empty: every option in it from the schema
        {"analyses": {"planning": {"draws": 500}}, "report": {"alpha": 0.01}},  # nested, partly
    ],
)
def test_check_config_fills_the_defaults_snakemakes_validate_fills(given: object) -> None:
    """The Snakefile validates once (check_config) instead of also calling Snakemake's
    ``validate``: the two must leave the same config, defaults and all."""
    bundled = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config = bundled if given == "bundled" else {**bundled, **given}  # type: ignore[dict-item]
    ours, theirs = copy.deepcopy(config), copy.deepcopy(config)
    check_config(ours)
    validate(theirs, str(SCHEMA))
    assert ours == theirs
    assert ours != config  # defaults were filled in
    assert schema()["properties"]["analyses"]["properties"]["planning"]["default"] == {}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A raw-mode and a scores-mode config whose files exist (relative to the test's cwd)."""
    root = tmp_path_factory.mktemp("options")
    exp = make_mini_experiment(root, n_segments=4, metrics=("ter",), properties=("length",))
    rows = [
        {"seg": f"s{seg}", "sys": system, "seed": run, "ter": 0.1 * seg + run}
        for system in ("base", "comp")
        for run in (1, 2)
        for seg in range(4)
    ]
    pd.DataFrame(rows).to_csv(root / "scores.csv", index=False)
    scores = {
        "scores": "scores.csv",
        "columns": {"segment": "seg", "system": "sys", "run": ["sys", "seed"], "metrics": ["ter"]},
        "properties": ["length"],
        "baseline": "base",
    }
    return {"root": root, "raw": exp.config(), "scores": scores}  # type: ignore[dict-item]


@pytest.fixture
def base(bases: dict, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.chdir(bases["root"])
    return bases


def numeric_probes(node: Mapping[str, Any]) -> list[tuple[object, bool]]:
    """(value, refused?) for a numeric option: wrong types, NaN, infinities, -1, 0, huge."""
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))

    def refused(value: float) -> bool:
        if "exclusiveMinimum" in node and value <= low:
            return True
        if "exclusiveMaximum" in node and value >= high:
            return True
        return value < low or value > high

    probes: list[tuple[object, bool]] = [("text", True), (True, True), ([1], True)]
    probes += [(math.nan, True), (math.inf, True), (-math.inf, True)]
    probes += [(value, refused(value)) for value in (-1, 0, 10**18, 1e300)]
    if "integer" in _types(node):
        probes.append((2.5, True))
    return probes


def probes_of(node: Mapping[str, Any]) -> list[tuple[object, bool]]:
    kinds = set(_types(node))
    if kinds & NUMERIC:
        return numeric_probes(node)
    if "enum" in node:
        return [("no such choice", True), (12345, True), (math.nan, True)]
    if "string" in kinds:
        empty = [("", True)] if node.get("minLength") else []
        return [(12345, True), (True, True), ({"a": 1}, True), (math.inf, True), *empty]
    if kinds == {"boolean"}:
        return [("yes", True), (1, True), (math.nan, True), ({"a": 1}, True), (None, True)]
    if kinds & {"array", "object"} or "oneOf" in node:
        branches = [set(_types(branch)) for branch in node.get("oneOf", [])]
        if any("integer" in kinds_of for kinds_of in branches):  # a count or a mapping of counts
            return [(-1, True), (2.5, True), (math.nan, True), (True, True), ("ten", True)]
        return [(12345, True), (math.nan, True), (True, True)]
    raise AssertionError(f"no probes for {node}")


CASES = [
    pytest.param(path, value, refused, id=f"{option_name(path)}={value!r}")
    for path, node in OPTIONS.items()
    for value, refused in probes_of(node)
]


def test_the_walker_sees_every_option() -> None:
    names = {option_name(path) for path in OPTIONS}
    assert {"report.alpha", "analyses.bootstrap.samples", "analyses.dstudy_max_n"} <= names
    assert {"property_options.bins.*.[]", "better.*", "columns.run", "scale.*"} <= names
    assert len(OPTIONS) >= 30


@pytest.mark.parametrize(("path", "node"), list(OPTIONS.items()), ids=option_name)
def test_every_option_has_a_type(path: tuple[str, ...], node: Mapping[str, Any]) -> None:
    assert _types(node) or "enum" in node or "oneOf" in node, option_name(path)


@pytest.mark.parametrize(
    ("path", "node"),
    [(p, n) for p, n in OPTIONS.items() if set(_types(n)) & NUMERIC],
    ids=option_name,
)
def test_every_numeric_option_has_finite_bounds(
    path: tuple[str, ...], node: Mapping[str, Any]
) -> None:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    assert low is not None and high is not None, f"{option_name(path)} needs minimum and maximum"
    assert math.isfinite(low) and math.isfinite(high) and low < high


@pytest.mark.parametrize(("path", "value", "refused"), CASES)
def test_every_option_refuses_bad_values_naming_the_option(
    base: dict, path: tuple[str, ...], value: object, refused: bool
) -> None:
    config = base["scores" if path[0] in SCORES_MODE else "raw"]
    where = concrete(path)
    changed = with_option(config, where, value)
    shown = option_name(where[:-1] if isinstance(where[-1], int) else where)
    if refused:
        with pytest.raises(InputError) as err:
            start_up(changed)
        assert shown in str(err.value), str(err.value)
        assert "\n" not in str(err.value)
    else:
        start_up(changed)


def closed_sections(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple]:
    """Every mapping of the schema that allows only its listed options."""
    if node.get("additionalProperties") is False:
        yield path
    for key, child in (node.get("properties") or {}).items():
        yield from closed_sections(child, (*path, key))


@pytest.mark.parametrize("section", list(closed_sections(schema())), ids=option_name)
def test_unknown_option_is_refused_naming_it(base: dict, section: tuple[str, ...]) -> None:
    config = base["scores" if section[:1] and section[0] in SCORES_MODE else "raw"]
    changed = copy.deepcopy(config)
    node = changed
    for part in section:
        node = node.setdefault(part, {})
    node["bootstrapp"] = 1
    name = option_name((*section, "bootstrapp"))
    with pytest.raises(
        InputError, match=rf"unknown option {name}( \(did you mean .*\?\))?; the options here are"
    ):
        start_up(changed)


# -- checks across options and of the config files ----------------------------------------------


def runs_with_facet(root: Path, name: str, values: dict[str, list[str]]) -> str:
    """A copy of the runs sheet with one more facet column; ``values`` per system, in order."""
    runs = pd.read_csv(root / "runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    column = []
    seen: dict[str, int] = {}
    for system in runs["system"]:
        column.append(values[system][seen.get(system, 0)])
        seen[system] = seen.get(system, 0) + 1
    runs[name] = column
    runs.to_csv(root / f"runs_{name}.tsv", sep="\t", index=False)
    return f"runs_{name}.tsv"


@pytest.mark.parametrize(
    ("levels", "problem"),
    [
        ({"base": ["0.1", "0.1"], "comp": ["0.1", "0.2"]}, r"has one level \('0.1'\) among base"),
        ({"base": ["", ""], "comp": ["0.1", "0.2"]}, "has no value among base's runs"),
    ],
    ids=["one level", "absent"],
)
def test_facet_that_does_not_vary_among_a_systems_runs_is_refused(
    base: dict, levels: dict, problem: str
) -> None:
    config = copy.deepcopy(base["raw"])
    config["runs"] = runs_with_facet(base["root"], "lr", levels)
    config["analyses"]["facets"] = {"base": ["seed", "lr"]}
    with pytest.raises(
        InputError, match=rf"analyses.facets.base names facet 'lr', which {problem}"
    ):
        start_up(config)
    config["analyses"]["facets"] = {"comp": ["seed", "lr"]}
    start_up(config)


def test_facet_listed_twice_for_a_system_is_refused(base: dict) -> None:
    config = copy.deepcopy(base["raw"])
    config["analyses"]["facets"] = {"base": ["seed", "seed"]}
    with pytest.raises(InputError, match=r"analyses.facets.base is \['seed', 'seed'\]; its entr"):
        start_up(config)


@pytest.mark.parametrize("term", ["segment_id:segment_id", "seed:seed", "seed/seed"])
def test_interaction_of_a_name_with_itself_is_refused(base: dict, term: str) -> None:
    config = copy.deepcopy(base["raw"])
    config["analyses"]["vca_interactions"] = [term]
    with pytest.raises(InputError, match=rf"vca_interactions has '{term}': '\w+' appears twice"):
        start_up(config)


@pytest.mark.parametrize("facet", ["lr:warmup", "lr/warmup"])
def test_interaction_naming_a_facet_that_holds_a_colon_or_slash_is_refused(
    base: dict, facet: str
) -> None:
    """`segment_id:lr:warmup` could join a facet `lr:warmup` or two facets `lr` and `warmup`."""
    config = copy.deepcopy(base["raw"])
    config["runs"] = runs_with_facet(
        base["root"], facet.replace("/", "_"), {"base": ["1", "2"], "comp": ["1", "2"]}
    )
    runs = base["root"] / config["runs"]
    runs.write_text(runs.read_text().replace(facet.replace("/", "_"), facet, 1))
    config["analyses"]["vca_interactions"] = [f"segment_id:{facet}"]
    with pytest.raises(
        InputError,
        match=rf"vca_interactions has 'segment_id:{facet}', which names facet '{facet}'; that "
        "name holds ':' or '/'",
    ):
        start_up(config)
    config["analyses"]["vca_interactions"] = ["segment_id:seed"]  # a term without it is fine
    start_up(config)


def test_better_for_a_metric_not_in_the_experiment_is_refused(base: dict) -> None:
    config = copy.deepcopy(base["raw"])
    config["better"] = {"ter": "lower", "comet": "higher"}
    with pytest.raises(InputError, match=r"better.comet is set, but 'comet' is not one of the"):
        start_up(config)


@pytest.mark.parametrize("label", ["", "   "])
def test_empty_bin_label_is_refused(base: dict, label: str) -> None:
    config = copy.deepcopy(base["raw"])
    config["property_options"] = {"bin_labels": {"length": ["short", label, "long"]}}
    with pytest.raises(InputError, match=r"bin_labels.length\[1\] is '\s*'; it must not be empty"):
        start_up(config)


@pytest.mark.parametrize("value", [True, False, 2026])
def test_report_date_that_is_no_text_is_refused(base: dict, value: object) -> None:
    config = copy.deepcopy(base["raw"])
    config["report"] = {"date": value}
    with pytest.raises(InputError, match=r"report.date is .*; it must be text"):
        start_up(config)


def test_yaml_date_in_report_date_becomes_its_iso_text(base: dict) -> None:
    config = copy.deepcopy(base["raw"])
    config["report"] = yaml.safe_load("date: 2026-11-26")
    check_config(config)
    assert config["report"]["date"] == "2026-11-26"


def test_unquoted_numeric_key_in_facets_is_refused_with_a_hint(base: dict) -> None:
    config = copy.deepcopy(base["raw"])
    config["analyses"]["facets"] = yaml.safe_load("{2: [seed]}")
    with pytest.raises(InputError, match=r"analyses.facets has the key 2, .*quote it \('2'\)"):
        start_up(config)


DUPLICATES = {
    "top-level key": ("baseline: base\nbaseline: comp\n", 2, "baseline", 1),
    "nested key": ("analyses:\n  run: [classical]\n  run: [variance]\n", 3, "run", 2),
    "json key": ('{"baseline": "base", "baseline": "comp"}', None, "baseline", None),
}


@pytest.mark.parametrize("case", list(DUPLICATES))
def test_duplicate_key_in_a_config_file_is_refused(base: dict, case: str) -> None:
    text, line, key, first = DUPLICATES[case]
    path = base["root"] / "dup.yaml"
    path.write_text(text)
    where = f"{path}:{line}: " if line else f"{path}: "
    also = rf" \(first on line {first}\)" if first else ""
    with pytest.raises(InputError) as err:
        start_up(base["raw"], (path,))
    assert str(err.value).startswith(where), str(err.value)
    assert f"the key '{key}' is given twice" in str(err.value)
    if first:
        assert re.search(also, str(err.value))


def test_yaml_merge_key_overrides_are_not_duplicates(base: dict) -> None:
    path = base["root"] / "merge.yaml"
    path.write_text("a: &a {samples: 200, seed: 1}\nb:\n  <<: *a\n  seed: 2\n")
    check_config(copy.deepcopy(base["raw"]), (path,))
