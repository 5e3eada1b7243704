"""Methods appendix: every model in lme4 notation with a plain-language reading, software
versions, the configuration, checksums of every input and how to rerun."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd
import yaml

from ..formatting import integer
from ..htmltable import Column, Table, frame_table, text
from ..inputs import ReportSettings
from ..labels import analysis_label, property_label

FAMILIES = (
    (
        "best vs best",
        "score ~ system + (1|segment_id)",
        "score ~ 1 + (1|segment_id)",
        "ML",
        "Do the systems' best runs differ in mean score, with each test segment's difficulty as a "
        "random intercept? (training reproducibility; paper eq. 3-4)",
    ),
    (
        "all runs, paper model",
        "score ~ system + (1|segment_id)",
        "score ~ 1 + (1|segment_id)",
        "ML",
        "The same question with every run of every system; runs count as fixed, so "
        "run-to-run variation is ignored (inferential reproducibility).",
    ),
    (
        "all runs, run-aware",
        "score ~ system + (1|segment_id) + (1|run_id)",
        "score ~ 1 + (1|segment_id) + (1|run_id)",
        "ML",
        "Runs are a random sample of possible runs: the system difference must exceed the "
        "run-to-run variation to be significant.",
    ),
    (
        "conditional, joint",
        "score ~ system * d + (1|segment_id)",
        "score ~ d + (1|segment_id)",
        "ML",
        "Does the system matter at all (main effect or interaction) once the data property d "
        "is accounted for? (paper eq. 6-7)",
    ),
    (
        "conditional, interaction",
        "score ~ system * d + (1|segment_id)",
        "score ~ system + d + (1|segment_id)",
        "ML",
        "Does the difference between the systems change with the data property d? (thesis ch. 2)",
    ),
    (
        "meta-parameter, joint",
        "score ~ f * d + (1|segment_id)",
        "score ~ d + (1|segment_id)",
        "ML",
        "Within one system: does its dominant meta-parameter f matter once d is accounted for?",
    ),
    (
        "meta-parameter, interaction",
        "score ~ f * d + (1|segment_id)",
        "score ~ f + d + (1|segment_id)",
        "ML",
        "Within one system: does the effect of f change with the data property d? (paper Fig. 2)",
    ),
    (
        "variance components",
        "score ~ 1 + (1|segment_id) + (1|f1) + (1|f2) + …",
        "",
        "REML",
        "How much of a system's score variance comes from the test segments, from each "
        "meta-parameter and from the residual? φ is the segments' share (paper §4).",
    ),
)


@dataclass(frozen=True)
class Family:
    """A model family: name, H1 and H0 in lme4 notation, the fit criterion, a plain reading."""

    name: str
    h1: str
    h0: str
    fit: str
    reading: str


@dataclass
class Methods:
    families: list[Family]
    models: Table | None = None
    software: Table | None = None
    inputs: Table | None = None
    config: str = ""
    rerun: list[str] = field(default_factory=list)


def generic(formula: str) -> str:
    """A model with its metric name replaced by ``score``."""
    return re.sub(r"^\s*\S+\s*~", "score ~", formula)


def fitted_models(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every distinct fitted model (metric replaced by ``score``), with the analysis it serves."""
    diagnostics = tables["diagnostics"]
    if diagnostics.empty:
        return diagnostics
    fitted = diagnostics[diagnostics["status"] == "fitted"].copy()
    fitted["formula"] = fitted["model"].map(generic)
    fitted["criterion"] = fitted["reml"].map(lambda r: "REML" if r is True else "ML")
    fitted["where"] = [
        " · ".join(part for part in (analysis_label(a), s, property_label(p) if p else "") if part)
        for a, s, p in zip(fitted["analysis"], fitted["subset"], fitted["property"], strict=True)
    ]
    grouped = (
        fitted.groupby(["formula", "criterion", "where"], sort=False)
        .agg(metrics=("metric", lambda m: ", ".join(dict.fromkeys(m))), fits=("metric", "size"))
        .reset_index()
    )
    return grouped


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Methods:
    section = Methods([Family(*family) for family in FAMILIES])
    models = fitted_models(tables)
    if not models.empty:
        section.models = frame_table(
            models,
            [
                Column("formula", "model (lme4)", text, numeric=False, cls="code"),
                Column("criterion", "fit", text, numeric=False),
                Column("where", "used in", text, numeric=False),
                Column("metrics", "metrics", text, numeric=False),
                Column("fits", "fits", integer),
            ],
            csv=settings.link("diagnostics"),
        )
    if not tables["software"].empty:
        section.software = frame_table(
            tables["software"],
            [
                Column("package", "package", text, numeric=False),
                Column("version", "version", text, numeric=False),
            ],
            csv=settings.link("software"),
        )
    if not tables["inputs"].empty:
        section.inputs = frame_table(
            tables["inputs"],
            [
                Column("path", "input file", text, numeric=False),
                Column("bytes", "bytes", integer),
                Column("sha256", "SHA-256", text, numeric=False),
            ],
            csv=settings.link("inputs"),
        )
    section.config = yaml.safe_dump(_plain(settings.config), sort_keys=False, allow_unicode=True)
    section.rerun = ['pip install -e ".[test]"', settings.rerun]
    return section


def _plain(value: object) -> object:
    """The config as plain YAML types (Snakemake may hand over its own mapping types)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
