"""The look ledger in the workflow (docs/method.md §4e.12): read and checked while Snakemake
parses the workflow, its looks passed to the jobs that write the runs table, a look appended
when a run completes (``onsuccess``).

A declared look column (``look_column``, ``columns.look``) takes precedence: then the ledger is
neither read nor written.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from infrepro.core.decisions import DECLARED_LOOKS, RECORDED_LOOKS
from infrepro.experiment.record import Experiment
from infrepro.io.ledger import (
    CurrentRun,
    Looks,
    append_look,
    ledger_path,
    looks_of,
    options_of,
)
from infrepro.io.paths import portable_path
from infrepro.plumbing.files import file_state


def declares_looks(config: Mapping[str, Any]) -> bool:
    """Whether the runs carry a declared look column (raw ``look_column``, scores
    ``columns.look``)."""
    if config.get("look_column") is not None:
        return True
    columns = config.get("columns") or {}
    return bool(columns.get("look")) if isinstance(columns, Mapping) else False


def plan_of(config: Mapping[str, Any]) -> str:
    """The plan the looks are analysed under, as the ledger records it: the anytime-valid
    sequence (its mixture scale) or the declared maximum, spending and futility; and α. The
    declaration of a final look is no change of plan (it is made at a look)."""
    options = dict(config["analyses"]["sequential"])
    alpha = float(config["report"]["alpha"])
    if options.get("max_runs") is None:
        return f"anytime-valid, mixture scale {float(options['mixture_scale']):g}, alpha {alpha:g}"
    fixed = {k: options.get(k) for k in ("max_runs", "spending", "futility")}
    return f"plan {json.dumps(fixed, sort_keys=True)}, alpha {alpha:g}"


def current_runs(experiment: Experiment, sha256: Callable[[str], str]) -> list[CurrentRun]:
    """The experiment's runs as the ledger names them: raw mode by hypotheses file (relative to
    the experiment folder) and its SHA-256, scores mode by run id and the digest of its scores."""
    runs = []
    for run, system in zip(experiment.run_ids, experiment.run_systems, strict=True):
        if experiment.mode == "raw":
            path = experiment.hypotheses_path(run)
            runs.append(CurrentRun(system, run, portable_path(path), sha256(path)))
        else:
            runs.append(CurrentRun(system, run, run, experiment.run_digests[run]))
    return runs


def recorded_looks(
    experiment: Experiment, config: Mapping[str, Any], sha256: Callable[[str], str]
) -> tuple[Looks, list[CurrentRun]] | None:
    """The runs' looks from the ledger beside the runs sheet or scores file (a runs pattern's:
    in the pattern's folder; ``ledger_path``), checked (an ``InputError`` names the ledger's
    line); None when the runs declare a look column."""
    if declares_looks(config):
        return None
    source = config["runs"] if experiment.mode == "raw" else config["scores"]
    path = ledger_path(source)
    runs = current_runs(experiment, sha256)
    options = options_of(config)
    return looks_of(
        path, runs, plan_of(config), shown_as=portable_path(path), options=options
    ), runs


def looks_seen(found: tuple[Looks, list[CurrentRun]] | None) -> dict[str, object]:
    """The report's parameter: where the looks come from, the ledger's path, the look this run
    is and, from the second look on, what changed since the last look: the runs each system
    gained at it (``added``: system -> count) and the options that differ from those the last
    look was analysed with (``changed``: [dotted key, value then, value now], values as JSON,
    '' where unset; only where the ledger recorded them). It does not say whether the ledger
    exists yet: a completed run writes it, and the next invocation must find the report's
    parameters as they were (the runs and the options of the look before the current one are
    the same before and after the current look is recorded)."""
    if found is None:
        return {"source": DECLARED_LOOKS}
    looks, runs = found
    seen: dict[str, object] = {"source": RECORDED_LOOKS, "path": looks.path, "look": looks.current}
    if looks.current >= 2:
        added: dict[str, int] = {}
        for run in runs:
            if looks.of_run.get(run.run) == looks.current:
                added[run.system] = added.get(run.system, 0) + 1
        seen["added"] = added
        then, now = looks.options_at.get(looks.current - 1), looks.options
        if then and now:
            seen["changed"] = [
                [key, then.get(key, ""), now.get(key, "")]
                for key in sorted(set(then) | set(now))
                if then.get(key) != now.get(key)
            ]
    return seen


def record_looks(
    found: tuple[Looks, list[CurrentRun]] | None,
    path: str | Path,
    verdicts: str | Path,
    verdicts_before: list[int] | None,
) -> str:
    """Append the pending runs to the ledger at ``path`` when a run completes and wrote the
    tables verdicts are read from (``verdicts``, whose :func:`file_state` was
    ``verdicts_before`` when the run started): a run that only scored, or stopped short of the
    decisions, showed no verdict and is no look. What was done, for the log ('' when nothing)."""
    if found is None:
        return ""
    looks, runs = found
    if not looks.pending or file_state(verdicts) in (None, verdicts_before):
        return ""
    stamp = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    try:
        added = append_look(path, {r.run: r for r in runs}, looks, stamp)
    except OSError as err:
        return (
            f"infrepro: the look ledger {path} could not be written ({err}); the next run "
            "counts these runs as a new look again"
        )
    return f"infrepro: look {looks.current} recorded in {looks.path} ({added} new runs)"
