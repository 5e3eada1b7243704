"""Degenerate experiments give recorded notes (diagnostics), never a crash."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synthetic_systems import frame_data

from infrepro.analyses import ANALYSES, MetricData, run_analysis
from infrepro.core.vocabulary import TABLE_SPECS, columns


def experiment(
    runs_per_system: dict[str, int],
    *,
    n_segments: int = 40,
    constant: bool = False,
    seed_levels: int | None = None,
    constant_segment: bool = False,
    identical: str | None = None,
) -> MetricData:
    rng = np.random.default_rng(3)
    segment_effect = rng.normal(0, 0.2, n_segments)
    length = rng.integers(3, 40, n_segments).astype(float)
    rows = []
    run_rows = []
    for system, n_runs in runs_per_system.items():
        for r in range(n_runs):
            run_id = f"{system}_{r}"
            seed = str(r % seed_levels if seed_levels else r)
            run_rows.append({"run_id": run_id, "system": system, "seed": seed})
            offset = rng.normal(0, 0.02)
            if system == identical:  # every run of this system repeats the first one
                offset, noise = 0.0, np.random.default_rng(7).normal(0, 0.05, n_segments)
            else:
                noise = rng.normal(0, 0.05, n_segments)
            for s in range(n_segments):
                value = 0.5 if constant else 0.5 + segment_effect[s] + offset + noise[s]
                if constant_segment and s == 0:
                    value = 0.25
                rows.append(
                    {
                        "run_id": run_id,
                        "system": system,
                        "seed": seed,
                        "segment_id": f"s{s:03d}",
                        "length": length[s],
                        "length_bin": "low" if length[s] < 20 else "high",
                        "ter": value,
                    }
                )
    return frame_data(
        rows,
        run_rows,
        metric="ter",
        better="lower",
        baseline="base",
        facets=["seed"],
        properties=["length"],
        options={"bootstrap": {"samples": 200}, "randomization": {"samples": 200}},
        bin_order={"length_bin": ["low", "high"]},
    )


def run_all(data: MetricData) -> dict[str, pd.DataFrame]:
    tables: dict[str, list[pd.DataFrame]] = {}
    written: dict[tuple[str, str], pd.DataFrame] = {}
    for name in ANALYSES:  # registry order: an analysis after those it needs
        needed = {n.argument: written[n.analysis, n.table] for n in ANALYSES[name].needs}
        result = run_analysis(name, data, needed)
        written |= {(name, table): frame for table, frame in result.items()}
        for key, frame in result.items():
            tables.setdefault(key, []).append(frame)
    return {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}


def reasons(tables: dict[str, pd.DataFrame]) -> str:
    diagnostics = tables["diagnostics"]
    return " | ".join(diagnostics.loc[diagnostics["status"] == "skipped", "reason"])


@pytest.mark.parametrize(
    ("case", "data", "expected"),
    [
        ("single run per system", experiment({"base": 1, "comp": 1}), "single run"),
        ("one system only", experiment({"base": 3}), "only one system"),
        ("a facet with one level", experiment({"base": 3, "comp": 3}, seed_levels=1), "no facet"),
        ("identical scores", experiment({"base": 2, "comp": 2}, constant=True), "constant"),
    ],
)
def test_degenerate_experiment_is_noted(case: str, data: MetricData, expected: str) -> None:
    tables = run_all(data)
    for name, frame in tables.items():
        if not TABLE_SPECS[name].extra:
            assert list(frame.columns) == columns(name), (case, name)
    assert expected in reasons(tables), (case, reasons(tables))


def test_metric_constant_on_a_segment_is_fine() -> None:
    tables = run_all(experiment({"base": 3, "comp": 3}, constant_segment=True))
    assert not tables["glrt"].empty
    assert (tables["diagnostics"]["status"] == "fitted").any()


def test_identical_runs_report_no_run_share_phi_or_retraining_sd() -> None:
    """Every run of a system the same (true run variance 0, where lme4 stops at the boundary):
    no fit that did not converge may give the seed a share, a phi or a retraining SD."""
    tables = run_all(experiment({"base": 3, "comp": 3}, identical="comp"))
    notes = tables["diagnostics"]["reason"].str.cat(sep=" | ")
    assert "all runs are identical on every segment" in notes
    comp = tables["variance_components"][tables["variance_components"]["system"] == "comp"]
    assert not comp.empty and not comp["converged"].astype(bool).any()
    assert (comp.loc[comp["component"] != "segment_id", "variance"].astype(float) == 0).all()
    assert comp["percent"].astype(float).isna().all()
    phi = tables["reliability"][tables["reliability"]["system"] == "comp"]
    assert phi["phi"].astype(float).isna().all()
    assert set(tables["dstudy"]["system"]) == {"base"}
    fits = tables["diagnostics"]
    assert not (
        (fits["subset"] == "comp") & (fits["analysis"] == "variance") & (fits["status"] == "fitted")
    ).any()
