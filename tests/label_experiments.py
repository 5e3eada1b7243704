"""Seeded small scores-mode experiments and adversarial renamings of their labels, for the
metamorphic tests (tests/unit/analyses/test_label_metamorphic.py, tests/e2e/test_labels_e2e.py).

An experiment has 20 segments, 2-3 systems with 1-4 runs each, 0-2 facets, one numeric and one
categorical property and one metric. A renaming maps every system, facet, facet level, metric and
property name to a string drawn from an adversarial alphabet; it preserves the names' order, so
every sort the workflow does sorts the same way and every number must come out identical.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

REPO_ROOT = Path(__file__).resolve().parents[1]
RESIDUAL = "Residual"

# Strings a user may well use and that code could mistake for something else.
ALPHABET = (
    "1",
    "2",
    "007",
    "NA",
    "None",
    "nan",
    "True",
    "Residual",
    "(Intercept)",
    "_v1_",
    "_v0_",
    "_v2_x",
    "it's",
    'say "hi"',
    "both ' and \"",
    "`tick`",
    "{brace}",
    "a{1}b",
    "..",
    "a/b",
    "/",
    "a:b",
    "x + y",
    "ünïcødé ✓",
    "日本語",
    "seed",
    "Ü" * 100 + "l" * 100,  # 200 characters, 300 bytes in UTF-8
    "q" * 199 + "z",
)

SEGMENT_COLUMN, RUN_COLUMN = "seg", "rep"
BASE_SYSTEMS = ("sysA", "sysB", "sysC")


@dataclass
class Experiment:
    """One generated experiment: its scores table and the names of its roles."""

    scores: pd.DataFrame
    systems: list[str]
    facets: list[str]
    levels: dict[str, list[str]]  # facet -> its levels
    metric: str
    numeric: str
    categorical: str
    baseline: str
    better: str = "higher"

    @property
    def properties(self) -> list[str]:
        return [self.numeric, self.categorical]

    def columns(self) -> dict:
        """The config's ``columns:`` mapping."""
        return {
            "segment": SEGMENT_COLUMN,
            "system": "system",
            "run": ["system", RUN_COLUMN],
            "metrics": [self.metric],
            "facets": list(self.facets),
            "properties": self.properties,
        }

    def config(self, scores_path: str, analyses: Iterable[str]) -> dict:
        return {
            "experiment": "labels",
            "scores": scores_path,
            "columns": self.columns(),
            "better": {self.metric: self.better},
            "baseline": self.baseline,
            "property_options": {"categorical": [self.categorical]},
            "analyses": {"run": list(analyses), "bootstrap": {"samples": 200}},
            "report": {"date": "not set"},
        }


def generate(seed: int) -> Experiment:
    """A small scores-mode experiment, the same for the same seed."""
    rng = np.random.default_rng(seed)
    n_systems = int(rng.integers(2, 4))
    systems = list(BASE_SYSTEMS[:n_systems])
    n_facets = int(rng.integers(0, 3))
    facets = ["facA", "facB"][:n_facets]
    levels = {f: [f"lv{f[-1]}{k}" for k in range(2 + i)] for i, f in enumerate(facets)}
    segments = [f"s{i:02d}" for i in range(20)]
    length = rng.integers(1, 40, size=20).astype(float)
    category = rng.choice(["ca", "cb", "cc"], size=20)
    seg_effect = rng.normal(0, 2, size=20)
    rows = []
    for s_index, system in enumerate(systems):
        n_runs = int(rng.integers(1, 5))
        for r in range(n_runs):
            run_levels = {f: levels[f][(r + s_index) % len(levels[f])] for f in facets}
            run_effect = rng.normal(0, 0.7)
            noise = rng.normal(0, 1, size=20)
            for i, segment in enumerate(segments):
                score = 50 + 0.8 * s_index + run_effect + seg_effect[i] + noise[i]
                score += 0.03 * length[i] * s_index
                rows.append(
                    {
                        SEGMENT_COLUMN: segment,
                        "system": system,
                        RUN_COLUMN: f"r{r}",
                        **run_levels,
                        "mscore": round(float(score), 4),
                        "plenx": length[i],
                        "pcatx": category[i],
                    }
                )
    scores = pd.DataFrame(rows)
    return Experiment(scores, systems, facets, levels, "mscore", "plenx", "pcatx", systems[0])


@dataclass
class Renaming:
    """The renaming of one experiment's labels, and its inverse."""

    systems: dict[str, str]
    columns: dict[str, str]  # facet, metric and property names
    levels: dict[str, dict[str, str]]  # facet (old name) -> level -> new level
    back: dict[str, str] = field(default_factory=dict)  # every new label -> the old one


def _ordered(old: list[str], pool: list[str]) -> dict[str, str]:
    """Map the names ``old`` to the strings ``pool`` keeping their order."""
    return dict(zip(sorted(old), sorted(pool), strict=True))


def draw_renaming(experiment: Experiment, seed: int) -> Renaming:
    """Adversarial names for every label, all different, drawn from ALPHABET (order-preserving
    within each role, so every sort sorts the same way)."""
    rng = np.random.default_rng(10_000 + seed)
    names = [*experiment.facets, experiment.metric, *experiment.properties]
    sizes = [len(names), len(experiment.systems), *map(len, experiment.levels.values())]
    while True:
        pool = [str(x) for x in rng.choice(ALPHABET, size=sum(sizes), replace=False)]
        columns = _ordered(names, pool[: sizes[0]])
        if RESIDUAL in [columns[f] for f in experiment.facets]:
            continue  # refused up front (tests/unit/experiment): the residual's name
        if not any(columns[p] + "_bin" in pool for p in experiment.properties):
            break
    systems = _ordered(experiment.systems, pool[sizes[0] : sizes[0] + sizes[1]])
    start = sizes[0] + sizes[1]
    levels = {}
    for facet, values in experiment.levels.items():
        levels[facet] = _ordered(values, pool[start : start + len(values)])
        start += len(values)
    renaming = Renaming(systems, columns, levels)
    renaming.back = {new: old for old, new in systems.items()}
    for mapping in levels.values():
        renaming.back |= {new: old for old, new in mapping.items()}
    return renaming


def rename(experiment: Experiment, renaming: Renaming) -> Experiment:
    """The same experiment with every label renamed."""
    scores = experiment.scores.copy()
    scores["system"] = scores["system"].map(renaming.systems)
    for facet, mapping in renaming.levels.items():
        scores[facet] = scores[facet].map(mapping)
    scores = scores.rename(columns=renaming.columns)
    col = renaming.columns
    return Experiment(
        scores,
        [renaming.systems[s] for s in experiment.systems],
        [col[f] for f in experiment.facets],
        {col[f]: [renaming.levels[f][v] for v in lv] for f, lv in experiment.levels.items()},
        col[experiment.metric],
        col[experiment.numeric],
        col[experiment.categorical],
        renaming.systems[experiment.baseline],
        experiment.better,
    )


# -- running the workflow's scripts in-process ---------------------------------------------------
class Namedlist(dict):
    """The part of Snakemake's Namedlist a rule script uses: items by key or attribute."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(name) from error


@dataclass
class FakeSmk:
    input: Namedlist
    output: Namedlist
    params: Namedlist
    wildcards: Namedlist


def script(name: str) -> ModuleType:
    """A rule script of scripts/ as a module (its ``main`` is what the rule runs)."""
    spec = importlib.util.spec_from_file_location(f"_script_{name}", REPO_ROOT / "scripts" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_in_process(
    experiment: Experiment,
    workdir: Path,
    analyses: Iterable[str],
    *,
    write: Callable[[pd.DataFrame, Path], None] | None = None,
) -> dict[str, str]:
    """Import the scores, run ``analyses`` (and what they need) and collect the tables through
    the rule scripts' ``main``; the text of every table (results/tables/<name>.csv) by name."""
    from infrepro.experiment import load_experiment
    from infrepro.registry import ANALYSES, with_needs
    from infrepro.schema import with_defaults

    workdir.mkdir(parents=True, exist_ok=True)
    scores_path = workdir / "scores.csv"
    (write or (lambda frame, path: frame.to_csv(path, index=False)))(experiment.scores, scores_path)
    config = experiment.config(str(scores_path), analyses)
    full = dict(config)
    for section in ("property_options", "analyses", "report"):
        full[section] = with_defaults(section, config.get(section))
    full["incomplete_runs"] = "reject"
    loaded = load_experiment(full)
    results = workdir / "results"
    inputs = {
        "evaluation": results / "evaluation.parquet",
        "runs": results / "runs.parquet",
        "bins": results / "tables" / "property_bins.csv",
    }
    (results / "tables").mkdir(parents=True, exist_ok=True)
    script("import_scores.py").main(
        FakeSmk(
            Namedlist(scores=str(scores_path)),
            Namedlist({k: str(v) for k, v in inputs.items()}),
            Namedlist(columns=config["columns"], options=full["property_options"]),
            Namedlist(),
        )
    )
    metric = loaded.metrics[0]
    part = str(results / "analyses" / "m" / "{analysis}" / "{table}.csv")
    analysis_main = script("analysis.py").main
    chosen = with_needs(list(analyses))
    parts = []
    for name in chosen:
        spec = ANALYSES[name]
        given = {k: str(v) for k, v in inputs.items()}
        for need in spec.needs:
            given[need.argument] = part.format(analysis=need.analysis, table=need.table)
        outputs = {t: part.format(analysis=name, table=t) for t in spec.tables}
        for path in outputs.values():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        options = {k: full["analyses"][k] for k in spec.reads if k in full["analyses"]}
        options |= {k: full["report"][k] for k in spec.report_reads}
        analysis_main(
            FakeSmk(
                Namedlist(given),
                Namedlist(outputs),
                Namedlist(
                    analysis=name,
                    better=loaded.better[metric],
                    baseline=loaded.baseline,
                    facets=loaded.facets,
                    properties=loaded.properties,
                    options=options,
                    metric=metric,
                ),
                Namedlist(metric=metric),
            )
        )
        parts += outputs.values()
    tables = sorted({t for name in chosen for t in ANALYSES[name].tables})
    collected = {t: str(results / "tables" / f"{t}.csv") for t in tables}
    script("collect_tables.py").main(
        FakeSmk(Namedlist(parts=parts), Namedlist(collected), Namedlist(), Namedlist())
    )
    out = {t: Path(p).read_text(encoding="utf-8") for t, p in collected.items()}
    out["property_bins"] = Path(inputs["bins"]).read_text(encoding="utf-8")
    return out


def run_ids(workdir: Path) -> list[str]:
    """The run ids of an in-process run, in the order of the runs table."""
    return [str(r) for r in pd.read_parquet(workdir / "results" / "runs.parquet")["run_id"]]


def assert_same_tables(
    base: Mapping[str, str],
    renamed: Mapping[str, str],
    renaming: Renaming,
    runs: Mapping[str, str],
) -> None:
    """Every table of the renamed run equals the base run's, label for label and number for
    number: headers and label cells map back exactly, numbers are the same text, and a text
    cell is the base's with each name in it written as the renamed name (plain or as a formula
    writes it). ``runs``: base run id -> renamed run id."""
    from infrepro.analyses.names import formula_name
    from infrepro.lmm.formula import string_literal
    from infrepro.vocabulary import STR, TABLE_SPECS

    old_new = {**renaming.columns, **{f"{o}_bin": f"{n}_bin" for o, n in renaming.columns.items()}}
    old_new |= {old: new for new, old in renaming.back.items()} | dict(runs)
    # a system or level as a formula's string: dummy(system, "sysA")
    quoted = {
        **renaming.systems,
        **{o: n for lv in renaming.levels.values() for o, n in lv.items()},
    }
    old_new |= {f'"{old}"': string_literal(new) for old, new in quoted.items()}
    order = sorted(old_new, key=len, reverse=True)
    split = re.compile("(" + "|".join(map(re.escape, order)) + ")")
    header = {o: n for o, n in old_new.items() if o in renaming.columns or o.endswith("_bin")}
    for name, text in base.items():
        left, right = read_text(text), read_text(renamed[name])
        assert list(right.columns) == [header.get(c, c) for c in left.columns], name
        assert left.shape == right.shape, name
        kinds = {c.name: c.kind for c in TABLE_SPECS[name].columns}
        for column, new_column in zip(left.columns, right.columns, strict=True):
            for row, (a, b) in enumerate(zip(left[column], right[new_column], strict=True)):
                where = f"{name}.csv row {row + 2} column {column}: {a!r} vs {b!r}"
                if kinds.get(column, STR) != STR or a not in old_new and not split.search(a):
                    assert a == b, where
                    continue
                pattern = "".join(
                    "(?:" + re.escape(old_new[p]) + "|" + re.escape(formula_name(old_new[p])) + ")"
                    if k % 2
                    else re.escape(p)
                    for k, p in enumerate(split.split(a))
                )
                assert re.fullmatch(pattern, b, flags=re.S), where


def read_text(text: str) -> pd.DataFrame:
    from io import StringIO

    return pd.read_csv(StringIO(text), dtype=str, keep_default_na=False)
