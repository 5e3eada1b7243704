"""The documentation against the code: docs/reference.md documents every config option (from the
schema, with its type, default and bounds), every analysis and every output table's columns (from
infrepro.core.vocabulary), and nothing else; README.md stays a guide; the docs name only paths that
exist. (tests/e2e/test_readme.py runs the README's shell blocks.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from infrepro.core import registry, schema, vocabulary

REPO_ROOT = Path(__file__).resolve().parents[3]
REFERENCE = REPO_ROOT / "docs" / "reference.md"
README_MAX_LINES = 300
REPORT_PARAGRAPH_MAX_WORDS = 120  # issue 44: the paragraph on the report


# -- the config schema, rendered as docs/reference.md's option rows -----------------------------
def schema_options(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, dict]]:
    """Every option of the config as (dotted name, schema node): an object with ``properties``
    is a section whose options are its properties; anything else is one option."""
    for name, child in node["properties"].items():
        dotted = f"{prefix}{name}"
        if "properties" in child:
            yield from schema_options(child, dotted + ".")
        else:
            yield dotted, child


def _kind(node: Mapping[str, Any]) -> str:
    """The option's type in words."""
    if "enum" in node:
        return "one of " + ", ".join(map(str, node["enum"]))
    if "oneOf" in node:
        return " or ".join(_kind(choice) for choice in node["oneOf"])
    kind = node.get("type", "any")
    if isinstance(kind, list):
        return " or ".join("null" if k == "null" else k for k in kind)
    if kind == "array":
        items = node.get("items", {})
        return f"list of {_kind(items) if items else 'any'}"
    if kind == "object" and isinstance(node.get("additionalProperties"), Mapping):
        return f"mapping of name to {_kind(node['additionalProperties'])}"
    return str(kind)


def _bounds(node: Mapping[str, Any]) -> str:
    """The option's bounds in words ('' when it has none)."""
    words = {
        "minimum": ">= {}",
        "maximum": "<= {}",
        "exclusiveMinimum": "> {}",
        "exclusiveMaximum": "< {}",
        "pattern": "matches {}",
    }
    found = [text.format(node[key]) for key, text in words.items() if key in node]
    if "minItems" in node:
        found.append(f"at least {node['minItems']} item" + ("s" if node["minItems"] != 1 else ""))
    if node.get("uniqueItems"):
        found.append("no repeats")
    return ", ".join(found)


def option_row(node: Mapping[str, Any]) -> tuple[str, str, str]:
    """(type, default, bounds) of one option, as the reference's table shows them."""
    default = "—" if "default" not in node else f"`{json.dumps(node['default'])}`"
    return _kind(node), default, _bounds(node)


# -- docs/reference.md, parsed ------------------------------------------------------------------
def section(text: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next ``## ``."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The body rows of every Markdown table in ``text`` (cells stripped, header and rule not)."""
    rows = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("| ") and index + 1 < len(lines) and lines[index + 1].startswith("|--"):
            continue  # a header
        if line.startswith("| ") and not line.startswith("|--"):
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def code_name(cell: str) -> str:
    """``name`` in a cell written as `name`."""
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"docs/reference.md: expected a `name` cell, got {cell!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def reference() -> str:
    return REFERENCE.read_text(encoding="utf-8")


def test_every_option_is_documented_with_the_schemas_type_default_and_bounds(
    reference: str,
) -> None:
    """Options: one row per schema option, in the schema's words; none that does not exist."""
    config_schema = schema._schema()
    expected = {name: option_row(node) for name, node in schema_options(config_schema)}
    rows = table_rows(section(reference, "Options"))
    documented = {code_name(row[0]): tuple(row[1:4]) for row in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    assert sorted(documented) == sorted(expected)
    for name, cells in expected.items():
        assert documented[name] == cells, f"option {name}: documented {documented[name]}"
    assert all(row[4] for row in rows), "every option says what it means"


def test_every_analysis_is_documented_with_its_tables_and_options(reference: str) -> None:
    rows = table_rows(section(reference, "Analyses"))
    documented = {code_name(row[0]): row for row in rows}
    assert list(documented) == list(registry.ANALYSES)
    for name, row in documented.items():
        tables = re.findall(r"`([a-z_]+)`", row[2])
        options = re.findall(r"`([a-z_.]+)`", row[3])
        assert tables == list(registry.ANALYSES[name].tables), name
        assert options == list(registry.ANALYSES[name].reads), name


def documented_tables(reference: str) -> dict[str, list[str]]:
    """{table: its documented columns}, from the ``### `name.csv` `` subsections."""
    text = section(reference, "Output tables")
    found: dict[str, list[str]] = {}
    for part in re.split(r"\n### ", text)[1:]:
        title = part.splitlines()[0]
        name = re.fullmatch(r"`([a-z_0-9]+)\.csv`", title)
        assert name, f"docs/reference.md: table heading {title!r} is not `name.csv`"
        found[name.group(1)] = [row[0] for row in table_rows(part)]
    return found


def test_every_table_column_is_documented(reference: str) -> None:
    """Each analysis table with exactly its columns, in order; the other documented tables
    (experiment-dependent columns, provenance, the runs a pattern found) are tables the report
    reads, and every one is documented."""
    found = documented_tables(reference)
    assert set(vocabulary.TABLES) <= set(found)
    assert set(found) == set(vocabulary.REPORT_TABLES) | set(vocabulary.OPTIONAL_REPORT_TABLES)
    for table in vocabulary.TABLES:
        if not vocabulary.TABLE_SPECS[table].extra:
            assert [code_name(cell) for cell in found[table]] == vocabulary.columns(table), table


def test_readme_is_a_guide() -> None:
    """README is short (its long explanations are in docs/guide.md), starts with a quick start,
    and says what the report holds in one paragraph of at most 120 words."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[0] == "Quick start", headings
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.startswith("The report starts with")]
    assert len(paragraphs) == 1, "README has no one paragraph on the report"
    assert len(paragraphs[0].split()) <= REPORT_PARAGRAPH_MAX_WORDS


def test_readme_scores_mode_shows_scale_for_a_0_100_metric() -> None:
    """The scores-mode section's config shows ``scale:`` with points, which a 0-100 metric
    needs (without it the scores are refused as no fractions), and the schema takes it."""
    import yaml

    from infrepro.io.config import check_config

    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Scores mode", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    lines = [line.lstrip("# ") for line in block.splitlines() if "scale:" in line]
    assert lines, "the scores-mode config shows no scale:"
    scale = yaml.safe_load(lines[0])["scale"]
    assert "points" in scale.values(), scale
    config = yaml.safe_load(block) | {"scale": scale}
    config["columns"]["metrics"] = [*config["columns"]["metrics"], *scale]
    check_config(config)


def test_the_bundled_config_shows_alpha_and_the_minimum_effect_with_their_meaning() -> None:
    """A user who copies config/config.yaml sees report.alpha and
    analyses.planning.min_effect set, each under comments that say what it means."""
    import yaml

    text = (REPO_ROOT / "config" / "config.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    assert config["report"]["alpha"] == schema.defaults("report")["alpha"]
    assert config["analyses"]["planning"]["min_effect"] > 0
    lines = text.splitlines()
    for key, meaning in (("alpha:", "significance level"), ("min_effect:", "smallest improvement")):
        (index,) = [i for i, line in enumerate(lines) if line.strip().startswith(key)]
        above = []
        for line in reversed(lines[:index]):
            if not line.strip().startswith("#"):
                break
            above.append(line)
        assert meaning in " ".join(above), (key, above)


def test_method_has_no_planning_leftovers() -> None:
    text = (REPO_ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert not [h for h in headings if "implemented" in h or "specified" in h]


ROBUSTNESS = "docs/robustness.md"


def test_robustness_table_names_tests_that_exist() -> None:
    """Each ``file::name`` of docs/robustness.md (a reported case -> its test) is a test
    function of that file, so the table cannot cite a test that was renamed or removed."""
    text = (REPO_ROOT / ROBUSTNESS).read_text(encoding="utf-8")
    cited = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", text)
    assert len(cited) >= 40
    missing = [
        f"{path}::{name}"
        for path, name in cited
        if not re.search(rf"^def {name}\(", (REPO_ROOT / path).read_text(), flags=re.M)
    ]
    assert not missing, missing


TOP_LEVEL = ("infrepro", "scripts", "workflow", "tests", "benchmarks", "config", "resources")
PATH = re.compile(
    r"(?<![\w./-])((?:%s|profiles|docs)/[\w./-]*[\w/])" % "|".join(TOP_LEVEL)  # noqa: UP031
)


@pytest.mark.parametrize(
    "doc",
    [
        "README.md",
        "docs/guide.md",
        "docs/method.md",
        "docs/architecture.md",
        "docs/reference.md",
        ROBUSTNESS,
    ],
)
def test_docs_name_only_paths_that_exist(doc: str) -> None:
    """Every repository path a document names (code spans, links, prose; not the commands of
    its fenced blocks, which may create files) exists."""
    text = re.sub(
        r"^```.*?^```$", "", (REPO_ROOT / doc).read_text(encoding="utf-8"), flags=re.S | re.M
    )
    missing = sorted({p for p in PATH.findall(text) if not (REPO_ROOT / p.rstrip(".")).exists()})
    assert not missing, f"{doc} names paths that do not exist: {missing}"
