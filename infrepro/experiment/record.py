"""The validated experiment as the workflow's rules read it: names, runs and input files, with
no table in it, so that a parse can have it back from the last one without pandas
(``experiment.kept``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from infrepro.core.catalog import Scale
from infrepro.core.vocabulary import file_stem


@dataclass(frozen=True)
class Experiment:
    """What the workflow needs to know about an experiment after validation."""

    mode: Literal["raw", "scores"]
    name: str
    baseline: str
    metrics: list[str]
    better: dict[str, str]
    properties: list[str]
    facets: list[str]
    systems: list[str]
    run_ids: list[str]  # in the order of the runs table (by run id)
    run_systems: list[str] = field(default_factory=list)  # each run's system, as run_ids
    hypotheses: dict[str, str] = field(default_factory=dict)  # raw mode: each run's file
    inputs: list[str] = field(default_factory=list)  # every input file the checks read
    scales: dict[str, Scale] = field(default_factory=dict)  # scores mode's declared scales
    # scores mode: SHA-256 of each run's scores (what the look ledger records as its content)
    run_digests: dict[str, str] = field(default_factory=dict)
    # runs from a pattern: the derived runs sheet, its header first (infrepro.io.pattern)
    derived_sheet: list[list[str | float]] = field(default_factory=list)

    @property
    def units(self) -> dict[str, str]:
        """The report's unit of each metric: ``points``, or none for a raw scale (shown as
        given); it travels with ``better`` to the report."""
        return {m: self.scales.get(m, Scale()).unit for m in self.metrics}

    @property
    def metric_of_stem(self) -> dict[str, str]:
        """Each metric by the file-name stem of its files (vocabulary.file_stem)."""
        return {file_stem(m): m for m in self.metrics}

    def hypotheses_path(self, run_id: str) -> str:
        """The hypotheses file of one run."""
        return self.hypotheses[run_id]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (``from_json`` reads them back to an equal record). Mappings are
        lists of pairs: their order is part of the record (Snakemake compares a rule's params
        by their repr), and a JSON object's keys may be sorted."""
        value = asdict(self)
        for name in MAPPINGS:
            value[name] = [list(item) for item in value[name].items()]
        return value

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Experiment:
        fields = {**value, **{name: dict(value[name]) for name in MAPPINGS}}
        fields["scales"] = {m: Scale(**s) for m, s in fields["scales"].items()}
        return cls(**fields)


MAPPINGS = ("better", "hypotheses", "scales", "run_digests")  # Experiment's dict fields
