"""The look ledger: which runs each system had after each completed workflow run
(docs/method.md §4e.12).

Every rerun that adds runs is a look at the data, whether or not the user declares it. The
ledger is a small tab-separated file beside the runs sheet (raw mode) or the scores file
(scores mode), ``<stem>.ledger.tsv`` (a runs pattern's: ``runs.ledger.tsv`` in the pattern's
fixed folder), meant to be committed with the experiment: one row per
run, with the look it arrived in, its name (the hypotheses file relative to the experiment
folder, or the run id in scores mode), the SHA-256 of its content, and the sequential plan in
force then; after each look's rows, a comment line holds the options that look was analysed
with (``# options at look 2: {...}``, the config flattened to dotted keys), from which the report
says which options changed since the last look. The workflow appends the runs that a completed
run found and the ledger lacked, as the next look; nothing else writes it. A ledger that
contradicts the runs (a run removed or changed after its look, a plan changed after a look) is
refused, never rewritten. Standard library only: the workflow's parse reads it on every
invocation.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from infrepro.core.vocabulary import SYSTEM
from infrepro.io.errors import InputError
from infrepro.io.pattern import is_pattern, pattern_ledger
from infrepro.plumbing.atomic import write_text

SUFFIX = ".ledger.tsv"
HEADER = ("look", SYSTEM, "run", "name", "sha256", "plan", "recorded")
PREAMBLE = (
    "# infrepro look ledger (docs/method.md §4e.12): the runs each system had after each\n"
    "# completed workflow run. The workflow appends a look when a run finds runs that the ledger\n"
    "# does not have; nothing else writes it. Commit it with the runs: the verdicts read their\n"
    "# looks here.\n"
)
OPTIONS_LINE = "# options at look "  # then "<look>: <JSON object of dotted key -> JSON value>"


@dataclass(frozen=True)
class LedgerRun:
    """One run as the ledger knows it: the look it arrived in, its system, id, name, content
    digest and the plan in force at that look; ``line``: where it stands in the file."""

    look: int
    system: str
    run: str
    name: str
    sha256: str
    plan: str
    recorded: str = ""
    line: int = 0


@dataclass(frozen=True)
class CurrentRun:
    """A run of the experiment now: its system, id, name and content digest."""

    system: str
    run: str
    name: str
    sha256: str


@dataclass(frozen=True)
class Looks:
    """The looks of the runs now: the ledger's (``path``; ``exists``: whether it was found) for
    the runs it holds, the next look for the runs it lacks (``pending``, appended when this run
    completes); ``plan``: the plan in force; ``options``: the options now, as a look records
    them (``options_of``), and ``options_at``: those each recorded look was analysed with."""

    path: str
    exists: bool
    of_run: dict[str, int]
    pending: tuple[str, ...]
    plan: str
    options: Mapping[str, str] = field(default_factory=dict)
    options_at: Mapping[int, Mapping[str, str]] = field(default_factory=dict)

    @property
    def recorded(self) -> int:
        """Looks recorded in the ledger so far."""
        return max((k for r, k in self.of_run.items() if r not in self.pending), default=0)

    @property
    def current(self) -> int:
        """The look this run is: the last recorded, or the next one when runs are pending."""
        return max(self.of_run.values(), default=0)


def ledger_path(runs_source: str | Path) -> Path:
    """The ledger beside the runs sheet or scores file: ``runs.tsv`` -> ``runs.ledger.tsv``,
    ``scores.csv.gz`` -> ``scores.ledger.tsv``; for a runs pattern, ``runs.ledger.tsv`` in the
    folder searched for its files (``outputs/{system}/{seed}.txt`` ->
    ``outputs/runs.ledger.tsv``): one ledger per tree of outputs, never a run itself."""
    if is_pattern(str(runs_source)):
        return Path(pattern_ledger(str(runs_source)))
    path = Path(runs_source)
    return path.with_name(path.name.split(".")[0] + SUFFIX)


def options_of(config: Mapping[str, object], prefix: str = "") -> dict[str, str]:
    """The options a look is analysed with: the config (its defaults filled) flattened to
    dotted keys, each value as compact JSON, in key order."""
    flat: dict[str, str] = {}
    for key in sorted(config):
        value = config[key]
        if isinstance(value, Mapping):
            flat.update(options_of(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = _json(value)
    return flat


def _json(value: object) -> str:
    """An option's value as the ledger compares it: JSON, keys sorted, characters as
    themselves; a value JSON has no type for (a YAML date) as its text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def read_ledger(path: str | Path) -> list[LedgerRun]:
    """The ledger's rows in file order; an empty list when there is no ledger. A row that is
    not a look of the ledger's format is refused naming its line."""
    return _read(path)[0]


def _options_line(path: Path, line: str, number: int) -> tuple[int, dict[str, str]]:
    """A look's options from its comment line, checked."""
    look, _, text = line[len(OPTIONS_LINE) :].partition(": ")
    try:
        options = json.loads(text)
    except json.JSONDecodeError:
        options = None
    if not look.isdigit() or not isinstance(options, dict):
        raise InputError(
            path, f"an options line is '{OPTIONS_LINE}<look>: <JSON object>'", line=number
        )
    return int(look), {str(k): _json(v) for k, v in options.items()}


def _read(path: str | Path) -> tuple[list[LedgerRun], dict[int, dict[str, str]]]:
    """The ledger's rows and each look's recorded options (``read_ledger``)."""
    path = Path(path)
    if not path.is_file():
        return [], {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"the look ledger cannot be read: {err}") from None
    rows: list[LedgerRun] = []
    options: dict[int, dict[str, str]] = {}
    header: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(OPTIONS_LINE):
            look, options[look] = _options_line(path, line, number)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        cells = next(csv.reader([line], delimiter="\t"))
        if header is None:
            if tuple(cells) != HEADER:
                raise InputError(
                    path, f"the look ledger's header must be {' '.join(HEADER)}", line=number
                )
            header = cells
            continue
        if len(cells) != len(HEADER):
            raise InputError(
                path, f"{len(cells)} cells where the ledger has {len(HEADER)}", line=number
            )
        values = dict(zip(HEADER, cells, strict=True))
        if not values["look"].isdigit() or int(values["look"]) < 1:
            raise InputError(path, "a look is a whole number from 1", line=number, column="look")
        look = int(values["look"])
        if rows and look < rows[-1].look:
            raise InputError(path, "the looks must not go back", line=number, column="look")
        rows.append(
            LedgerRun(
                look,
                values[SYSTEM],
                values["run"],
                values["name"],
                values["sha256"],
                values["plan"],
                values["recorded"],
                number,
            )
        )
    return rows, options


def looks_of(
    path: str | Path,
    runs: list[CurrentRun],
    plan: str,
    *,
    shown_as: str | None = None,
    options: Mapping[str, str] | None = None,
) -> Looks:
    """Each run's look from the ledger at ``path``, checked against the runs now: a run the
    ledger has must still be there with the same content, and the plan must be the one the
    last look was analysed under; the runs it lacks are the next look. ``options``: the
    options now (``options_of``), recorded with the next look."""
    rows, options_at = _read(path)
    name = shown_as or str(path)
    now = {r.run: r for r in runs}
    of_run: dict[str, int] = {}
    for row in rows:
        if row.run in of_run:
            raise InputError(name, f"run '{row.run}' is listed twice", line=row.line, column="run")
        current = now.get(row.run)
        if current is None:
            raise InputError(
                name,
                f"run '{row.run}' of {row.system} was analysed at look {row.look} and is no "
                "longer among the runs: a run cannot be withdrawn after a verdict was read from "
                "it. Restore it; to start the looks over, delete the ledger (the report then says "
                "that its verdicts assume one look)",
                line=row.line,
            )
        if current.sha256 != row.sha256:
            raise InputError(
                name,
                f"run '{row.run}' ({current.name}) changed after look {row.look}: its content "
                "is not what that look analysed. Restore it, or keep it unchanged and add the "
                "new output as a new run; to start the looks over, delete the ledger (the report "
                "then says that its verdicts assume one look)",
                line=row.line,
            )
        of_run[row.run] = row.look
    last = rows[-1].look if rows else 0
    if last >= 2 and rows[-1].plan != plan:  # one look is read at a fixed level
        raise InputError(
            name,
            f"the sequential plan changed after look {last}: the ledger's looks were analysed "
            f"under '{rows[-1].plan}', the config now asks for '{plan}'. A plan holds its level "
            "only when it is fixed before the looks; restore analyses.sequential, or delete the "
            "ledger to start the looks over",
            line=rows[-1].line,
            column="plan",
        )
    pending = tuple(r.run for r in runs if r.run not in of_run)
    for run in pending:
        of_run[run] = last + 1
    return Looks(name, bool(rows), of_run, pending, plan, dict(options or {}), options_at)


def run_looks(looks: Looks | None, planned: bool = False) -> list[list[object]]:
    """The jobs' parameter: each run's look as ``[run, look]`` pairs. Empty while the runs are
    one look and no plan is declared (the decision is then the fixed-sample one, as without a
    ledger); with a declared plan (``planned``) its first look is the plan's too."""
    if looks is None or (looks.current < 2 and not planned):
        return []
    return [[run, look] for run, look in looks.of_run.items()]


def ledger_text(rows: list[LedgerRun], options: Mapping[int, Mapping[str, str]]) -> str:
    """The ledger's file: the preamble, the header and one row per run, each look's rows
    followed by the options it was analysed with (where recorded)."""
    buffer = io.StringIO()
    buffer.write(PREAMBLE)
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(HEADER)
    for i, row in enumerate(rows):
        writer.writerow(
            [row.look, row.system, row.run, row.name, row.sha256, row.plan, row.recorded]
        )
        last_of_look = i + 1 == len(rows) or rows[i + 1].look != row.look
        if last_of_look and row.look in options:
            values = {key: json.loads(value) for key, value in options[row.look].items()}
            text = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
            buffer.write(f"{OPTIONS_LINE}{row.look}: {text}\n")
    return buffer.getvalue()


def append_look(
    path: str | Path, runs: Mapping[str, CurrentRun], looks: Looks, recorded: str
) -> int:
    """Append the pending runs as the next look (atomically: the whole file is written beside
    it and renamed); the number of runs appended."""
    if not looks.pending:
        return 0
    rows, options = _read(path)
    known = {r.run for r in rows}
    look = looks.current
    if looks.options:
        options[look] = dict(looks.options)
    for run in looks.pending:
        if run in known:
            continue
        current = runs[run]
        rows.append(
            LedgerRun(look, current.system, run, current.name, current.sha256, looks.plan, recorded)
        )
    write_text(path, ledger_text(rows, options))
    return len(looks.pending)
