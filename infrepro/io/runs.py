"""The runs sheet: one row per trained model instance (run) with its system and facets.

A TSV or JSONL table; `read_runs_sheet` checks it (the only definition of its format):

- ``run_id`` (required, unique): letters, digits and ``. _ + = @ -``, starting with a letter or
  digit (it names output files);
- ``system`` (required, non-empty): the system (model family) the run belongs to;
- ``hypotheses`` (required, non-empty): path, relative to the sheet's folder (or absolute), to a
  UTF-8 text file with one hypothesis per line in test-set order, or a ``.jsonl`` file with
  ``segment_id`` and ``hypothesis``; read back relative to the experiment folder (the working
  directory) when it lies inside it (infrepro.io.paths.portable_path);
- ``dev_score`` (optional, numeric or empty): development-set score that picks each system's
  "best" run;
- the look column, when the config names one (``look_column``; docs/method.md §4e.1): in
  which batch each run arrived, an integer or an ISO date per run; stored as ``look``, no facet;
- any other column is a facet (meta-parameter such as seed, lambda, dropout, prompt); an empty
  facet cell means the facet does not apply to that run.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from infrepro.core.vocabulary import (
    DEV_SCORE,
    HYPOTHESES,
    LOOK,
    RECORDED_LOOK,
    RESERVED,
    RUN,
    RUN_ID_FORM,
    SYSTEM,
)
from infrepro.io.errors import InputError, plural
from infrepro.io.looks import look_values
from infrepro.io.names import check_names
from infrepro.io.paths import portable_path
from infrepro.io.tables import (
    LINE_COLUMN,
    check_lookalike_values,
    check_unique,
    read_table,
    require_columns,
    require_text,
)
from infrepro.io.text import not_a_file


def read_runs_sheet(
    path: str | Path, *, check_files: bool = True, look_column: str | None = None
) -> pd.DataFrame:
    """Read and validate a runs sheet; hypotheses paths are normalised once, relative to the
    working directory (the experiment folder) when inside it, else absolute (``portable_path``),
    so moving or cloning a finished experiment changes no job's inputs.

    Columns other than the reserved ones and the look column (``look_column``, stored as
    ``look`` with normalised values, docs/method.md §4e.1) are facets (meta-parameters); an
    empty facet cell means the facet does not apply to that run (e.g. a lambda the baseline
    does not have).
    """
    sheet = Path(path)
    frame = read_table(sheet)
    require_columns(frame, sheet, [RUN, SYSTEM, HYPOTHESES])
    if look_column is not None:
        frame = _looks(frame, sheet, look_column)
    for column in (RUN, SYSTEM, HYPOTHESES):
        require_text(frame, sheet, column)
    check_unique(frame, sheet, RUN)
    for run_id, line in zip(frame[RUN], frame[LINE_COLUMN], strict=True):
        if not RUN_ID_FORM.fullmatch(run_id):
            raise InputError(
                sheet,
                f"{RUN} {run_id!r} may hold only letters, digits and . _ + = @ - "
                "(it names output files)",
                line=int(line),
                column=RUN,
            )
    frame[HYPOTHESES] = [
        _located(sheet, p, int(line))
        for p, line in zip(frame[HYPOTHESES], frame[LINE_COLUMN], strict=True)
    ]
    if check_files:
        for hyp, line in zip(frame[HYPOTHESES], frame[LINE_COLUMN], strict=True):
            problem = not_a_file(hyp)
            if problem is not None:
                raise InputError(
                    sheet, f"hypotheses file {problem}: {hyp}", line=int(line), column=HYPOTHESES
                )
    if DEV_SCORE in frame.columns:
        frame[DEV_SCORE] = _numeric_column(frame, sheet, DEV_SCORE)
        _check_dev_scores_complete(frame, sheet)
    check_lookalike_values(frame, sheet, SYSTEM, SYSTEM)
    facets = facet_columns(frame, looks=look_column is not None)
    check_names(facets, sheet, "facet", lines=[1] * len(facets))  # columns of the tables
    for facet in facets:
        frame[facet] = [_facet_value(v) for v in frame[facet]]
        check_lookalike_values(frame, sheet, facet, f"level of facet '{facet}'")
    # ordered by run id: the order of the sheet's rows is not information (tables stay the same)
    frame = frame.sort_values(RUN, kind="stable")
    return frame.drop(columns=[LINE_COLUMN]).reset_index(drop=True)


def runs_from_sheet(sheet: list[list[str | float]]) -> pd.DataFrame:
    """The runs table of a derived runs sheet (its header first, the rows in run-id order:
    infrepro.io.pattern.DerivedRuns.sheet), as ``read_runs_sheet`` returns a sheet's:
    ``dev_score`` numeric, every other column text."""
    header, *rows = sheet
    frame = pd.DataFrame([list(row) for row in rows], columns=list(header), dtype=object)
    if DEV_SCORE in frame.columns:
        frame[DEV_SCORE] = frame[DEV_SCORE].astype("float64")
    return frame


def _located(sheet: Path, hypotheses: str, line: int) -> str:
    """The hypotheses path (relative ones against the sheet's folder) as the workflow names it:
    ``portable_path``."""
    path = Path(hypotheses) if Path(hypotheses).is_absolute() else sheet.parent / hypotheses
    try:
        path.resolve()  # a symlink loop is refused here, naming the sheet's line
        return portable_path(path)
    except (RuntimeError, OSError) as err:  # a symlink loop (RuntimeError before Python 3.13)
        raise InputError(
            sheet,
            f"hypotheses file cannot be read ({err}): {hypotheses}",
            line=line,
            column=HYPOTHESES,
        ) from None


def facet_columns(frame: pd.DataFrame, *, looks: bool = False) -> list[str]:
    """The runs sheet's facets: every column that is not reserved, in sheet order (nor the
    look column ``look`` when looks are declared)."""
    skip = {*RESERVED, LINE_COLUMN, *([LOOK] if looks else [])}
    return [c for c in frame.columns if c not in skip]


def _looks(frame: pd.DataFrame, sheet: Path, column: str) -> pd.DataFrame:
    """The look column checked (``look_values``) and stored as ``look``; refused when the sheet
    lacks it or has another column of that name."""
    if column not in frame.columns:
        known = ", ".join(c for c in frame.columns if c != LINE_COLUMN)
        raise InputError(
            None,
            f"look_column names '{column}', which the runs sheet {sheet} lacks (its columns: "
            f"{known})",
        )
    if column != LOOK and LOOK in frame.columns:
        raise InputError(
            sheet,
            f"column '{LOOK}' has the name infrepro gives the look column ('{column}', "
            "look_column); rename it",
            column=LOOK,
        )
    values = look_values(list(frame[column]), sheet, list(frame[LINE_COLUMN]), column)
    frame = frame.drop(columns=[column])
    frame[LOOK] = values
    return frame


def _facet_value(value: object) -> object:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    text = str(value).strip()
    return text if text else None


def _check_dev_scores_complete(frame: pd.DataFrame, sheet: Path) -> None:
    """A dev score for every run or for none: one empty cell would turn best-run selection by
    dev score off for every system."""
    empty = frame[DEV_SCORE].isna()
    if empty.any() and not empty.all():
        others = plural(int((~empty).sum()), "other run has", "other runs have")
        raise InputError(
            sheet,
            f"{DEV_SCORE} is empty while {others} one; the best run of every system is "
            f"selected by {DEV_SCORE}, so give every run one (or leave the column empty to "
            "select by the test mean, flagged optimistic)",
            line=int(frame.loc[empty, LINE_COLUMN].iloc[0]),
            column=DEV_SCORE,
        )


def _numeric_column(frame: pd.DataFrame, path: Path, column: str) -> pd.Series:
    values: list[float] = []
    for value, line in zip(frame[column], frame[LINE_COLUMN], strict=True):
        if value is None or str(value).strip() == "":
            values.append(float("nan"))
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(
                path, f"'{value}' is not a number", line=int(line), column=column
            ) from None
        if not math.isfinite(number):
            raise InputError(
                path, f"'{value}' is not a finite number", line=int(line), column=column
            )
        values.append(number)
    return pd.Series(values, index=frame.index, dtype="float64")


def with_recorded_looks(runs: pd.DataFrame, looks: list[list[object]]) -> pd.DataFrame:
    """The runs table with the look the ledger recorded each run at (``RECORDED_LOOK``;
    docs/method.md §4e.12), when there are looks to record (``looks``: [run, look] pairs)."""
    if not looks:
        return runs
    of_run = {str(run): int(look) for run, look in looks}  # type: ignore[call-overload]
    return runs.assign(**{RECORDED_LOOK: [of_run[str(r)] for r in runs[RUN]]})
