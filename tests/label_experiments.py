"""Seeded small scores-mode and raw-mode experiments and adversarial renamings of their labels,
for the metamorphic tests (tests/unit/analyses/test_label_metamorphic.py,
tests/e2e/test_label_workflow.py). Raw mode writes a test set, a runs sheet and hypotheses files
and scores them with the real metrics (sacrebleu / rouge-score, ``implementation: reference``).

Lookalike twins (:func:`with_lookalike`, :func:`with_lookalike_raw`) give one system, run,
segment, facet level or column a second spelling that differs only by surrounding whitespace or
Unicode normalisation, which must be refused up front.

An experiment has 20 segments, 2-3 systems with 1-4 runs each, 0-2 facets, one numeric and one
categorical property and one metric. A renaming maps every system, facet, facet level, metric and
property name to a string drawn from an adversarial alphabet; it preserves the names' order, so
every sort the workflow does sorts the same way and every number must come out identical.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from infrepro.core.vocabulary import DEV_SCORE, HYPOTHESES, REFERENCE, RUN, SEGMENT, SOURCE, SYSTEM

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

# Names that are fine as data but trip the places that show them: paste-ready Markdown and LaTeX
# (line breaks, pipes, backslashes, HTML, entities, edge spaces, other scripts) and figure
# legends (matplotlib drops labels that start with "_"); tests/unit/report/test_label_outputs.py
DISPLAY_NAMES = (
    "line\nbreak",
    "\\|",
    "a\\|b",
    "back\\slash",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "&amp;",
    " edge spaces ",
    "نموذج عربي",
    "日本語システム",
    "हिन्दी",
    "emoji 😀",
    "_v1_",
    "_v0_",
    "_",
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

    @property
    def renameable(self) -> list[str]:
        """The column names a user chooses: facets, metric and properties."""
        return [*self.facets, self.metric, *self.properties]

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
            "scale": {self.metric: "points"},  # scores around 50
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


def draw_renaming(experiment: Experiment | RawExperiment, seed: int) -> Renaming:
    """Adversarial names for every label, all different, drawn from ALPHABET (order-preserving
    within each role, so every sort sorts the same way)."""
    rng = np.random.default_rng(10_000 + seed)
    names = experiment.renameable
    sizes = [len(names), len(experiment.systems), *map(len, experiment.levels.values())]
    while True:
        pool = [str(x) for x in rng.choice(ALPHABET, size=sum(sizes), replace=False)]
        columns = _ordered(names, pool[: sizes[0]])
        if RESIDUAL in [columns[f] for f in experiment.facets]:
            continue  # refused up front (tests/unit/experiment): the residual's name
        if not any(columns[name] + "_bin" in pool for name in names):
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


def display_renaming(experiment: Experiment, seed: int) -> Renaming:
    """The experiment's systems renamed to DISPLAY_NAMES (at least one starting with ``_``),
    its other labels kept; order-preserving, so the same sorts sort the same way."""
    rng = np.random.default_rng(20_000 + seed)
    underscored = [n for n in DISPLAY_NAMES if n.startswith("_")]
    others = [n for n in DISPLAY_NAMES if not n.startswith("_")]
    k = len(experiment.systems)
    pool = [str(rng.choice(underscored)), *map(str, rng.choice(others, size=k - 1, replace=False))]
    systems = _ordered(experiment.systems, pool)
    renaming = Renaming(
        systems,
        {c: c for c in experiment.renameable},
        {f: {v: v for v in values} for f, values in experiment.levels.items()},
    )
    renaming.back = {new: old for old, new in systems.items()}
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
    threads: int = 1


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

    workdir.mkdir(parents=True, exist_ok=True)
    scores_path = workdir / "scores.csv"
    (write or (lambda frame, path: frame.to_csv(path, index=False)))(experiment.scores, scores_path)
    config = experiment.config(str(scores_path), analyses)
    full = with_all_defaults(config)
    full["incomplete_runs"] = "reject"
    loaded = load_experiment(full)
    results = workdir / "results"
    inputs = {
        "evaluation": results / "evaluation.parquet",
        "runs": results / "runs.parquet",
        "bins": results / "tables" / "property_bins.csv",
    }
    (results / "tables").mkdir(parents=True, exist_ok=True)
    call(
        "import_scores.py",
        {"scores": scores_path},
        inputs,
        columns=config["columns"],
        options=full["property_options"],
        scale=config["scale"],
        looks=[],  # one look: no ledger (docs/method.md §4e.12)
    )
    return run_analyses(loaded, full, inputs, analyses)


def with_all_defaults(config: Mapping) -> dict:
    """The config with every section's schema defaults, as Snakemake's validate gives it."""
    from infrepro.core.schema import with_defaults

    full = dict(config)
    for section in ("property_options", "analyses", "report", "scoring"):
        full[section] = with_defaults(section, config.get(section))
    full["property_options"].setdefault("rarity_corpus", None)  # a null default (validate sets it)
    return full


def call(name: str, given: Mapping, outputs: Mapping, wildcards: Mapping | None = None, **params):
    """Run the rule script ``name``'s ``main`` on these inputs, outputs and params."""
    script(name).main(
        FakeSmk(
            Namedlist({k: v if isinstance(v, list) else str(v) for k, v in given.items()}),
            Namedlist(
                {
                    k: list(map(str, v)) if isinstance(v, list) else str(v)
                    for k, v in outputs.items()
                }
            ),
            Namedlist(params),
            Namedlist(wildcards or {}),
        )
    )


def run_analyses(loaded, full: Mapping, inputs: Mapping[str, Path], analyses: Iterable[str]):
    """Run ``analyses`` (and what they need) on the evaluation table of ``inputs`` and collect
    their tables as the workflow does; the text of every table by name."""
    from infrepro.core.registry import ANALYSES, rule_options, with_needs

    results = Path(inputs["evaluation"]).parent
    metric = loaded.metrics[0]
    part = str(results / "analyses" / "m" / "{analysis}" / "{table}.csv")
    chosen = with_needs(list(analyses))
    parts = []
    for name in chosen:
        spec = ANALYSES[name]
        given = dict(inputs)
        for need in spec.needs:
            given[need.argument] = part.format(analysis=need.analysis, table=need.table)
        outputs = {t: part.format(analysis=name, table=t) for t in spec.tables}
        for path in outputs.values():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        options = rule_options(name, full["analyses"], full["report"])
        call(
            "analysis.py",
            given,
            outputs,
            {"metric": metric},
            analysis=name,
            better=loaded.better[metric],
            baseline=loaded.baseline,
            facets=loaded.facets,
            properties=loaded.properties,
            options=options,
            metric=metric,
        )
        parts += outputs.values()
    tables = sorted({t for name in chosen for t in ANALYSES[name].tables})
    collected = {t: results / "tables" / f"{t}.csv" for t in tables}
    call("collect_tables.py", {"parts": parts}, collected)
    out = {t: Path(p).read_text(encoding="utf-8") for t, p in collected.items()}
    out["property_bins"] = Path(inputs["bins"]).read_text(encoding="utf-8")
    return out


def run_ids(workdir: Path) -> list[str]:
    """The run ids of an in-process run (or of a workflow's results), in the runs table's order."""
    results = workdir / "results" if (workdir / "results").is_dir() else workdir
    path = results / "runs.parquet"
    path = path if path.is_file() else results / "inputs" / "runs.parquet"
    return [str(r) for r in pd.read_parquet(path)[RUN]]


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
    from infrepro.analyses.common.names import formula_name
    from infrepro.core.vocabulary import STR, TABLE_SPECS, string_literal

    derived = ("_bin", "_c")  # a property's binned and centred columns
    old_new = {**renaming.columns}
    old_new |= {o + d: n + d for o, n in renaming.columns.items() for d in derived}
    old_new |= {old: new for new, old in renaming.back.items()} | dict(runs)
    # a system or level as a formula's string: dummy(system, "sysA")
    quoted = {
        **renaming.systems,
        **{o: n for lv in renaming.levels.values() for o, n in lv.items()},
    }
    old_new |= {f'"{old}"': string_literal(new) for old, new in quoted.items()}
    order = sorted(old_new, key=len, reverse=True)
    split = re.compile("(" + "|".join(map(re.escape, order)) + ")")
    header = {o: n for o, n in old_new.items() if o in renaming.columns or o.endswith(derived)}
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


# -- raw mode: a test set, a runs sheet and hypotheses files scored by the real metrics -----------
WORDS = tuple(
    "the a cat dog sat on mat runs fast slow red blue green house tree river stone light dark "
    "old new small big quiet loud bird fish sings swims under over near far".split()
)


@dataclass
class RawExperiment:
    """A raw-mode experiment: test set (with a numeric and a categorical user property), runs
    sheet (system, facets, dev_score) and each run's hypotheses, in test-set order."""

    testset: pd.DataFrame
    runs: pd.DataFrame
    hypotheses: dict[str, list[str]]  # run id -> one hypothesis per test-set row
    systems: list[str]
    facets: list[str]
    levels: dict[str, list[str]]
    metric: str
    numeric: str
    categorical: str
    baseline: str

    @property
    def renameable(self) -> list[str]:
        """The column names a user chooses: facets and user properties (metric and built-in
        property names are infrepro's)."""
        return [*self.facets, self.numeric, self.categorical]

    def config(self, analyses: Iterable[str]) -> dict:
        return {
            "experiment": "labels (raw)",
            "testset": "testset.tsv",
            "runs": "runs.tsv",
            "baseline": self.baseline,
            "metrics": [self.metric],
            "properties": ["length", self.numeric, self.categorical],
            "property_options": {"categorical": [self.categorical]},
            "analyses": {
                "run": list(analyses),
                "bootstrap": {"samples": 200},
                "dev_score_better": "higher",
            },
            "report": {"date": "not set"},
            "scoring": {"implementation": "reference"},
        }


def _hypothesis(reference: str, rng: np.random.Generator, error: float) -> str:
    words = reference.split()
    return " ".join(str(rng.choice(WORDS)) if rng.random() < error else w for w in words)


def generate_raw(seed: int) -> RawExperiment:
    """A small raw-mode experiment, the same for the same seed: 20 segments, 2-3 systems with
    1-3 runs each, 0-2 facets; the better systems' hypotheses change fewer reference words."""
    rng = np.random.default_rng(50_000 + seed)
    systems = list(BASE_SYSTEMS[: int(rng.integers(2, 4))])
    facets = ["facA", "facB"][: int(rng.integers(0, 3))]
    levels = {f: [f"lv{f[-1]}{k}" for k in range(2 + i)] for i, f in enumerate(facets)}
    references = [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 16)))) for _ in range(20)]
    testset = pd.DataFrame(
        {
            SEGMENT: [f"s{i:02d}" for i in range(20)],
            SOURCE: [r.upper() for r in references],
            REFERENCE: references,
            "udiff": [str(int(v)) for v in rng.integers(1, 9, size=20)],
            "ugenre": rng.choice(["news", "talk", "web"], size=20),
        }
    )
    runs, hypotheses = [], {}
    for s_index, system in enumerate(systems):
        for r in range(int(rng.integers(1, 4))):
            run_id = f"{system}_r{r}"
            error = 0.45 - 0.1 * s_index + rng.uniform(-0.05, 0.05)
            hypotheses[run_id] = [_hypothesis(ref, rng, error) for ref in references]
            levels_of_run = {f: levels[f][(r + s_index) % len(levels[f])] for f in facets}
            dev = f"{rng.uniform(0.3, 0.6):.4f}"
            runs.append(
                {
                    RUN: run_id,
                    SYSTEM: system,
                    HYPOTHESES: f"hyps/{run_id}.txt",
                    DEV_SCORE: dev,
                    **levels_of_run,
                }
            )
    metric = ("ter", "rouge1", "chrf")[seed % 3]
    return RawExperiment(
        testset,
        pd.DataFrame(runs),
        hypotheses,
        systems,
        facets,
        levels,
        metric,
        "udiff",
        "ugenre",
        systems[0],
    )


def rename_raw(experiment: RawExperiment, renaming: Renaming) -> RawExperiment:
    """The same raw experiment with every system, facet, level and user property renamed."""
    col = renaming.columns
    runs = experiment.runs.copy()
    runs[SYSTEM] = runs[SYSTEM].map(renaming.systems)
    for facet, mapping in renaming.levels.items():
        runs[facet] = runs[facet].map(mapping)
    return RawExperiment(
        experiment.testset.rename(columns=col),
        runs.rename(columns=col),
        experiment.hypotheses,
        [renaming.systems[s] for s in experiment.systems],
        [col[f] for f in experiment.facets],
        {col[f]: [renaming.levels[f][v] for v in lv] for f, lv in experiment.levels.items()},
        experiment.metric,
        col[experiment.numeric],
        col[experiment.categorical],
        renaming.systems[experiment.baseline],
    )


def permute_raw(experiment: RawExperiment, seed: int) -> RawExperiment:
    """The same raw experiment with the test set's rows (and with them each hypotheses file's
    lines) and the runs sheet's rows in another order."""
    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(experiment.testset))
    hypotheses = {run: [lines[i] for i in rows] for run, lines in experiment.hypotheses.items()}
    runs = experiment.runs.iloc[rng.permutation(len(experiment.runs))].reset_index(drop=True)
    return RawExperiment(
        experiment.testset.iloc[rows].reset_index(drop=True),
        runs,
        hypotheses,
        *(getattr(experiment, f) for f in ("systems", "facets", "levels", "metric")),
        experiment.numeric,
        experiment.categorical,
        experiment.baseline,
    )


def _write_tsv(frame: pd.DataFrame, path: Path) -> None:
    lines = ["\t".join(frame.columns)] + ["\t".join(map(str, row)) for row in frame.to_numpy()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_raw_in_process(
    experiment: RawExperiment, workdir: Path, analyses: Iterable[str]
) -> dict[str, str]:
    """Write the test set, runs sheet and hypotheses files, then run the raw-mode rule scripts
    (prepare_testset, prepare_runs, score_run per run, properties, assemble) and ``analyses`` as
    the workflow does; the text of every table by name."""
    from infrepro.experiment import load_experiment

    (workdir / "hyps").mkdir(parents=True, exist_ok=True)
    _write_tsv(experiment.testset, workdir / "testset.tsv")
    _write_tsv(experiment.runs, workdir / "runs.tsv")
    for run_id, lines in experiment.hypotheses.items():
        (workdir / "hyps" / f"{run_id}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = experiment.config(analyses)
    config["testset"] = str(workdir / config["testset"])
    config["runs"] = str(workdir / config["runs"])
    full = with_all_defaults(config)
    loaded = load_experiment(full)
    results = workdir / "results"
    (results / "tables").mkdir(parents=True, exist_ok=True)
    inputs = {
        "evaluation": results / "evaluation.parquet",
        "runs": results / "inputs" / "runs.parquet",
        "bins": results / "tables" / "property_bins.csv",
    }
    testset = results / "inputs" / "testset.parquet"
    (results / "scores").mkdir(parents=True, exist_ok=True)
    call("prepare_testset.py", {"testset": config["testset"]}, {"testset": testset})
    call(
        "prepare_runs.py",
        {"runs": config["runs"]},
        {"runs": inputs["runs"]},
        look_column=config.get("look_column"),
        looks=[],  # one look: no ledger (docs/method.md §4e.12)
    )
    scores = []
    for run in loaded.run_ids:  # a file per metric, as the rule names them
        given = {"hypotheses": loaded.hypotheses_path(run), "testset": testset}
        files = [results / "scores" / run / f"{metric}.parquet" for metric in loaded.metrics]
        files[0].parent.mkdir(parents=True, exist_ok=True)
        scores += files
        call(
            "score_run.py",
            given,
            {"scores": files},
            {"run_id": run},
            implementation=full["scoring"]["implementation"],
        )
    properties = results / "properties.parquet"
    call(
        "properties.py",
        {"testset": testset},
        {"properties": properties, "bins": inputs["bins"]},
        properties=loaded.properties,
        options=full["property_options"],
    )
    call(
        "assemble.py",
        {"runs": inputs["runs"], "properties": properties, "scores": list(map(str, scores))},
        {"evaluation": inputs["evaluation"]},
        facets=loaded.facets,
        metrics=loaded.metrics,
    )
    return run_analyses(loaded, full, inputs, analyses)


# -- names that only look alike ------------------------------------------------------------------
# Surrounding whitespace a spreadsheet export or a copy from a web page leaves: a space, a tab,
# a no-break space, an ideographic space.
PADDING = (" ", "\t", "\u00a0", "\u3000", "  ")
TSV_PADDING = tuple(p for p in PADDING if "\t" not in p)  # a tab would split a TSV field
COMPOSED = "\u00e9"  # é as one code point; NFD spells it e + U+0301


@dataclass
class Lookalike:
    """Two spellings of one name in one column of a file: ``second`` first appears on
    ``second_line``, after ``first`` on ``first_line`` (file lines, the header is line 1)."""

    role: str
    column: str
    first: str
    second: str
    first_line: int
    second_line: int


def twin_spellings(
    name: str, rng: np.random.Generator, padding: tuple[str, ...] = PADDING
) -> tuple[str, str]:
    """(first, second): the same name twice, the second with surrounding whitespace or in
    decomposed form (then both end in a composed letter, the second decomposed)."""
    kind = int(rng.integers(3))
    pad = str(rng.choice(padding))
    if kind == 0:
        return name, name + pad
    if kind == 1:
        return name, pad + name
    composed = name + COMPOSED
    return composed, unicodedata.normalize("NFD", composed)


def _first_line(values: pd.Series, value: str) -> int:
    return int(np.flatnonzero((values == value).to_numpy())[0]) + 2


def with_lookalike(experiment: Experiment, seed: int) -> tuple[Experiment, Lookalike]:
    """The experiment with one name spelt two ways that look alike: a system, a run (its run
    column), a segment or a facet level on the later segments of one run, or a second column
    whose name looks like a facet's, metric's or property's."""
    rng = np.random.default_rng(20_000 + seed)
    roles = ["system", "run", "segment", "column"] + (["level"] if experiment.facets else [])
    role = roles[seed % len(roles)]
    scores = experiment.scores.copy()
    systems, facets = list(experiment.systems), list(experiment.facets)
    levels = {f: list(v) for f, v in experiment.levels.items()}
    baseline, metric = experiment.baseline, experiment.metric
    numeric, categorical = experiment.numeric, experiment.categorical
    run_rows = (scores["system"] == scores["system"].iloc[0]) & (
        scores[RUN_COLUMN] == scores[RUN_COLUMN].iloc[0]
    )
    later = run_rows & (scores[SEGMENT_COLUMN] >= "s10")
    if role == "column":
        name = str(rng.choice(experiment.renameable))
        first, second = twin_spellings(name, rng)
        if first != name:  # the composed form replaces the name everywhere
            scores = scores.rename(columns={name: first})
            facets = [first if f == name else f for f in facets]
            levels = {first if f == name else f: v for f, v in levels.items()}
            metric, numeric, categorical = (
                first if n == name else n for n in (metric, numeric, categorical)
            )
        scores[second] = scores[first]
        twin = Lookalike(role, second, first, second, 1, 1)
    else:
        column = {
            "system": "system",
            "run": RUN_COLUMN,
            "segment": SEGMENT_COLUMN,
            "level": facets[0] if facets else "",
        }[role]
        rows = (run_rows & (scores[SEGMENT_COLUMN] == "s05")) if role == "segment" else later
        name = str(scores.loc[rows, column].iloc[0])
        first, second = twin_spellings(name, rng)
        scores[column] = scores[column].where(scores[column] != name, first)
        scores.loc[rows, column] = second
        if role == "system":
            systems = [first if s == name else s for s in systems]
            baseline = first if baseline == name else baseline
        if role == "level":
            levels[column] = [first if v == name else v for v in levels[column]]
        twin = Lookalike(
            role,
            column,
            first,
            second,
            _first_line(scores[column], first),
            _first_line(scores[column], second),
        )
    changed = Experiment(
        scores, systems, facets, levels, metric, numeric, categorical, baseline, experiment.better
    )
    return changed, twin


def with_lookalike_raw(experiment: RawExperiment, seed: int) -> tuple[RawExperiment, Lookalike]:
    """The raw experiment with one name spelt two ways that look alike: a segment id of the test
    set, a system of the runs sheet, a facet level (decomposed: the runs sheet trims whitespace
    around levels) or a runs-sheet column whose name looks like a facet's."""
    rng = np.random.default_rng(30_000 + seed)
    roles = ["segment", "system"] + (["level", "column"] if experiment.facets else [])
    role = roles[seed % len(roles)]
    testset, runs = experiment.testset.copy(), experiment.runs.copy()
    systems, baseline = list(experiment.systems), experiment.baseline
    levels = {f: list(v) for f, v in experiment.levels.items()}
    facets = list(experiment.facets)
    if role == "segment":
        first, second = twin_spellings(str(testset[SEGMENT].iloc[4]), rng, TSV_PADDING)
        testset.loc[4, SEGMENT] = first
        testset.loc[5, SEGMENT] = second
        frame, column = testset, SEGMENT
    elif role == "column":
        name = facets[0]
        first, second = twin_spellings(name, rng, TSV_PADDING)
        if first != name:
            runs = runs.rename(columns={name: first})
            facets[0] = first
            levels = {first if f == name else f: v for f, v in levels.items()}
        runs[second] = runs[first]
        frame, column = runs, second
    else:
        column = SYSTEM if role == "system" else facets[0]
        present = runs[column].map(str)
        name = str(present.iloc[0])
        first, second = twin_spellings(name, rng, TSV_PADDING)
        if role == "level":  # whitespace around a level is trimmed: a decomposed twin
            first, second = name + COMPOSED, unicodedata.normalize("NFD", name + COMPOSED)
        runs[column] = present.where(present != name, first)
        # a run of another name, or the last run, takes the second spelling
        runs.loc[len(runs) - 1, column] = second
        if role == "system":
            systems = sorted({*runs[SYSTEM]})
            baseline = first if baseline == name else baseline
        else:
            levels[column] = sorted({*runs[column]})
        frame = runs
    lines = (
        (1, 1)
        if role == "column"
        else (
            _first_line(frame[column], first),
            _first_line(frame[column], second),
        )
    )
    changed = RawExperiment(
        testset,
        runs,
        experiment.hypotheses,
        systems,
        facets,
        levels,
        experiment.metric,
        experiment.numeric,
        experiment.categorical,
        baseline,
    )
    return changed, Lookalike(role, column, first, second, *lines)
