"""The look ledger: which runs each system had after each completed workflow run
(docs/method.md §4e.12).

Every rerun that adds runs is a look at the data, whether or not the user declares it. The
ledger is a small tab-separated file beside the runs sheet (raw mode) or the scores file
(scores mode), ``<stem>.ledger.tsv`` (a runs pattern's: ``runs.ledger.tsv`` in the pattern's
fixed folder), meant to be committed with the experiment: one row per
run, with the look it arrived in, its name (the hypotheses file relative to the experiment
folder, or the run id in scores mode), the SHA-256 of its content, and the sequential plan in
force then. The workflow appends the runs that a completed run found and the ledger lacked, as
the next look; nothing else writes it. A ledger that contradicts the runs (a run removed or
changed after its look, a plan changed after a look) is refused, never rewritten. Standard
library only: the workflow's parse reads it on every invocation.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
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
    completes); ``plan``: the plan in force."""

    path: str
    exists: bool
    of_run: dict[str, int]
    pending: tuple[str, ...]
    plan: str

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


def read_ledger(path: str | Path) -> list[LedgerRun]:
    """The ledger's rows in file order; an empty list when there is no ledger. A row that is
    not a look of the ledger's format is refused naming its line."""
    path = Path(path)
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, f"the look ledger cannot be read: {err}") from None
    rows: list[LedgerRun] = []
    header: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
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
    return rows


def looks_of(
    path: str | Path, runs: list[CurrentRun], plan: str, *, shown_as: str | None = None
) -> Looks:
    """Each run's look from the ledger at ``path``, checked against the runs now: a run the
    ledger has must still be there with the same content, and the plan must be the one the
    last look was analysed under; the runs it lacks are the next look."""
    rows = read_ledger(path)
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
    return Looks(name, bool(rows), of_run, pending, plan)


def run_looks(looks: Looks | None, planned: bool = False) -> list[list[object]]:
    """The jobs' parameter: each run's look as ``[run, look]`` pairs. Empty while the runs are
    one look and no plan is declared (the decision is then the fixed-sample one, as without a
    ledger); with a declared plan (``planned``) its first look is the plan's too."""
    if looks is None or (looks.current < 2 and not planned):
        return []
    return [[run, look] for run, look in looks.of_run.items()]


def ledger_text(rows: list[LedgerRun]) -> str:
    """The ledger's file: the preamble, the header and one row per run."""
    buffer = io.StringIO()
    buffer.write(PREAMBLE)
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(HEADER)
    for row in rows:
        writer.writerow(
            [row.look, row.system, row.run, row.name, row.sha256, row.plan, row.recorded]
        )
    return buffer.getvalue()


def append_look(
    path: str | Path, runs: Mapping[str, CurrentRun], looks: Looks, recorded: str
) -> int:
    """Append the pending runs as the next look (atomically: the whole file is written beside
    it and renamed); the number of runs appended."""
    if not looks.pending:
        return 0
    rows = read_ledger(path)
    known = {r.run for r in rows}
    look = looks.current
    for run in looks.pending:
        if run in known:
            continue
        current = runs[run]
        rows.append(
            LedgerRun(look, current.system, run, current.name, current.sha256, looks.plan, recorded)
        )
    write_text(path, ledger_text(rows))
    return len(looks.pending)
