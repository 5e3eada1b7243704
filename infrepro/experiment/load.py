"""Load a validated configuration into an :class:`Experiment`, checking every input up front.

All checks run before any job starts, so bad input fails fast with a message that names the file,
line or column, and leaves no result behind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from infrepro.core.catalog import BETTER as DEFAULT_BETTER
from infrepro.core.catalog import KNOWN_METRICS, RAW, Scale
from infrepro.core.vocabulary import (
    BIN_SUFFIX,
    DEV_SCORE,
    LOOK,
    RESERVED,
    RESIDUAL,
    RUN,
    SEGMENT,
    SOURCE,
    SYSTEM,
    file_stem,
)
from infrepro.experiment.record import Experiment
from infrepro.io.errors import InputError, plural
from infrepro.io.hypotheses import read_hypotheses
from infrepro.io.names import character_problem, difference, lookalike_problem, name_key, spelling
from infrepro.io.options import (
    check_analysis_options,
    check_look_options,
    check_property_options,
    check_report_options,
)
from infrepro.io.pattern import DEV_OPTION, RunMatch, derive_runs, find_runs, runs_pattern
from infrepro.io.properties import property_values
from infrepro.io.runs import facet_columns, read_runs_sheet, runs_from_sheet
from infrepro.io.scores import ScoresColumns, incomplete_runs, read_scores_table
from infrepro.io.testset import read_testset, reference_columns
from infrepro.io.text import require_file
from infrepro.plumbing.files import file_state

BUILTIN_PROPERTIES = ("length", "readability", "word_rarity", "word_rarity_sum")


@dataclass
class CheckedInputs:
    """Inputs that passed their check, by path, with the file's state when it was read
    (``plumbing.files.file_state``): hypotheses files with the digest of the segment ids they
    were checked against; test sets with the key of the property checks their values passed
    (:func:`_testset_checks`), their columns and segment ids. ``hypotheses_before``,
    ``testsets_before``: those of earlier checks (kept from one parse to the next,
    ``experiment.kept``); ``hypotheses``, ``testsets``: those this check passed or found as they
    were."""

    hypotheses_before: Mapping[str, Sequence[object]] = field(default_factory=dict)
    hypotheses: dict[str, list[object]] = field(default_factory=dict)
    testsets_before: Mapping[str, Sequence[object]] = field(default_factory=dict)
    testsets: dict[str, list[object]] = field(default_factory=dict)

    def unchanged(self, path: str, state: list[int] | None, segments: str) -> bool:
        """Whether ``path``, now in ``state``, passed against these segments in that state
        (then it counts as passed now too)."""
        passed = self.hypotheses_before.get(path)
        if state is None or passed is None or list(passed) != [*state, segments]:
            return False
        self.passed(path, state, segments)
        return True

    def passed(self, path: str, state: list[int] | None, segments: str) -> None:
        """Record that ``path``, in ``state`` when it was read, passed its check."""
        if state is not None:
            self.hypotheses[path] = [*state, segments]

    def testset(self, path: str, state: list[int] | None, checks: str) -> KeptTestset | None:
        """The columns and segment ids of the test set at ``path`` when it passed these
        ``checks`` in this ``state`` (then it counts as passed now too), else None."""
        passed = self.testsets_before.get(path)
        if state is None or not isinstance(passed, Sequence) or len(passed) != len(state) + 3:
            return None
        *kept_state, kept_checks, columns, segments = passed
        if kept_state != state or kept_checks != checks:
            return None
        if not (_strings(columns) and _strings(segments)):
            return None
        found = KeptTestset(list(columns), list(segments))
        self.testset_passed(path, state, checks, found)
        return found

    def testset_passed(
        self, path: str, state: list[int] | None, checks: str, testset: KeptTestset
    ) -> None:
        """Record that the test set at ``path``, in ``state`` when it was read, passed."""
        if state is not None:
            self.testsets[path] = [*state, checks, testset.columns, testset.segment_ids]


@dataclass(frozen=True)
class KeptTestset:
    """What the checks after the test set's own need of it: its columns and segment ids."""

    columns: list[str]
    segment_ids: list[str]


def _strings(values: object) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def _testset_checks(config: Mapping[str, Any], properties: Sequence[str]) -> str:
    """The key of the checks of a test set's values that depend on the config: the user
    properties (numeric or categorical) read from its columns."""
    own = [p for p in properties if p not in BUILTIN_PROPERTIES]
    return repr((own, sorted(_categorical(config))))


def segments_digest(segment_ids: Sequence[str]) -> str:
    """A digest of the test set's segment ids, in order (what a hypotheses file is checked
    against)."""
    return hashlib.blake2b("\n".join(segment_ids).encode(), digest_size=16).hexdigest()


def load_experiment(
    config: Mapping[str, Any],
    *,
    check_hypotheses: bool = True,
    checked: CheckedInputs | None = None,
    matches: list[RunMatch] | None = None,
) -> Experiment:
    """Validate the inputs a config names and describe the experiment.

    ``check_hypotheses`` reads every hypotheses file to check encoding and line count, except
    those ``checked`` says passed before and are unchanged (a run's new seeds: only their files
    are read); it records in ``checked`` the files that pass. ``matches``: the files a runs
    pattern matches, when the caller has found them (else they are found here).
    """
    if "scores" in config:
        return _load_scores_mode(config)
    return _load_raw_mode(
        config, check_hypotheses=check_hypotheses, checked=checked, matches=matches
    )


def _load_raw_mode(
    config: Mapping[str, Any],
    *,
    check_hypotheses: bool,
    checked: CheckedInputs | None,
    matches: list[RunMatch] | None,
) -> Experiment:
    _scale(config, [])  # infrepro's own metrics are fractions
    testset_path = Path(config["testset"])
    runs_path = Path(config["runs"])
    properties = list(config["properties"])
    checked = checked if checked is not None else CheckedInputs()
    pattern = runs_pattern(config)
    _check_runs_form(config, pattern is not None)
    testset = _checked_testset(testset_path, config, properties, checked)
    looks = config.get("look_column")
    check_look_options(config["analyses"], look_column=looks, source="look_column", raw_mode=True)
    derived_sheet: list[list[str | float]] = []
    if pattern is None:
        runs = read_runs_sheet(runs_path, look_column=looks)
        source, runs_inputs = str(runs_path), [str(runs_path)]
        dev_source = f"{runs_path} column '{DEV_SCORE}'"
    else:
        found = matches if matches is not None else find_runs(pattern)
        derived = derive_runs(pattern, found, config.get(DEV_OPTION))
        derived_sheet = derived.sheet()
        runs = runs_from_sheet(derived_sheet)
        source, runs_inputs = pattern.label, list(derived.dev_files)
        dev_source = f"{DEV_OPTION} {config.get(DEV_OPTION)!r}"
    metrics = list(config["metrics"])
    for metric in metrics:
        if metric not in KNOWN_METRICS:
            raise InputError(
                None, f"unknown metric '{metric}'; choose from {', '.join(KNOWN_METRICS)}"
            )
    facets = facet_columns(runs, looks=looks is not None)
    _check_names(facets, metrics, properties, source)
    systems = _check_baseline(config["baseline"], runs[SYSTEM], source)
    if check_hypotheses:
        segment_ids = testset.segment_ids
        segments = segments_digest(segment_ids)
        for path in map(str, runs["hypotheses"]):
            state = file_state(path)  # before the read: a file changed meanwhile is read again
            if checked.unchanged(path, state, segments):
                continue
            read_hypotheses(path, segment_ids)
            checked.passed(path, state, segments)
    inputs = [str(testset_path), *runs_inputs, *map(str, runs["hypotheses"])]
    rarity = config["property_options"]["rarity_corpus"]
    if rarity:
        require_file(rarity, "rarity frequency corpus")
        inputs.append(str(rarity))
    user_properties = [p for p in properties if p not in BUILTIN_PROPERTIES]
    has_dev = DEV_SCORE in runs and bool(runs[DEV_SCORE].notna().any())
    _check_options(config, properties, user_properties, facets, systems, runs, has_dev, dev_source)
    experiment = _experiment(config, "raw", (metrics, properties, facets), systems, runs, inputs)
    return replace(experiment, derived_sheet=derived_sheet)


def _check_runs_form(config: Mapping[str, Any], pattern: bool) -> None:
    """The options that belong to one form of ``runs`` only: ``look_column`` to a runs sheet,
    ``runs_dev_scores`` to a pattern."""
    if pattern and config.get("look_column") is not None:
        raise InputError(
            None,
            f"look_column names a column of a runs sheet, but runs {config['runs']!r} is a "
            "pattern: its looks are the reruns the look ledger records (docs/reference.md, "
            "Inputs); remove look_column, or list the runs in a runs sheet with that column",
        )
    if not pattern and config.get(DEV_OPTION) is not None:
        raise InputError(
            None,
            f"{DEV_OPTION} gives the dev-score files of a runs pattern, but runs "
            f"{config['runs']!r} is a runs sheet: give its dev scores in its column "
            f"'{DEV_SCORE}', and remove {DEV_OPTION}",
        )


def _load_scores_mode(config: Mapping[str, Any]) -> Experiment:
    if config.get(DEV_OPTION) is not None:
        raise InputError(
            None,
            f"{DEV_OPTION} gives the dev-score files of a runs pattern (raw mode); in scores mode "
            "the dev score is a column of the scores file: give it as columns.dev_score",
        )
    if config.get("look_column") is not None:
        raise InputError(
            None,
            "look_column names a column of the runs sheet (raw mode); in scores mode the look "
            "column is a column of the scores file: give it as columns.look",
        )
    columns = ScoresColumns.from_config(config["columns"])
    check_look_options(
        config["analyses"], look_column=columns.look, source="columns.look", raw_mode=False
    )
    scale = _scale(config, list(columns.metrics))
    table = read_scores_table(
        config["scores"], columns, categorical=_categorical(config), scale=scale
    )
    kept = [RUN, SYSTEM, *columns.facets, *([LOOK] if columns.look else [])]
    runs = table[kept].drop_duplicates(RUN).reset_index(drop=True)
    if columns.dev_score:
        runs["dev_score"] = table.drop_duplicates(RUN)["dev_score"].to_numpy()
    systems = _check_baseline(config["baseline"], runs[SYSTEM], config["scores"])
    lacking = incomplete_runs(table)
    if lacking and config["incomplete_runs"] == "reject":
        shown = ", ".join(
            f"{run} lacks {plural(n, 'segment')}" for run, n in list(lacking.items())[:5]
        )
        more = f" and {len(lacking) - 5} more" if len(lacking) > 5 else ""
        raise InputError(
            config["scores"],
            f"{plural(len(lacking), 'run is', 'runs are')} incomplete "
            f"(of {table[SEGMENT].nunique()} segments): {shown}{more}; "
            "complete them, or set incomplete_runs: admit to analyse them anyway",
        )
    metrics = list(columns.metrics)
    properties = list(columns.properties)
    source = f"{config['scores']} column '{columns.dev_score}'"
    _check_names(list(columns.facets), metrics, properties, config["scores"])
    _check_options(
        config,
        properties,
        properties,
        list(columns.facets),
        systems,
        runs,
        bool(columns.dev_score),
        source,
    )
    names = (metrics, properties, list(columns.facets))
    experiment = _experiment(config, "scores", names, systems, runs, [str(config["scores"])])
    return replace(experiment, scales=scale, run_digests=run_digests(table, metrics))


def run_digests(table: pd.DataFrame, metrics: list[str]) -> dict[str, str]:
    """SHA-256 of each run's scores (its segment ids and metric values, by segment): the content
    the look ledger records for a run of scores mode (docs/method.md §4e.12)."""
    ordered = table[[RUN, SEGMENT, *metrics]].astype({RUN: str, SEGMENT: str})
    ordered = ordered.sort_values([RUN, SEGMENT], kind="stable")
    digests = {}
    for run, rows in ordered.groupby(RUN, sort=False, observed=True):
        digest = hashlib.sha256("\n".join(map(str, rows[SEGMENT])).encode())
        for metric in metrics:
            digest.update(rows[metric].to_numpy(dtype="float64").tobytes())
        digests[str(run)] = digest.hexdigest()
    return digests


def _experiment(
    config: Mapping[str, Any],
    mode: Literal["raw", "scores"],
    names: tuple[list[str], list[str], list[str]],
    systems: list[str],
    runs: pd.DataFrame,
    inputs: list[str],
) -> Experiment:
    """The Experiment of either mode: ``names`` = (metrics, properties, facets); its name,
    baseline and better directions from ``config``."""
    metrics, properties, facets = names
    return Experiment(
        mode=mode,
        name=str(config["experiment"]),
        baseline=str(config["baseline"]),
        metrics=metrics,
        better=_better(config, metrics),
        properties=properties,
        facets=facets,
        systems=systems,
        run_ids=[str(run) for run in runs[RUN]],
        run_systems=[str(system) for system in runs[SYSTEM]],
        hypotheses=(
            {str(r): str(h) for r, h in zip(runs[RUN], runs["hypotheses"], strict=True)}
            if mode == "raw"
            else {}
        ),
        inputs=inputs,
    )


def _categorical(config: Mapping[str, Any]) -> list[str]:
    return list((config.get("property_options") or {}).get("categorical") or [])


def _checked_testset(
    path: Path, config: Mapping[str, Any], properties: list[str], checked: CheckedInputs
) -> KeptTestset:
    """The test set's columns and segment ids, from a kept check when the file is as that check
    found it and its property checks were these; else read and checked (every user property's
    values too)."""
    state = file_state(path)  # before the read: a file changed meanwhile is read again
    checks = _testset_checks(config, properties)
    kept = checked.testset(str(path), state, checks)
    if kept is not None:
        return kept
    frame = read_testset(path)
    columns = [str(c) for c in frame.columns]
    for prop in properties:
        if prop not in BUILTIN_PROPERTIES and prop not in columns:
            own = [c for c in columns if c not in (SEGMENT, SOURCE, *reference_columns(columns))]
            raise InputError(
                None,
                f"properties names '{prop}', which is neither built in "
                f"({', '.join(BUILTIN_PROPERTIES)}) nor a column of the test set {path} "
                f"(its own columns: {', '.join(own) or '(none)'})",
            )
    for prop in properties:  # a user property is a column of the tables (infrepro.io.names)
        problem = None if prop in BUILTIN_PROPERTIES else character_problem(prop)
        if problem is not None:
            raise InputError(path, f"property {spelling(prop)} {problem}", line=1)
    _check_user_properties(config, frame, properties, path)
    testset = KeptTestset(columns, [str(s) for s in frame[SEGMENT]])
    checked.testset_passed(str(path), state, checks, testset)
    return testset


def _check_user_properties(
    config: Mapping[str, Any], testset: pd.DataFrame, properties: list[str], path: Path
) -> None:
    """Refuse a non-finite or huge value of a numeric test-set property before any job runs
    (the properties job types the column the same way: infrepro.io.properties)."""
    categorical = set(_categorical(config))
    segments = list(testset[SEGMENT])
    for prop in properties:
        if prop not in BUILTIN_PROPERTIES:
            property_values(
                testset[prop], prop in categorical, path=path, column=prop, segments=segments
            )


def _check_options(
    config: Mapping[str, Any],
    properties: list[str],
    user_properties: list[str],
    facets: list[str],
    systems: list[str],
    runs: pd.DataFrame,
    has_dev_score: bool,
    dev_score_source: str | Path,
) -> None:
    check_property_options(config["property_options"], properties, user_properties)
    check_analysis_options(
        config["analyses"],
        systems=systems,
        facets=facets,
        has_dev_score=has_dev_score,
        dev_score_source=str(dev_score_source),
        runs=runs,
    )
    check_report_options(config["report"])


def _scale(config: Mapping[str, Any], metrics: list[str]) -> dict[str, Scale]:
    """``scale`` names only metrics of a scores file (raw mode scores fractions itself); a raw
    scale's bounds are increasing."""
    given = dict(config.get("scale") or {})
    for metric in given:
        if metric not in metrics:
            where = (
                f"one of the scores file's metrics ({', '.join(metrics)})"
                if metrics
                else ("a metric of a scores file: raw mode's own metrics are fractions")
            )
            raise InputError(
                None, f"scale.{metric} is set, but '{metric}' is not {where}; remove it"
            )
    scales = {metric: Scale.from_config(value) for metric, value in given.items()}
    for metric, scale in scales.items():
        if scale.name == RAW and not scale.low < scale.high:  # type: ignore[operator]
            raise InputError(
                None,
                f"scale.{metric}.raw is [{scale.low:g}, {scale.high:g}]; give the lowest and "
                "the highest score the scale allows, lowest first",
            )
    return scales


def _better(config: Mapping[str, Any], metrics: list[str]) -> dict[str, str]:
    given = dict(config.get("better", {}) or {})
    for metric in given:
        if metric not in metrics:
            raise InputError(
                None,
                f"better.{metric} is set, but '{metric}' is not one of the experiment's metrics "
                f"({', '.join(metrics)}); remove it or check its spelling",
            )
    result: dict[str, str] = {}
    for metric in metrics:
        direction = given.get(metric, DEFAULT_BETTER.get(metric))
        if direction is None:
            raise InputError(
                None,
                f"metric '{metric}' is not a known metric, so 'better: {{{metric}: lower|higher}}' "
                "must say which direction is better",
            )
        result[metric] = direction
    return result


def _check_baseline(baseline: str, systems: pd.Series, path: str | Path) -> list[str]:
    names = sorted(set(map(str, systems)))
    if str(baseline) not in names:
        twin = next((n for n in names if name_key(n) == name_key(str(baseline))), None)
        if twin is not None:  # the same name in another normal form, or with invisible text
            raise InputError(
                path,
                lookalike_problem(
                    f"baseline {spelling(str(baseline))}",
                    f"system {spelling(twin)}",
                    difference(str(baseline), twin),
                ),
                column=SYSTEM,
            )
        raise InputError(
            path,
            f"baseline {spelling(str(baseline))} names no system; systems found: "
            f"{', '.join(names)}",
            column=SYSTEM,
        )
    return [str(baseline)] + [n for n in names if n != str(baseline)]


def _check_names(
    facets: list[str], metrics: list[str], properties: list[str], path: str | Path
) -> None:
    """Facet, metric and property names become columns of one table: they must differ from each
    other, from the reserved columns and from the ``<property>_bin`` columns binning adds."""
    roles = [("facet", facets), ("metric", metrics), ("property", properties)]
    seen: dict[str, str] = {}
    looks: dict[str, tuple[str, str]] = {}  # name_key -> (role, spelling): lookalikes refused
    for role, names in roles:
        for name in names:
            other_role, other = looks.setdefault(name_key(name), (role, name))
            if other != name:
                raise InputError(
                    path,
                    lookalike_problem(
                        f"{role} {spelling(name)}",
                        f"{other_role} {spelling(other)}",
                        difference(name, other),
                    ),
                )
            if name in RESERVED:
                raise InputError(
                    path,
                    f"{role} '{name}' has the name of a column infrepro reserves "
                    f"({', '.join(RESERVED)}); rename it",
                )
            if name in seen:
                raise InputError(
                    path, f"{role} '{name}' clashes with a {seen[name]} of the same name"
                )
            if role == "facet" and name == RESIDUAL:
                raise InputError(
                    path,
                    f"facet '{name}' has the name of the model residual, which the variance "
                    "tables list beside the facets and could not tell apart; rename it",
                )
            seen[name] = role
    stems: dict[str, str] = {}
    for metric in metrics:  # a metric's files are named by its stem, compared without case
        other = stems.setdefault(file_stem(metric).casefold(), metric)
        if other != metric:
            raise InputError(
                path,
                f"metrics '{other}' and '{metric}' would share the file name "
                f"'{file_stem(metric)}' (on a case-insensitive file system); rename one",
            )
    for prop in properties:
        binned = prop + BIN_SUFFIX
        if binned in seen:
            raise InputError(
                path,
                f"{seen[binned]} '{binned}' clashes with the binned version of property "
                f"'{prop}' (named '{binned}'); rename it",
            )
