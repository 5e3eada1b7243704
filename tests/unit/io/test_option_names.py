"""Every option that names a system, facet, metric, property or column of the experiment refuses
a name the experiment lacks, at start-up, naming the option and the names it knows (issue 30,
item 5: `analyses.retraining_facets: [dataseeed]` was accepted and moved the retraining SD).

The schema marks such an option with ``x-names: <kind>`` (for a mapping: its keys); the walker
below finds every mark and puts a misspelt name there. A second test holds the marks complete:
every option whose value or key is free text is either marked or listed here as text that names
nothing (a title, a path, a date, a bin label).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd
import pytest
from snakemake.utils import validate
from workflow_helpers import make_mini_experiment

from infrepro.core.schema import SCHEMA, schema
from infrepro.experiment import load_experiment
from infrepro.io import InputError
from infrepro.io.config import check_config, option_name

UNKNOWN = "dataseeed"  # a misspelt name
# Options whose text names nothing in the experiment: a title, files, a date, bin labels.
FREE_TEXT = {
    "experiment",
    "testset",
    "runs",
    "runs_dev_scores",
    "scores",
    "property_options.rarity_corpus",
    "property_options.bin_labels.*",
    "report.date",
}
SCORES_MODE = {"columns", "scale"}
# A known name of each kind in the base experiments (raw: systems base/comp, facet seed, metric
# ter, property length; scores: the file's columns seg, sys, seed, ter)
KNOWN = {
    "system": "base",
    "facet": "seed",
    "metric": "ter",
    "property": "length",
    "column": "seg",
    "runs column": "seed",  # look_column: a column of the raw base's runs sheet
}
USER_PROPERTY = "domain"  # a test-set column of the raw base: the only kind categorical names
CHOSEN_KEY = {("analyses", "facets"): "base"}  # a known key above an option that names values


def marked(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple]:
    """(path, node) of every schema node with an ``x-names`` mark; ``*`` for a chosen key."""
    if "x-names" in node:
        yield path, node
    for key, child in (node.get("properties") or {}).items():
        yield from marked(child, (*path, key))
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from marked(extra, (*path, "*"))


def takes_text(node: Mapping[str, Any]) -> bool:
    """The option's value, or an entry of it, is text the user writes (not a choice of an enum,
    not a mapping of options)."""
    if "enum" in node or node.get("properties"):
        return False
    if "oneOf" in node:
        return any(takes_text(alternative) for alternative in node["oneOf"])
    kinds = node.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    items = node.get("items")
    return "string" in kinds or (isinstance(items, Mapping) and takes_text(items))


def free_text_options(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple]:
    """Every option whose value, entries or keys (of an open mapping) are text the user writes."""
    extra = node.get("additionalProperties")
    if takes_text(node) or (isinstance(extra, Mapping) and not node.get("properties")):
        yield path, node
    for key, child in (node.get("properties") or {}).items():
        yield from free_text_options(child, (*path, key))
    if isinstance(extra, Mapping):
        yield from free_text_options(extra, (*path, "*"))


MARKED = dict(marked(schema()))


def example(node: Mapping[str, Any]) -> object:
    """A valid value of an option the walker does not test (the value under a misspelt key)."""
    if "enum" in node:
        return node["enum"][0]
    if "oneOf" in node:
        return example(node["oneOf"][0])
    if "x-names" in node:
        name = KNOWN[node["x-names"]]
        return [name] if node.get("type") == "array" else name
    kind = node.get("type")
    if kind == "array":
        return [example(node["items"])] * max(1, int(node.get("minItems", 1)))
    return {"number": 1.0, "integer": 2, "string": "x"}[kind]


def misspelt(path: tuple[str, ...], node: Mapping[str, Any]) -> tuple[tuple[str, ...], object]:
    """The config path and value that put UNKNOWN where the option names something."""
    where = tuple(CHOSEN_KEY[path[:i]] if p == "*" else p for i, p in enumerate(path))
    kinds = node.get("type", [])
    if kinds == "object":  # the mapping's keys are the names
        return where, {UNKNOWN: example(node["additionalProperties"])}
    if path == ("analyses", "vca_interactions"):
        return where, [f"segment_id:{UNKNOWN}"]
    if kinds == "array":
        return where, [UNKNOWN]
    return where, UNKNOWN


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("names")
    exp = make_mini_experiment(root, n_segments=4, metrics=("ter",), properties=("length",))
    lines = (root / "testset.tsv").read_text().splitlines()
    lines = [lines[0] + f"\t{USER_PROPERTY}"] + [line + "\tnews" for line in lines[1:]]
    (root / "testset.tsv").write_text("\n".join(lines) + "\n")
    raw = exp.config() | {"properties": ["length", USER_PROPERTY]}
    rows = [
        {"seg": f"s{seg}", "sys": system, "seed": run, "ter": 0.1 * seg + 0.01 * run}
        for system in ("base", "comp")
        for run in (1, 2)
        for seg in range(4)
    ]
    pd.DataFrame(rows).to_csv(root / "scores.csv", index=False)
    columns = {"segment": "seg", "system": "sys", "run": ["sys", "seed"], "metrics": ["ter"]}
    scores = {"scores": "scores.csv", "columns": columns, "baseline": "base"}
    return {"root": root, "raw": raw, "scores": scores}


def start_up(config: dict[str, Any]) -> object:
    """What the Snakefile and common.smk run before any job."""
    config = copy.deepcopy(config)
    check_config(config)
    validate(config, str(SCHEMA))
    return load_experiment(config)


def put(config: dict[str, Any], where: tuple[str, ...], value: object) -> dict[str, Any]:
    out = copy.deepcopy(config)
    node = out
    for part in where[:-1]:
        node = node.setdefault(part, {})
    node[where[-1]] = value
    return out


def test_the_marks_cover_every_option_that_takes_a_users_text() -> None:
    text = {option_name(p) for p, _ in free_text_options(schema())}
    names = {option_name(p) for p in MARKED}
    assert text - FREE_TEXT <= names, sorted(text - FREE_TEXT - names)
    assert {"analyses.retraining_facets", "analyses.metaparam_facets", "better"} <= names
    assert {"baseline", "analyses.facets", "analyses.facets.*", "columns.metrics"} <= names


@pytest.mark.parametrize(("path", "node"), list(MARKED.items()), ids=option_name)
def test_an_option_naming_something_refuses_an_unknown_name_with_the_known_names(
    bases: dict[str, Any], monkeypatch: pytest.MonkeyPatch, path: tuple, node: Mapping
) -> None:
    monkeypatch.chdir(bases["root"])
    base = bases["scores" if path[0] in SCORES_MODE else "raw"]
    start_up(base)  # the base itself is accepted
    where, value = misspelt(path, node)
    with pytest.raises(InputError) as err:
        start_up(put(base, where, value))
    message = str(err.value)
    assert option_name(where) in message, message
    assert UNKNOWN in message, message
    known = [KNOWN[node["x-names"]]] + ([USER_PROPERTY] if node["x-names"] == "property" else [])
    assert any(name in message for name in known), message  # the names it knows


def test_the_default_retraining_facet_needs_no_seed_facet(
    bases: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default [seed] names the conventional seed facet; runs without one are accepted."""
    monkeypatch.chdir(bases["root"])
    assert "seed" not in start_up(bases["scores"]).facets  # type: ignore[attr-defined]


def test_the_retraining_facet_typo_of_the_issue_is_refused(
    bases: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(bases["root"])
    config = put(bases["raw"], ("analyses", "retraining_facets"), ["dataseeed"])
    with pytest.raises(
        InputError,
        match=r"analyses.retraining_facets names facet 'dataseeed', which the runs do not have "
        r"\(facets: seed\)",
    ):
        start_up(config)


def test_a_plans_maxima_name_every_system_and_no_other(
    bases: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """analyses.sequential.max_runs as a mapping (inside a oneOf, which the walker above does
    not enter) refuses an unknown system and a system without a maximum."""
    monkeypatch.chdir(bases["root"])
    where = ("analyses", "sequential", "max_runs")
    # a plan needs looks (the seeds as the look column: no retraining facet then)
    looks = put(bases["raw"], ("look_column",), "seed")
    looks = put(looks, ("analyses", "retraining_facets"), [])
    start_up(put(looks, where, {"base": 6, "comp": 18}))
    with pytest.raises(InputError, match=r"max_runs names system 'dataseeed'.*systems: base, comp"):
        start_up(put(looks, where, {"base": 6, "comp": 18, UNKNOWN: 3}))
    with pytest.raises(InputError, match=r"max_runs gives no maximum for comp"):
        start_up(put(looks, where, {"base": 6}))
    start_up(put(looks, where, 10))  # one number for every system
