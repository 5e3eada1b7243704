"""Runs from a path pattern: ``runs: outputs/{system}/{seed}.txt`` instead of a runs sheet.

The pattern is in Snakemake's wildcard syntax (``{name}``, ``{name,regex}``) and matched as
``snakemake.io.glob_wildcards`` matches it: the same regular expression (a wildcard matches
``.+`` unless constrained; a repeated wildcard matches the same text), against the files below
the pattern's fixed folder (the folder before its first wildcard). Every file that matches is a
run (files and folders whose names start with ``.`` are skipped, and so is the look ledger,
``runs.ledger.tsv`` in that folder):

- ``{system}`` is required; every other wildcard is a facet (a column of the runs table), in
  the order the pattern names them;
- the run id is the wildcards' values joined by ``_``, the system first (``base_1``); values
  may hold only what a run id may (letters, digits and ``. _ + = @ -``; they name output files),
  a value that spans folders or holds anything else is refused naming the file, and two files
  whose values join to one run id are refused naming both;
- dev scores, optionally, from a file per run (``runs_dev_scores``: a pattern with the same
  wildcards, e.g. ``outputs/{system}/{seed}.dev``) holding one number; a file that is a run's
  dev-score file is not a run.

The derived runs are the rows a runs sheet would have (``DerivedRuns.sheet``). Standard library
only: the workflow's parse finds the runs on every invocation, once.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infrepro.core.vocabulary import DEV_SCORE, HYPOTHESES, RESERVED, RUN, RUN_ID_FORM, SYSTEM
from infrepro.io.errors import InputError
from infrepro.io.names import character_problem, code_point, spelling
from infrepro.io.paths import portable_path
from infrepro.io.text import decode_utf8, not_a_file

OPTION = "runs"
DEV_OPTION = "runs_dev_scores"
# Snakemake's wildcard syntax (snakemake.io.WILDCARD_REGEX): {name} or {name,constraint}, the
# constraint holding braces one level deep ({seed,[0-9]{1,3}})
WILDCARD = re.compile(
    r"""
    \{
        (?=(
            \s*(?P<name>[.\w]+)
            (\s*,\s*
                (?P<constraint>
                    ([^{}]+ | \{\d+(,\d+)?\})*
                )
            )?\s*
        ))\1
    \}
    """,
    re.VERBOSE,
)
SEPARATOR = "_"  # between the values of a run id
LEDGER_NAME = "runs.ledger.tsv"  # a pattern's look ledger (infrepro.io.ledger), in its folder
VALUE_FORM = re.compile(r"[\w.+=@-]+")  # the characters a run id may hold (RUN_ID_FORM)


def is_pattern(runs: object) -> bool:
    """Whether ``runs`` is a path pattern (it holds a ``{wildcard}``), not a runs sheet."""
    return isinstance(runs, str) and WILDCARD.search(runs) is not None


def pattern_root(text: str) -> str:
    """The folder searched for a pattern's files, as glob_wildcards finds it: the folder of the
    (normalised) pattern before its first wildcard; ``.`` when it starts with one."""
    pattern = os.path.normpath(text)
    first = re.search("{[^{]", pattern)
    folder = os.path.dirname(pattern[: first.start()] if first else pattern)
    return folder or "."


def pattern_ledger(text: str) -> str:
    """Where a runs pattern's look ledger lies: ``runs.ledger.tsv`` in the folder searched for
    its files (``outputs/{system}/{seed}.txt`` -> ``outputs/runs.ledger.tsv``)."""
    return os.path.join(pattern_root(text), LEDGER_NAME)


@dataclass(frozen=True)
class RunsPattern:
    """A parsed runs pattern: as given, its wildcards in order of first appearance, the regular
    expression a file's path (normalised, as found below ``root``) must match in full."""

    text: str
    wildcards: tuple[str, ...]
    regex: re.Pattern[str]
    root: str

    @property
    def facets(self) -> tuple[str, ...]:
        """Every wildcard but ``{system}``: the runs' facets."""
        return tuple(w for w in self.wildcards if w != SYSTEM)

    @property
    def label(self) -> str:
        """How messages name it: ``runs 'outputs/{system}/{seed}.txt'``."""
        return f"{OPTION} {self.text!r}"


@dataclass(frozen=True)
class RunMatch:
    """A file the pattern matches: its path (relative to the working directory when the pattern
    is) and each wildcard's value."""

    path: str
    values: Mapping[str, str]


@dataclass(frozen=True)
class DerivedRuns:
    """The runs a pattern found, as a runs sheet's rows (sorted by run id): ``run_id``,
    ``system``, ``hypotheses``, ``dev_score`` when dev scores are given, then the facets;
    ``dev_files``: the dev-score files read."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str | float, ...], ...]
    dev_files: tuple[str, ...] = ()

    def sheet(self) -> list[list[str | float]]:
        """The header and the rows, as plain lists (a rule's parameter, a kept store's JSON)."""
        return [list(self.columns), *(list(row) for row in self.rows)]


def parse_pattern(text: str, option: str = OPTION) -> RunsPattern:
    """The pattern of ``option``, refused (naming the option and the pattern) without a
    ``{system}``, with a wildcard named as a reserved column, or with a constraint that is no
    regular expression."""
    pattern = os.path.normpath(text)
    names = list(dict.fromkeys(m.group("name") for m in WILDCARD.finditer(pattern)))
    if SYSTEM not in names:
        raise InputError(
            None,
            f"{option} {text!r} is a pattern without a {{{SYSTEM}}} wildcard: name the part of "
            f"the path that holds the system, e.g. outputs/{{{SYSTEM}}}/{{seed}}.txt",
        )
    for name in names:
        if name in RESERVED and name != SYSTEM:
            raise InputError(
                None,
                f"{option} {text!r}: the wildcard {{{name}}} has the name of a column infrepro "
                f"reserves ({', '.join(RESERVED)}); rename it"
                + (f" (dev scores come from {DEV_OPTION})" if name == DEV_SCORE else ""),
            )
    try:
        regex = re.compile(_regex(pattern))
    except (re.error, ValueError) as err:
        raise InputError(None, f"{option} {text!r} is not a valid pattern: {err}") from None
    return RunsPattern(text, tuple(names), regex, pattern_root(text))


def _regex(pattern: str) -> str:
    """The regular expression of a pattern, built as snakemake.io.regex_from_filepattern."""
    parts, last, seen = [], 0, set()
    for match in WILDCARD.finditer(pattern):
        parts.append(re.escape(pattern[last : match.start()]))
        name, constraint = match.group("name"), match.group("constraint")
        if name in seen:
            if constraint:
                raise ValueError(f"the constraint of {{{name}}} must be given at its first use")
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>{constraint or '.+'})")
        last = match.end()
    parts.append(re.escape(pattern[last:]) + "$")
    return "".join(parts)


def runs_pattern(config: Mapping[str, Any]) -> RunsPattern | None:
    """The config's runs pattern (raw mode, ``runs`` a pattern), parsed; None otherwise."""
    runs = config.get(OPTION)
    if "scores" in config or not is_pattern(runs):
        return None
    return parse_pattern(str(runs))


def find_runs(pattern: RunsPattern) -> list[RunMatch]:
    """Every file below the pattern's folder that it matches (but its look ledger), by path;
    refused when none matches."""
    skipped = os.path.normpath(pattern_ledger(pattern.text))
    found = []
    for folder, dirs, files in os.walk(pattern.root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.normpath(os.path.join(folder, name))
            match = pattern.regex.match(path)
            if match and path != skipped:
                found.append(RunMatch(path, match.groupdict()))
    if not found:
        where = "its folder does not exist" if not os.path.isdir(pattern.root) else "none matches"
        raise InputError(
            None,
            f"{pattern.label} matches no file: searched the files below "
            f"{portable_path(pattern.root)}/ ({where})",
        )
    return sorted(found, key=lambda m: m.path)


def derive_runs(
    pattern: RunsPattern, matches: list[RunMatch], dev_scores: str | None = None
) -> DerivedRuns:
    """The runs of the matched files: their ids, systems, hypotheses files, dev scores (from
    ``dev_scores``, a pattern of the same wildcards) and facets; refused, naming the file, when a
    value cannot be part of a run id, and, naming both, when two files give one run id."""
    dev_of = _dev_files(pattern, matches, dev_scores)
    dev_files = set(dev_of.values())
    runs: dict[str, RunMatch] = {}
    for match in matches:
        if match.path in dev_files:  # a run's dev-score file, which the pattern also matches
            continue
        run = _run_id(pattern, match)
        if run in runs:
            raise InputError(
                None,
                f"{pattern.label} matches two files for run '{run}': {runs[run].path} and "
                f"{match.path} (a run id joins the wildcards' values with '{SEPARATOR}', the "
                "system first); rename one",
            )
        runs[run] = match
    columns = [RUN, SYSTEM, HYPOTHESES, *([DEV_SCORE] if dev_scores else []), *pattern.facets]
    rows = []
    for run in sorted(runs):
        match = runs[run]
        problem = not_a_file(match.path)  # a dangling link
        if problem is not None:
            raise InputError(match.path, f"the hypotheses file of run '{run}' {problem}")
        dev = [_dev_score(dev_of[match.path], run)] if dev_scores else []
        facets = [match.values[f] for f in pattern.facets]
        rows.append((run, match.values[SYSTEM], portable_path(match.path), *dev, *facets))
    used = sorted(dev_of[runs[r].path] for r in runs) if dev_scores else []
    return DerivedRuns(tuple(columns), tuple(rows), tuple(used))


def _run_id(pattern: RunsPattern, match: RunMatch) -> str:
    """The run id of a matched file: its values joined, the system first; each value checked."""
    order = (SYSTEM, *pattern.facets)
    for name in order:
        value = match.values[name]
        if os.sep in value or "/" in value:
            raise InputError(
                match.path,
                f"{pattern.label}: the wildcard {{{name}}} matches {value!r}, which spans "
                f"folders; move the file, or keep the wildcard within one folder "
                f"({{{name},[^/]+}})",
            )
        bad = next((c for c in value if not VALUE_FORM.fullmatch(c)), None)
        if bad is not None:
            raise InputError(
                match.path,
                f"{pattern.label}: the wildcard {{{name}}} matches {spelling(value)}, which "
                f"holds {code_point(bad)}; a run id is made of the wildcards' values, which may "
                "hold only letters, digits and . _ + = @ - (it names output files): rename the "
                "file or folder, or list the runs in a runs sheet",
            )
        problem = character_problem(value)
        if problem is not None:
            raise InputError(match.path, f"{pattern.label}: {name} {spelling(value)} {problem}")
    run = SEPARATOR.join(match.values[name] for name in order)
    if not RUN_ID_FORM.fullmatch(run):
        raise InputError(
            match.path,
            f"{pattern.label}: the run id {run!r} must start with a letter or digit, so must "
            f"the {{{SYSTEM}}} value {match.values[SYSTEM]!r}; rename the file or folder",
        )
    return run


def _dev_files(
    pattern: RunsPattern, matches: list[RunMatch], dev_scores: str | None
) -> dict[str, str]:
    """Each matched file's dev-score file (none without ``dev_scores``); refused unless the
    dev-score pattern names exactly the runs pattern's wildcards."""
    if not dev_scores:
        return {}
    names = list(dict.fromkeys(m.group("name") for m in WILDCARD.finditer(dev_scores)))
    if sorted(names) != sorted(pattern.wildcards):
        shown = ", ".join(f"{{{w}}}" for w in pattern.wildcards)
        raise InputError(
            None,
            f"{DEV_OPTION} {dev_scores!r} must name the wildcards of runs ({shown}) and no "
            "other, so that each run has its own dev-score file",
        )

    def fill(match: RunMatch) -> str:
        path = WILDCARD.sub(lambda w: match.values[w.group("name")], dev_scores)
        return os.path.normpath(path)

    return {match.path: fill(match) for match in matches}


def _dev_score(path: str, run: str) -> float:
    """The one number of a run's dev-score file."""
    problem = not_a_file(path)
    if problem is not None:
        raise InputError(
            path,
            f"{DEV_OPTION}: the dev-score file of run '{run}' {problem}; give every run one "
            f"(or leave {DEV_OPTION} out to select each system's best run by the test mean)",
        )
    text = decode_utf8(Path(path).read_bytes(), path).strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
        text = text[:40]
    if not math.isfinite(value):
        raise InputError(
            path,
            f"{DEV_OPTION}: {text!r} is not a finite number; the file holds the dev score of "
            f"run '{run}', one number",
        )
    return value
