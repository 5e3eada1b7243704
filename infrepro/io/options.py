"""Checks of the config's options that the schema cannot express, run before any job.

The schema checks types and ranges; these checks need the experiment (its properties, facets
and systems) or relations between options. Each error names the option, the value and what is
allowed, so a bad option never surfaces later as a traceback inside a job.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from infrepro.core.registry import PLANNING
from infrepro.core.schema import defaults
from infrepro.core.vocabulary import SEGMENT, SYSTEM
from infrepro.io.errors import InputError, plural

if TYPE_CHECKING:  # the config checks run on every parse, before pandas is needed
    import pandas as pd

MAX_CONFIG_VALUES = 100_000  # far above any real config; a YAML alias bomb expands far beyond


def check_config_size(config: Mapping[str, Any]) -> None:
    """Reject a config that expands to more than ``MAX_CONFIG_VALUES`` values.

    YAML aliases share one object, so a few lines can stand for billions of values; the schema
    check (and its error message, which prints the value) would then never finish. Sizes are
    counted once per distinct object, so this check is fast on exactly such configs.
    """
    sizes: dict[int, int] = {}

    def size(value: object) -> int:
        if isinstance(value, Mapping):
            children: Sequence[object] = list(value.values())
        elif isinstance(value, list | tuple):
            children = value
        else:
            return 1
        key = id(value)
        if key not in sizes:
            sizes[key] = 1 + sum(size(child) for child in children)
        return sizes[key]

    total = size(config)
    if total > MAX_CONFIG_VALUES:
        raise InputError(
            None,
            f"the config expands to {total:,} values (more than {MAX_CONFIG_VALUES:,}); "
            "are YAML aliases (*name) repeating a large value?",
        )


def _listing(names: Sequence[str]) -> str:
    return ", ".join(map(str, names)) if names else "(none)"


def check_property_options(
    options: Mapping[str, Any],
    properties: Sequence[str],
    user_properties: Sequence[str],
) -> None:
    """``property_options``: bins and labels name computed properties and fit each other.

    ``properties`` are the computed properties; ``user_properties`` those that come from the
    user's data (the only ones ``categorical`` can apply to).
    """
    cuts: Mapping[str, Sequence[float]] = options.get("bins", {}) or {}
    labels: Mapping[str, Sequence[str]] = options.get("bin_labels", {}) or {}
    categorical: Sequence[str] = options.get("categorical", []) or []
    for name in categorical:
        if name not in user_properties:
            raise InputError(
                None,
                f"property_options.categorical names '{name}', which is not one of the "
                f"experiment's own property columns ({_listing(user_properties)})",
            )
    for option, mapping in (("bins", cuts), ("bin_labels", labels)):
        for name in mapping:
            if name not in properties:
                raise InputError(
                    None,
                    f"property_options.{option} names '{name}', which is not a computed "
                    f"property (properties: {_listing(properties)})",
                )
            if name in categorical:
                raise InputError(
                    None,
                    f"property_options.{option} names '{name}', which property_options."
                    "categorical declares categorical: categories are not binned",
                )
    for name, points in cuts.items():
        values = [float(p) for p in points]
        if any(b <= a for a, b in zip(values, values[1:], strict=False)):
            raise InputError(
                None,
                f"property_options.bins.{name} is {list(points)}; cut points must be strictly "
                "increasing",
            )
    n_bins = int(options["n_bins"])
    for name, names in labels.items():
        needed = len(cuts[name]) + 1 if name in cuts else n_bins
        source = (
            f"property_options.bins.{name} has {plural(len(cuts[name]), 'cut point')}"
            if name in cuts
            else f"property_options.n_bins is {n_bins}"
        )
        if len(names) != needed:
            raise InputError(
                None,
                f"property_options.bin_labels.{name} has {plural(len(names), 'label')} "
                f"{list(names)}, but there are {plural(needed, 'bin')} ({source}); "
                f"give {needed} labels",
            )
        if len(set(names)) != len(names):
            raise InputError(
                None, f"property_options.bin_labels.{name} is {list(names)}; labels must differ"
            )


def check_analysis_options(
    options: Mapping[str, Any],
    *,
    systems: Sequence[str],
    facets: Sequence[str],
    has_dev_score: bool,
    dev_score_source: str,
    runs: pd.DataFrame | None = None,
) -> None:
    """``analyses``: facets and interaction terms name real systems and facets; a dev score has
    a stated direction (one dev score serves every metric, so no metric's direction applies).

    With ``runs`` (one row per run: system and facet columns), a facet chosen for a system must
    take two or more levels among that system's runs: a variance component needs them.
    """
    chosen: Mapping[str, Sequence[str]] = options.get("facets", {}) or {}
    for system, names in chosen.items():
        if system not in systems:
            raise InputError(
                None,
                f"analyses.facets names system '{system}', which is not in the runs "
                f"(systems: {_listing(systems)})",
            )
        for name in names:
            _check_facet_name(f"analyses.facets.{system}", name, facets)
            if runs is not None:
                _check_facet_levels(runs, system, name)
    for name in options.get("metaparam_facets", []) or []:
        _check_facet_name("analyses.metaparam_facets", name, facets)
    retraining = list(options.get("retraining_facets", []) or [])
    if retraining != defaults("analyses")["retraining_facets"]:  # the default: seeds if any
        for name in retraining:
            _check_facet_name("analyses.retraining_facets", name, facets)
    for term in options.get("vca_interactions", []) or []:
        _check_interaction(str(term), facets)
    _check_max_runs((options.get("sequential") or {}).get("max_runs"), systems)
    if has_dev_score and options.get("dev_score_better") is None:
        raise InputError(
            None,
            f"the runs have a dev score ({dev_score_source}), so analyses.dev_score_better is "
            "required: lower or higher (one dev score selects the best run for every metric, "
            "so no metric's direction can stand in for it)",
        )


def check_look_options(
    options: Mapping[str, Any], *, look_column: str | None, source: str, raw_mode: bool
) -> None:
    """``analyses.sequential`` against the look column (``look_column`` in raw mode,
    ``columns.look`` in scores mode; ``source`` names the option that names it, None: no
    looks), before the runs are read:

    - futility is advice at ``planning.min_effect``: without one it could never act;
    - without a look column a plan applies to the looks the ledger records (docs/method.md
      §4e.12), so it is never ignored;
    - in raw mode, where every other column of the runs sheet is a facet, a look column that
      a facet option names (``retraining_facets``' default ``[seed]`` included) would silently
      take that facet out of every model.
    """
    sequential: Mapping[str, Any] = options.get("sequential") or {}
    futility = sequential.get("futility")
    if futility is not None and (options.get(PLANNING) or {}).get("min_effect") is None:
        raise InputError(
            None,
            f"analyses.sequential.futility is {futility}, a threshold on conditional power at "
            "the minimum effect of interest, but analyses.planning.min_effect is not set, so "
            "the futility advice could never be given; set analyses.planning.min_effect (in "
            "points) or remove analyses.sequential.futility",
        )
    if look_column is None:  # the plan applies to the looks the ledger records (§4e.12)
        return
    if raw_mode:
        _check_look_not_facet(options, look_column, source)


def _check_look_not_facet(options: Mapping[str, Any], look: str, source: str) -> None:
    """A raw-mode look column is no facet (docs/method.md §4e.1); refused when a facet option
    names it, ``retraining_facets``' default included (the seed: the retraining SD)."""
    retraining = list(options.get("retraining_facets", []) or [])
    naming = [("analyses.retraining_facets", retraining)]
    naming.append(("analyses.metaparam_facets", list(options.get("metaparam_facets") or [])))
    for system, names in (options.get("facets") or {}).items():
        naming.append((f"analyses.facets.{system}", list(names)))
    terms = [str(t).replace("/", ":").split(":") for t in options.get("vca_interactions") or []]
    naming.append(("analyses.vca_interactions", [part for term in terms for part in term]))
    for option, names in naming:
        if look not in names:
            continue
        default = retraining == defaults("analyses")["retraining_facets"]
        why = (
            f" (by default {retraining}: the random seeds a retraining draws anew, whose "
            "variance is the retraining SD)"
            if option == "analyses.retraining_facets" and default
            else ""
        )
        raise InputError(
            None,
            f"{source} names '{look}', but {option} names it as a facet{why}; the look "
            "column is no facet (it enters no model, docs/method.md §4e.1), so the analysis "
            f"would silently lose that facet: give the batches a column of their own (e.g. "
            f"batch: 1, 1, 2, ...) and name that in {source}",
        )


def _check_max_runs(max_runs: object, systems: Sequence[str]) -> None:
    """``analyses.sequential.max_runs`` as a mapping names every system and no other: a plan
    declares each system's maximum (docs/method.md §4e.2)."""
    if not isinstance(max_runs, Mapping):
        return
    for name in max_runs:
        if name not in systems:
            raise InputError(
                None,
                f"analyses.sequential.max_runs names system '{name}', which is not in the runs "
                f"(systems: {_listing(systems)})",
            )
    missing = [s for s in systems if s not in max_runs]
    if missing:
        raise InputError(
            None,
            f"analyses.sequential.max_runs gives no maximum for {', '.join(missing)}; name "
            "every system, or give one number for all",
        )


def _check_facet_name(option: str, name: str, facets: Sequence[str]) -> None:
    if name not in facets:
        raise InputError(
            None,
            f"{option} names facet '{name}', which the runs do not have "
            f"(facets: {_listing(facets)})",
        )


def _check_facet_levels(runs: pd.DataFrame, system: str, facet: str) -> None:
    values = runs.loc[runs[SYSTEM].astype(str) == system, facet].dropna()
    levels = sorted(set(map(str, values)))
    if len(levels) < 2:
        found = f"one level ('{levels[0]}')" if levels else "no value"
        raise InputError(
            None,
            f"analyses.facets.{system} names facet '{facet}', which has {found} among "
            f"{system}'s runs; a variance component needs two or more levels",
        )


def _check_interaction(term: str, facets: Sequence[str]) -> None:
    """A term joins different names, each segment_id or a facet, with ':' (or '/'); a facet
    whose name holds ':' or '/' makes a term that names it ambiguous, so it is refused."""
    joining = [f for f in facets if (":" in f or "/" in f) and f in term]
    if joining:
        raise InputError(
            None,
            f"analyses.vca_interactions has '{term}', which names facet '{joining[0]}'; that "
            "name holds ':' or '/', which join the names of a term, so the term is ambiguous: "
            "rename the facet (without ':' and '/') to use it in an interaction",
        )
    parts = term.replace("/", ":").split(":")
    allowed = [SEGMENT, *facets]
    unknown = [p for p in parts if p not in allowed]
    repeated = sorted({p for p in parts if parts.count(p) > 1})
    if len(parts) < 2 or unknown or repeated:
        if unknown:
            problem = f"'{unknown[0]}' is neither {SEGMENT} nor a facet"
        elif repeated:
            problem = f"'{repeated[0]}' appears twice; a term joins different names"
        else:
            problem = "a term joins two or more names with ':'"
        raise InputError(
            None,
            f"analyses.vca_interactions has '{term}': {problem} "
            f"(allowed names: {_listing(allowed)})",
        )


def check_report_options(options: Mapping[str, Any]) -> None:
    """``report.date`` is text (or a YAML date or number, shown as written)."""
    date = options.get("date")
    if date is not None and (
        isinstance(date, bool) or not isinstance(date, str | int | float | datetime.date)
    ):
        raise InputError(
            None,
            f"report.date is a {type(date).__name__} ({date!r}); it must be text such as "
            "\"2026-11-26\" or 'November 2026'",
        )
