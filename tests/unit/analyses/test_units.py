"""Per-system units kept between runs of an analysis job (infrepro/analyses/common/units.py): seeds
added to one system refit only its units, and the tables equal a run from scratch."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest
from kept_stores import UNUSABLE, unusable_store

from infrepro.analyses import run_analysis
from infrepro.analyses.common.units import UnitStore
from infrepro.core.vocabulary import RUN, SYSTEM
from infrepro.validation.simulate import Design, Facet, System, simulate

DESIGN = Design(
    systems=(
        System("A", levels={"seed": 5}, facets=("seed",), run_sd=0.02),
        System("B", levels={"seed": 3, "lr": 2}, run_sd=0.03, effect=0.02, property_slope=0.01),
    ),
    facets=(Facet("seed", 5), Facet("lr", 2, sd=0.01)),
    n_segments=40,
)


def _data(store: UnitStore | None, drop_runs: int = 0):
    """The simulated experiment, without the baseline's last ``drop_runs`` runs."""
    sim = simulate(DESIGN, 11)
    data = sim.metric_data()
    evaluation = data.evaluation
    if drop_runs:
        runs_a = sorted(evaluation.loc[evaluation[SYSTEM] == "A", RUN].unique())
        evaluation = evaluation[~evaluation[RUN].isin(runs_a[-drop_runs:])].reset_index(drop=True)
    # a binned version of the property: its cell contrasts carry effect sizes
    bins = pd.cut(evaluation["length"], 2, labels=["short", "long"]).astype(str)
    evaluation = evaluation.assign(length_bin=bins)
    order = {"length_bin": ["short", "long"]}
    return replace(data, evaluation=evaluation, runs=sim.runs, units=store, bin_order=order)


def _metaparam(data) -> dict[str, pd.DataFrame]:
    components = run_analysis("variance", data)["variance_components"]
    return run_analysis("metaparam", data, {"components": components})


def _assert_same(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    assert got.keys() == want.keys()
    for name in want:
        pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)


def test_new_seeds_of_one_system_refit_only_its_units(tmp_path) -> None:
    path = tmp_path / "metaparam.json"
    before = UnitStore.open(path)
    _metaparam(_data(before, drop_runs=2))
    assert before.reused == 0 and before.current
    before.save()

    after = UnitStore.open(path)
    got = _metaparam(_data(after))
    units_b = sum(1 for _ in after.current) - before.reused
    assert 0 < after.reused < len(after.current)  # B's units reused, A's (new seeds) refitted
    assert units_b > 0
    _assert_same(got, _metaparam(_data(None)))  # equal to a run without any store
    # the contrasts kept from the first run carry the new effect scale (a fit to all systems)
    assert len(got["contrasts"]) and got["contrasts"]["effect_sd"].nunique() == 1

    after.save()
    again = UnitStore.open(path)
    _assert_same(_metaparam(_data(again)), got)
    assert again.reused == len(again.current)


@pytest.mark.parametrize("content", UNUSABLE)
def test_an_unreadable_or_foreign_store_is_ignored(tmp_path, content) -> None:
    path = tmp_path / "metaparam.json"

    def save() -> None:
        store = UnitStore.open(path)
        _metaparam(_data(store))
        store.save()

    unusable_store(path, content, save)
    store = UnitStore.open(path)
    assert store.previous == {}
    _metaparam(_data(store))
    assert store.reused == 0


def test_a_changed_option_refits_every_unit(tmp_path) -> None:
    path = tmp_path / "metaparam.json"
    first = UnitStore.open(path)
    _metaparam(_data(first))
    first.save()
    second = UnitStore.open(path)
    data = _data(second)
    data = replace(data, options={**data.options, "metaparam_facets": ["seed"]})
    _metaparam(data)
    assert second.reused == 0


def test_a_unit_is_written_as_its_fields_and_read_back_equal(tmp_path) -> None:
    """The store writes a unit's own lists (no deep copy first): the JSON is that of
    dataclasses.asdict, and reading it back gives the unit."""
    import dataclasses
    import json

    from infrepro.analyses.common.units import UnitStore, _Unit

    unit = _Unit(
        {"glrt": [{"metric": "ter", "p_value": 0.5}], "means": []},
        [{"status": "fitted", "n_obs": 3}],
        [{"quantiles": "1;2"}],
    )
    assert UnitStore.encode(unit) == dataclasses.asdict(unit)
    store = UnitStore(tmp_path / "units.json")
    store.current["k"] = unit
    store.save()
    saved = json.loads((tmp_path / "units.json").read_text())
    assert saved["entries"]["k"] == dataclasses.asdict(unit)
    assert UnitStore.open(tmp_path / "units.json").previous["k"] == unit
