"""Every code-like name that docs/*.md and README.md cite exists, so a rename or a removal cannot
leave the documents naming what is gone:

- a file (``report/verdict.py``, ``pair_memo.py``) or folder (``analyses/common/``) of the
  repository, written from the root or from any folder in it (tests/unit/docs/test_docs.py
  checks the paths written from the root in prose as well);
- a dotted name: under ``infrepro`` (``infrepro.core.decisions.PairDecision``), a module's,
  package's or class's attribute (``decisions.JUDGED_DF``, ``lmm.fit.SINGULAR_TOL``,
  ``LmmResult.contest``), or a config option (``analyses.planning.min_effect``, also written
  from its section: ``planning.min_effect``); a dotted name whose first part is none of these
  (``importlib.resources``, ``textstat.flesch_reading_ease``) belongs to another package;
- a snake_case name (``pair_looks``, ``p_adjusted``): a word of the code (functions, columns,
  options, the golden scripts' R) or a value of the ``analysis`` column (``metaparam_joint``);
- a table or data file (``decisions.csv``): a table the workflow declares, a file of the
  repository, or a word of the code.

Fenced blocks are commands and output, not citations: they are left out.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from infrepro.core.registry import MODELS
from infrepro.core.schema import schema
from infrepro.core.vocabulary import TABLE_SPECS

REPO_ROOT = Path(__file__).resolve().parents[3]
DOCS = sorted(p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "docs").glob("*.md"))
CITING = [*DOCS, "README.md"]
# the folders a cited file may be in; the words of the code are read from all but the last two
CODE = ("infrepro", "scripts", "workflow", "tests", "benchmarks", "config", "profiles", ".ci")
FOLDERS = (*CODE, "docs", "resources")
MISSING = object()
FILE_TYPES = ("py", "smk", "R", "j2", "sh", "md", "yaml")
TEXT = tuple(f".{t}" for t in (*FILE_TYPES, "toml", "txt", "css", "js", "html"))
THIS = Path(__file__).resolve().relative_to(REPO_ROOT).as_posix()
SPAN = re.compile(r"`([^`\n]+)`")
FILE = re.compile(r"(?:[\w.-]+/)*[\w-][\w.-]*\.(?:%s)" % "|".join(FILE_TYPES))  # noqa: UP031
FOLDER = re.compile(r"(?:[\w-]+/)+")
PROSE_PATH = re.compile(r"(?<![\w./-])(?:[\w-]+/)+[\w-][\w.-]*\.(?:py|smk|R|j2|sh)\b")
DATA = re.compile(r"[\w-]+\.(?:csv|tsv|parquet|json|jsonl)")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def citations(doc: str) -> list[str]:
    """The code spans of a document outside its fenced blocks, a trailing ``()`` dropped, and
    the paths of source files in its prose."""
    text = (REPO_ROOT / doc).read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)
    spans = [span.removesuffix("()") for span in SPAN.findall(text)]
    return spans + PROSE_PATH.findall(SPAN.sub(" ", text))


@cache
def repository_files() -> tuple[frozenset[str], frozenset[str]]:
    """The repository's files and folders (paths from the root) where code and docs live."""
    paths = [p for top in FOLDERS for p in (REPO_ROOT / top).rglob("*")]
    files = {p.relative_to(REPO_ROOT).as_posix() for p in paths if p.is_file()}
    files |= {"Snakefile", "README.md", "pyproject.toml", "constraints.txt"}
    folders = {p.relative_to(REPO_ROOT).as_posix() for p in paths if p.is_dir()}
    folders |= {top for top in FOLDERS if (REPO_ROOT / top).is_dir()}
    return frozenset(files), frozenset(folders)


def path_exists(path: str) -> bool:
    """A file or folder written from the root or from any folder of the repository."""
    files, folders = repository_files()
    name = path.rstrip("/")
    known = folders if path.endswith("/") else files
    return name in known or any(p.endswith("/" + name) for p in known)


@cache
def code_words() -> frozenset[str]:
    """Every identifier-like word of the code's text files (documents left out, and this file:
    it names what does not exist on purpose)."""
    files, _ = repository_files()
    words: set[str] = set()
    for path in files:
        if path.startswith("resources/") or path.endswith(".md") or path == THIS:
            continue
        if not path.endswith(TEXT) and "." in path.rsplit("/", 1)[-1]:
            continue
        try:
            text = (REPO_ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        words.update(re.findall(r"\w+", text))
    return frozenset(words)


@cache
def options() -> frozenset[str]:
    """The config's options and sections, dotted (``analyses.planning.min_effect``)."""

    def walk(node: Mapping[str, Any], prefix: str) -> Iterator[str]:
        for name, child in node.get("properties", {}).items():
            yield prefix + name
            yield from walk(child, f"{prefix}{name}.")

    return frozenset(walk(schema(), ""))


@cache
def modules() -> tuple[str, ...]:
    """Every module and package of infrepro, dotted."""
    out = []
    for path in sorted((REPO_ROOT / "infrepro").rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return tuple(out)


@cache
def classes() -> dict[str, list[str]]:
    """The modules that define each top-level class of infrepro."""
    out: dict[str, list[str]] = {}
    for module in modules():
        path = REPO_ROOT / Path(*module.split("."))
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(module)
    return out


def attribute(owner: object, name: str) -> object:
    """``owner``'s attribute ``name`` (a submodule of a package, a dataclass field or an
    annotated name of a class included), or MISSING."""
    if isinstance(owner, ModuleType):
        try:
            return getattr(owner, name)
        except AttributeError:
            try:
                return importlib.import_module(f"{owner.__name__}.{name}")
            except ModuleNotFoundError:
                return MISSING
    if hasattr(owner, name):
        return getattr(owner, name)
    declared = {
        **getattr(owner, "__annotations__", {}),
        **getattr(owner, "__dataclass_fields__", {}),
    }
    return declared.get(name, MISSING)


def resolves(owner: object, parts: list[str]) -> bool:
    """Does ``owner.a.b...`` (``parts``) exist?"""
    for part in parts:
        owner = attribute(owner, part)
        if owner is MISSING:
            return False
    return True


def dotted_problem(name: str) -> str | None:
    """Why a dotted name is not what the docs say it is, or None (it exists, or it belongs to
    another package)."""
    parts = name.split(".")
    if name in options() or any(o.endswith("." + name) for o in options()):
        return None
    if parts[0] == "infrepro":
        return None if resolves(importlib.import_module("infrepro"), parts[1:]) else "not found"
    owners: list[tuple[object, list[str]]] = []  # what may hold the rest of the name
    for k in range(len(parts) - 1, 0, -1):  # a module or package written from any folder
        prefix = ".".join(parts[:k])
        owners += [(m, parts[k:]) for m in modules() if m.endswith("." + prefix)]
    for module in classes().get(parts[0], []):
        owners.append((getattr(importlib.import_module(module), parts[0]), parts[1:]))
    if not owners:  # another package's name; a class of ours would have been found
        return None if parts[0][0].islower() else f"no class {parts[0]} in infrepro"
    for owner, rest in owners:
        if resolves(importlib.import_module(owner) if isinstance(owner, str) else owner, rest):
            return None
    return "no module or class of infrepro has it"


def problem(name: str) -> str | None:
    """Why a cited name does not exist, or None."""
    if " " in name or any(c in name for c in "<>*"):
        return None  # an expression, a pattern or a command: not one name
    if FILE.fullmatch(name) or FOLDER.fullmatch(name):
        if name.startswith(("results/", "logs/", ".snakemake/")):
            return None  # what a run writes
        return None if path_exists(name) else "no such file or folder"
    if DATA.fullmatch(name):
        known = name.rsplit(".", 1)[0] in {*TABLE_SPECS, *code_words()} or path_exists(name)
        return None if known else "no such table or file"
    if DOTTED.fullmatch(name):
        return dotted_problem(name)
    if SNAKE.fullmatch(name):
        known = name in code_words() or name in MODELS
        return None if known else "no such word in the code"
    return None


@pytest.mark.parametrize("doc", CITING)
def test_the_names_a_document_cites_exist(doc: str) -> None:
    missing = sorted({f"{n}: {why}" for n in citations(doc) if (why := problem(n)) is not None})
    assert not missing, f"{doc} cites names that do not exist: {missing}"


@pytest.mark.parametrize(
    "name",
    [
        "report/verdicts.py",
        "infrepro.core.decisions.PairDecisions",
        "decisions.JUDGED",
        "verdict.classify",
        "analyses.decision.PairDecision",
        "LmmResult.contests",
        "NoSuchClass.method",
        "analyses.planning.min_effects",
        "runs_at_looks",
        "analyses/nothing/",
        "no_such_table.csv",
    ],
)
def test_a_name_that_does_not_exist_is_caught(name: str) -> None:
    assert problem(name) is not None


@pytest.mark.parametrize(
    "name",
    [
        "report/verdict.py",
        "infrepro.core.decisions.PairDecision",
        "decisions.JUDGED_DF",
        "lmm.fit.SINGULAR_TOL",
        "LmmResult.contest",
        "MaxT.error",
        "analyses.planning.min_effect",
        "planning.min_effect",
        "pair_looks",
        "analyses/common/",
        "importlib.resources",
        "decisions.csv",
        "metaparam_joint",
    ],
)
def test_a_name_that_exists_is_found(name: str) -> None:
    assert problem(name) is None
