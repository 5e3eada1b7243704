"""Column and model names are spelled once, in infrepro/core/vocabulary.py and
infrepro/core/registry.py:
no string literal elsewhere in the package, the rule scripts or the workflow spells ``run_id``,
``segment_id``, ``system`` or a model name (a value of the tables' ``analysis`` column)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from infrepro.core.registry import ANALYSES, MODELS

REPO = Path(__file__).resolve().parents[3]
HOMES = {REPO / "infrepro" / "core" / "vocabulary.py", REPO / "infrepro" / "core" / "registry.py"}
NAMES = frozenset({"run_id", "segment_id", "system", *MODELS, *ANALYSES})
# names that cannot be prose are also caught inside longer strings: "(1|run_id)", f"{x}_joint"
LONGEST_FIRST = sorted((n for n in NAMES if "_" in n), key=len, reverse=True)
IN_TEXT = re.compile(r"\b(" + "|".join(LONGEST_FIRST) + r")\b")


def sources() -> Iterator[Path]:
    for folder in ("infrepro", "scripts", "workflow"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in (".py", ".smk") and path not in HOMES:
                yield path
    yield REPO / "Snakefile"


def offending(text: str) -> bool:
    return text in NAMES or IN_TEXT.search(text) is not None


def python_literals(path: Path) -> Iterator[tuple[int, str]]:
    """String constants of a Python file, docstrings and bare string statements excepted (the
    literal parts of f-strings included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield node.lineno, node.value


def snakemake_literals(path: Path) -> Iterator[tuple[int, str]]:
    """String tokens of a Snakemake file (Snakemake's grammar is not Python's, its tokens are);
    an f-string without its replacement fields (a wildcard's ``{{run_id}}`` is text)."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for token in tokens:
        if token.type == tokenize.STRING:
            prefix = re.match(r"[rbufRBUF]*", token.string).group().lower()
            body = token.string[len(prefix) :]
            if "f" in prefix:
                body = body.replace("{{", "\0").replace("}}", "\1")
                body = re.sub(r"\{[^{}]*\}", "", body).replace("\0", "{").replace("\1", "}")
            yield token.start[0], body


def test_names_are_spelled_only_in_the_vocabulary_and_the_registry() -> None:
    found = []
    for path in sources():
        literals = python_literals if path.suffix == ".py" else snakemake_literals
        for line, text in literals(path):
            if offending(text):
                found.append(f"{path.relative_to(REPO)}:{line}: {text[:60]!r}")
    assert not found, "\n".join(found)


def test_the_check_sees_a_literal() -> None:
    assert offending("system") and offending("(1|run_id)") and offending("all_runs_per_system")
    assert not offending("the systems") and not offending("variance components (REML)")


def test_file_stems_are_safe_bounded_stable_and_distinct() -> None:
    import re

    from infrepro.core.vocabulary import file_stem

    assert file_stem("ter") == "ter" and file_stem("rouge1") == "rouge1"  # plain names as is
    hostile = ["comet{22}", "..", "a/../b", "/", "Ü" * 100 + "l" * 100, "q" * 300, "日本語", "a b"]
    stems = [file_stem(n) for n in hostile]
    assert len(set(stems)) == len(stems)
    for name, stem in zip(hostile, stems, strict=True):
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", stem), (name, stem)
        assert len(stem.encode()) <= 49 and stem == file_stem(name)
    assert file_stem("comet{22}").startswith("comet-22-")  # readable
