"""Simulate experiments as evaluation tables with known truth, for calibration and validity checks.

A design (:class:`Design`) and a seed give an evaluation table, a runs table and the true
parameters (:class:`Truth`), in the layout the analyses read (``run_id``, ``system``, facet
columns, ``segment_id``, the property, the metric). The scores follow a linear mixed model::

    y[r, s] = intercept + effect[k]                          (system k of run r, fixed)
              + sum_f a_f[k, level_f(r)]                     (facet level effects)
              + c[r]                                         (run offset, N(0, run_sd[k]^2))
              + u[s]                                         (segment, N(0, segment_sd^2))
              + (slope + slope[k] + sum_f b_f[level_f(r)] + g[r]) * (d[s] - property_mean)
              + e[r, s]                                      (residual, N(0, residual_sd^2))

- Facets are crossed: a system's runs are the cells of the grid of its facets' levels (a system
  without facets has one run). Random facet effects ``a_f ~ N(0, sd_f^2)`` are drawn per system
  (seed 3 of the baseline is not seed 3 of the competitor); fixed facet effects are given per
  level and shared by all systems. ``run_sd`` adds an offset of its own to every run: the
  highest-order facet interaction, i.e. run-to-run variance beyond the facets.
- ``d`` is a numeric data property of the segment, ``N(property_mean, property_sd^2)``.
  ``slope[k]`` is a system x property interaction, ``b_f`` a facet x property interaction,
  ``g[r] ~ N(0, slope_sd[k]^2)`` a run's own random slope (lme4's ``(0 + d | run_id)``): runs of
  the same system differ in how they react to the property, with no system x property effect.
- Unbalanced designs: per-system facet sets and level counts, a share of grid cells (runs)
  dropped at random (``missing_runs``) and a share of (run, segment) rows (``missing_rows``).
- Optional dev scores: a run's true mean quality plus ``N(0, dev_sd^2)`` noise, so the best
  run by dev score is realistic but not necessarily the best on test (seed 002, section 6).

Every random draw comes from its own child of ``numpy.random.SeedSequence(seed)``: the same
design and seed give identical tables, and e.g. changing ``missing_rows`` leaves the effects
unchanged. :func:`a_vs_a` builds the A-vs-A design of seed 002 (two identical systems).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.variance import Spread, spread_sds
from infrepro.core.vocabulary import RUN, SEGMENT, SYSTEM, VARIANCE_COLUMN

RESIDUAL = "Residual"
STREAMS = (
    "segments",
    "property",
    "facets",
    "runs",
    "missing_runs",
    "missing_rows",
    "residual",
    "dev",
    "run_slopes",  # last: adding it left every earlier stream (and old experiments) unchanged
)

# Run-to-run variation of a real experiment: thesis Table 4.4 (BART+R3F on CNN/DailyMail,
# Rouge-1, stored fraction scale): summaries 0.00923, random seed 0.00012, residual 0.00464.
REAL_SEGMENT_SD = 0.096
REAL_RUN_SD = 0.011
REAL_RESIDUAL_SD = 0.068


@dataclass(frozen=True)
class Facet:
    """A meta-parameter whose levels are crossed with the other facets of a system's runs.

    ``sd``: SD of random level effects, drawn per system. ``effects``: fixed level effects
    instead (one per level, shared by all systems); ``property_slopes``: facet x property slopes
    per level (fixed, shared).
    """

    name: str
    levels: int
    sd: float = 0.0
    effects: tuple[float, ...] | None = None
    property_slopes: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.levels < 1:
            raise ValueError(f"facet {self.name!r} needs at least one level")
        for label, values in (("effects", self.effects), ("property_slopes", self.property_slopes)):
            if values is not None and len(values) < self.levels:
                raise ValueError(f"facet {self.name!r}: {label} needs one value per level")

    @property
    def is_random(self) -> bool:
        return self.effects is None


@dataclass(frozen=True)
class System:
    """A system: its fixed effect, the facets it varies, its run-to-run SD and property slope.

    ``facets=None`` means every facet of the design; ``levels`` overrides a facet's number of
    levels for this system (e.g. 18 baseline seeds against 5 competitor seeds). ``slope_sd``:
    SD of every run's own random slope on the property (per run, mean zero).
    """

    name: str
    effect: float = 0.0
    facets: tuple[str, ...] | None = None
    levels: Mapping[str, int] = field(default_factory=dict)
    run_sd: float = 0.0
    property_slope: float = 0.0
    slope_sd: float = 0.0


@dataclass(frozen=True)
class Design:
    """An experiment: systems, facets, segments, the property and the noise.

    ``missing_runs`` drops that share of every system's grid cells (keeping at least two runs),
    ``missing_rows`` that share of (run, segment) rows (keeping at least one row per run).
    ``dev_sd=None`` gives runs without dev scores. Higher scores are better.
    """

    systems: tuple[System, ...]
    facets: tuple[Facet, ...] = ()
    n_segments: int = 200
    intercept: float = 0.5
    segment_sd: float = REAL_SEGMENT_SD
    residual_sd: float = REAL_RESIDUAL_SD
    property_name: str = "length"
    property_mean: float = 20.0
    property_sd: float = 8.0
    property_slope: float = 0.0
    missing_runs: float = 0.0
    missing_rows: float = 0.0
    dev_sd: float | None = None
    metric: str = "score"

    def __post_init__(self) -> None:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names) or not names:
            raise ValueError("systems need distinct names, and there must be at least one")
        known = {f.name for f in self.facets}
        reserved = {SEGMENT, RUN, SYSTEM, self.metric, self.property_name, "dev_score"}
        if known & reserved:
            raise ValueError(f"facet names {sorted(known & reserved)} clash with columns")
        for system in self.systems:
            unknown = set(system.facets or ()) | set(system.levels)
            if unknown - known:
                raise ValueError(f"system {system.name!r} uses unknown facets {unknown - known}")
        if not 0 <= self.missing_runs < 1 or not 0 <= self.missing_rows < 1:
            raise ValueError("missing_runs and missing_rows are shares in [0, 1)")
        if self.n_segments < 2:
            raise ValueError("at least two segments are needed")

    def facets_of(self, system: System) -> list[Facet]:
        """The facets a system varies, in design order."""
        chosen = system.facets
        return [f for f in self.facets if chosen is None or f.name in chosen]

    def n_levels(self, system: System, facet: Facet) -> int:
        return int(system.levels.get(facet.name, facet.levels))


@dataclass(frozen=True)
class Truth:
    """The parameters the simulation was drawn from, and the realised random effects.

    - ``system_means``: intercept + system effect + mean fixed facet effect over the system's
      design grid (before dropping cells): the population mean score at the property mean.
    - ``realised_means``: the noise-free mean score of the system's realised runs on these
      segments: their random facet effects and run offsets, the mean segment effect and the
      slope times the sample's mean centred property included. With complete rows it is what
      the system's mean over all its runs estimates (the target conditional on these runs and
      segments); differences of it are what the paper's all-runs comparison estimates.
    - ``variance_components``: per system, the population components of the VCA model
      ``metric ~ 1 + (1|segment_id) + (1|f) + ...`` (random facets; fixed facets as the
      variance of their level effects, ddof=1), the run offsets as the run term ``run_id``
      (the highest-order crossing of the system's facets; added to the facet when the system
      has a single facet, whose levels are then the runs) and the residual. With property
      slopes, the
      segment component includes slope^2 * property_sd^2, and slope variation across runs
      (fixed facet slopes and random run slopes, ``slope_sd^2``) is counted in the residual.
    - ``phi``: segment / total of those components (docs/method.md §4.4).
    - ``property_slopes``: per system, its mean slope over the design grid (population: random
      run slopes have mean zero and are not included).
    - ``effects``: realised effects (kind, system, facet, level, value).
    """

    system_means: dict[str, float]
    realised_means: dict[str, float]
    variance_components: pd.DataFrame
    phi: dict[str, float]
    property_slopes: dict[str, float]
    effects: pd.DataFrame

    def difference(self, first: str, second: str, realised: bool = False) -> float:
        """first - second of the (realised) system means: the sign convention of contrasts."""
        means = self.realised_means if realised else self.system_means
        return means[first] - means[second]

    def components(self, system: str) -> pd.Series:
        """A system's true variance components, indexed like an LmmResult's."""
        table = self.variance_components
        rows = table[table[SYSTEM] == system]
        return pd.Series(rows[VARIANCE_COLUMN].to_numpy(), index=rows["component"].to_list())

    def spread(self, system: str, n_segments: int, retraining: Sequence[str] = ("seed",)) -> Spread:
        """The true SDs of a run's mean over ``n_segments`` segments, in points, split as the
        run-aware VCA splits them (docs/method.md §4.4): retraining the same recipe (the run
        term, the residual / N and the ``retraining`` facets) and choosing the setting."""
        return spread_sds(self.components(system), n_segments, retraining)


@dataclass(frozen=True)
class Simulation:
    """A simulated experiment: evaluation table, runs table, truth and the design."""

    evaluation: pd.DataFrame
    runs: pd.DataFrame
    truth: Truth
    design: Design

    def metric_data(
        self, baseline: str | None = None, options: Mapping[str, object] | None = None
    ) -> MetricData:
        """The analyses' view of this experiment (the baseline defaults to the first system)."""
        design = self.design
        facets = [f.name for f in design.facets]
        return MetricData(
            metric=design.metric,
            better="higher",
            baseline=baseline or design.systems[0].name,
            evaluation=self.evaluation,
            runs=self.runs,
            facets=facets,
            properties=[design.property_name],
            options=dict(options or {}),
        )


def named_streams(names: Sequence[str], seed: int) -> dict[str, np.random.Generator]:
    """One generator per name, each from its own child of ``SeedSequence(seed)``: adding draws
    to one stream leaves every other stream's draws unchanged."""
    children = np.random.SeedSequence(seed).spawn(len(names))
    return dict(zip(names, (np.random.default_rng(s) for s in children), strict=True))


def _effect(kind: str, system: str, facet: str, level: str, value: float) -> dict[str, object]:
    """A row of ``Truth.effects``."""
    return {"kind": kind, SYSTEM: system, "facet": facet, "level": level, "value": float(value)}


@dataclass
class _Draws:
    """What drawing the systems accumulates: rows of the runs, effects and true components
    tables, and per system its population mean, realised mean and mean slope."""

    runs: list[dict[str, object]] = field(default_factory=list)
    effects: list[dict[str, object]] = field(default_factory=list)
    components: list[dict[str, object]] = field(default_factory=list)
    system_means: dict[str, float] = field(default_factory=dict)
    realised_means: dict[str, float] = field(default_factory=dict)
    slopes: dict[str, float] = field(default_factory=dict)


def _cell_values(
    base: float,
    per_level: Sequence[np.ndarray],
    grid: Sequence[tuple[int, ...]],
    included: Sequence[bool] | None = None,
) -> np.ndarray:
    """Per design cell: base + sum_j per_level[j][level of facet j] (facets not ``included``
    add 0)."""
    use = list(included) if included is not None else [True] * len(per_level)
    return np.array(
        [
            base + sum(per_level[j][cell[j]] if use[j] else 0.0 for j in range(len(per_level)))
            for cell in grid
        ]
    )


def _draw_system(
    design: Design,
    system: System,
    streams: Mapping[str, np.random.Generator],
    segments: tuple[np.ndarray, np.ndarray],
    draws: _Draws,
) -> None:
    """One system's facet effects, runs (the kept cells of its design grid) and truth.

    A run's noise-free score is quality + offset + mean segment effect + slope * mean(d_c),
    quality = intercept + system effect + its facet level effects, offset ~ N(0, run_sd^2),
    slope = fixed slope + N(0, slope_sd^2)."""
    segment_effects, centred = segments
    facets = design.facets_of(system)
    levels = [design.n_levels(system, f) for f in facets]
    level_effects, level_slopes = _facet_effects(design, system, facets, levels, streams)
    for facet, values in zip(facets, level_effects, strict=True):
        for i, value in enumerate(values):
            draws.effects.append(_effect("facet", system.name, facet.name, str(i + 1), value))
    grid = list(itertools.product(*[range(n) for n in levels]))
    offsets = streams["runs"].normal(0.0, system.run_sd, len(grid))
    quality = _cell_values(design.intercept + system.effect, level_effects, grid)
    base_slope = design.property_slope + system.property_slope
    fixed_slope = _cell_values(base_slope, level_slopes, grid)
    # drawn for every system (zeros when slope_sd = 0), so one system's slope_sd leaves
    # the other systems' draws unchanged
    slope = fixed_slope + streams["run_slopes"].normal(0.0, system.slope_sd, len(grid))
    fixed_facets = [not f.is_random for f in facets]
    fixed = _cell_values(design.intercept + system.effect, level_effects, grid, fixed_facets)
    draws.system_means[system.name] = float(fixed.mean())
    draws.slopes[system.name] = float(fixed_slope.mean())
    keep = _kept_cells(len(grid), design.missing_runs, streams["missing_runs"])
    noise_free = quality + offsets + segment_effects.mean() + slope * centred.mean()
    draws.realised_means[system.name] = float(noise_free[keep].mean())
    for index in keep:
        cell = grid[index]
        labels = {f.name: str(cell[j] + 1) for j, f in enumerate(facets)}
        run_id = system.name + "".join(f"_{name}{value}" for name, value in labels.items())
        draws.runs.append(
            {
                RUN: run_id,
                SYSTEM: system.name,
                **labels,
                "_quality": quality[index] + offsets[index],
                "_slope": slope[index],
            }
        )
        draws.effects.append(_effect("run", system.name, "", run_id, offsets[index]))
    draws.components += _true_components(design, system, facets, level_effects, fixed_slope)


def _phi(components: pd.DataFrame) -> dict[str, float]:
    """Per system: phi = segment variance / total variance of its true components."""
    phi = {}
    for name, group in components.groupby(SYSTEM, sort=False):
        total = float(group[VARIANCE_COLUMN].sum())
        segment = float(group.loc[group["component"] == SEGMENT, VARIANCE_COLUMN].sum())
        phi[str(name)] = segment / total if total > 0 else float("nan")
    return phi


def simulate(design: Design, seed: int) -> Simulation:
    """Draw one experiment from ``design``; deterministic given ``seed``."""
    streams = named_streams(STREAMS, seed)
    n_seg = design.n_segments
    segment_ids = np.array([f"s{i:05d}" for i in range(n_seg)], dtype=object)
    segment_effects = streams["segments"].normal(0.0, design.segment_sd, n_seg)
    prop = streams["property"].normal(design.property_mean, design.property_sd, n_seg)
    centred = prop - design.property_mean
    draws = _Draws()
    for system in design.systems:
        _draw_system(design, system, streams, (segment_effects, centred), draws)
    runs = pd.DataFrame(draws.runs)
    for facet in design.facets:
        if facet.name not in runs:
            runs[facet.name] = None
    evaluation = _rows(design, runs, segment_ids, segment_effects, prop, centred, streams)
    if design.dev_sd is not None:
        noise = streams["dev"].normal(0.0, design.dev_sd, len(runs))
        runs["dev_score"] = runs["_quality"].to_numpy() + noise
    runs = runs.drop(columns=["_quality", "_slope"])
    columns = [RUN, SYSTEM, *[f.name for f in design.facets]]
    runs = runs[columns + (["dev_score"] if design.dev_sd is not None else [])]
    for i, value in enumerate(segment_effects):
        draws.effects.append(_effect("segment", "", "", segment_ids[i], value))
    components = pd.DataFrame(draws.components, columns=[SYSTEM, "component", VARIANCE_COLUMN])
    truth = Truth(
        draws.system_means,
        draws.realised_means,
        components,
        _phi(components),
        draws.slopes,
        pd.DataFrame(draws.effects, columns=["kind", SYSTEM, "facet", "level", "value"]),
    )
    return Simulation(evaluation, runs.reset_index(drop=True), truth, design)


def _facet_effects(
    design: Design,
    system: System,
    facets: Sequence[Facet],
    levels: Sequence[int],
    streams: Mapping[str, np.random.Generator],
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Level effects (random ones drawn for this system) and level slopes of each facet."""
    effects: list[np.ndarray] = []
    slopes: list[np.ndarray] = []
    for facet, n in zip(facets, levels, strict=True):
        if facet.is_random:
            effects.append(streams["facets"].normal(0.0, facet.sd, n))
        else:
            assert facet.effects is not None
            if n > len(facet.effects):
                raise ValueError(
                    f"system {system.name!r}: facet {facet.name!r} has {n} levels "
                    f"but {len(facet.effects)} fixed effects"
                )
            effects.append(np.asarray(facet.effects[:n], dtype=float))
        given = facet.property_slopes
        if given is not None and n > len(given):
            raise ValueError(f"facet {facet.name!r}: too few property slopes for {n} levels")
        slopes.append(np.zeros(n) if given is None else np.asarray(given[:n], dtype=float))
    return effects, slopes


def _kept_cells(n_cells: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of the grid cells kept after dropping ``share`` of them (at least two kept)."""
    n_drop = int(round(share * n_cells))
    n_drop = max(0, min(n_drop, n_cells - 2))
    dropped = rng.choice(n_cells, size=n_drop, replace=False) if n_drop else np.array([], int)
    return np.setdiff1d(np.arange(n_cells), dropped)


def _true_components(
    design: Design,
    system: System,
    facets: Sequence[Facet],
    level_effects: Sequence[np.ndarray],
    slope: np.ndarray,
) -> list[dict[str, object]]:
    """Population variance components of the system's VCA model (see :class:`Truth`);
    ``slope``: the runs' fixed slopes (random run slopes enter through ``system.slope_sd``)."""
    mean_slope = float(slope.mean())
    p_var = design.property_sd**2
    rows = [(SEGMENT, design.segment_sd**2 + mean_slope**2 * p_var)]
    for facet, values in zip(facets, level_effects, strict=True):
        if facet.is_random:
            rows.append((facet.name, facet.sd**2))
        else:
            rows.append((facet.name, float(np.var(values, ddof=1)) if len(values) > 1 else 0.0))
    if system.run_sd > 0:
        if len(facets) == 1:  # a single facet's levels are the runs: the offsets add to it
            rows[-1] = (rows[-1][0], rows[-1][1] + system.run_sd**2)
        else:  # the run term, the highest-order crossing of the facets
            rows.append((RUN, system.run_sd**2))
    residual = design.residual_sd**2 + (float(np.var(slope)) + system.slope_sd**2) * p_var
    rows.append((RESIDUAL, residual))
    return [{SYSTEM: system.name, "component": c, VARIANCE_COLUMN: float(v)} for c, v in rows]


def _rows(
    design: Design,
    runs: pd.DataFrame,
    segment_ids: np.ndarray,
    segment_effects: np.ndarray,
    prop: np.ndarray,
    centred: np.ndarray,
    streams: Mapping[str, np.random.Generator],
) -> pd.DataFrame:
    """The evaluation table: every kept run crossed with every segment, minus missing rows."""
    n_runs, n_seg = len(runs), len(segment_ids)
    run_index = np.repeat(np.arange(n_runs), n_seg)
    seg_index = np.tile(np.arange(n_seg), n_runs)
    quality = runs["_quality"].to_numpy(dtype=float)
    slope = runs["_slope"].to_numpy(dtype=float)
    score = (
        quality[run_index]
        + segment_effects[seg_index]
        + slope[run_index] * centred[seg_index]
        + streams["residual"].normal(0.0, design.residual_sd, n_runs * n_seg)
    )
    keep = np.ones(n_runs * n_seg, dtype=bool)
    if design.missing_rows > 0:
        drop = streams["missing_rows"].random(n_runs * n_seg) < design.missing_rows
        first = np.arange(n_runs) * n_seg  # keep each run's first segment so no run vanishes
        drop[first] = False
        keep = ~drop
    table = {
        RUN: runs[RUN].to_numpy()[run_index],
        SYSTEM: runs[SYSTEM].to_numpy()[run_index],
    }
    for facet in design.facets:
        table[facet.name] = runs[facet.name].to_numpy()[run_index]
    table[SEGMENT] = segment_ids[seg_index]
    table[design.property_name] = prop[seg_index]
    table[design.metric] = score
    return pd.DataFrame(table)[keep].reset_index(drop=True)


def a_vs_a(
    n_segments: int = 200,
    runs_per_system: int = 6,
    run_sd: float = REAL_RUN_SD,
    *,
    effect: float = 0.0,
    segment_sd: float = REAL_SEGMENT_SD,
    residual_sd: float = REAL_RESIDUAL_SD,
    property_slope: float = 0.0,
    dev_sd: float | None = None,
) -> Design:
    """Seed 002's A-vs-A experiment: ``A`` and ``A~`` are the same approach, trained from
    ``runs_per_system`` random seeds each; a run's seed gives it its own random offset (SD
    ``run_sd``; default: thesis Table 4.4). ``effect`` > 0 makes ``A~`` better (for power)."""
    seed = Facet("seed", levels=runs_per_system, sd=run_sd)
    return Design(
        systems=(System("A"), System("A~", effect=effect)),
        facets=(seed,),
        n_segments=n_segments,
        segment_sd=segment_sd,
        residual_sd=residual_sd,
        property_slope=property_slope,
        dev_sd=dev_sd,
    )
