"""The user-name mapping of the analyses (analyses.names): names that formulas cannot hold."""

from __future__ import annotations

import pandas as pd

from infrepro.analyses.common.names import Names, formula_name


def test_names_round_trip_through_formulas_and_tables() -> None:
    users = ["comet-22", "rand seed", "(1|x) + y", "länge", "srclen", "srclen-ratio"]
    names = Names.of(users)
    inner = names.internal_list(users)
    assert len(set(inner)) == len(users)
    assert all(formula_name(n) == n for n in inner)  # internal names need no quoting
    formula = f"{inner[0]} ~ system * {inner[5]} + (1|segment_id) + (1|{inner[1]}:{inner[4]})"
    table = pd.DataFrame({"property": [inner[5]], "model": [formula], inner[2]: ["v"]})
    back = names.user_table(table)
    assert list(back.columns) == ["property", "model", "(1|x) + y"]
    assert back.loc[0, "property"] == "srclen-ratio"
    assert back.loc[0, "model"] == (
        "`comet-22` ~ system * `srclen-ratio` + (1|segment_id) + (1|`rand seed`:srclen)"
    )
    options = names.internal_options({"facets": {"a": ["rand seed"]}, "vca_interactions": []})
    assert options["facets"] == {"a": [inner[1]]}
    assert names.internal_options({"vca_interactions": ["rand seed/srclen"]})[
        "vca_interactions"
    ] == [f"{inner[1]}/{inner[4]}"]


def test_a_user_value_that_looks_internal_is_left_alone() -> None:
    # a system '_v1_' and a level '_v0_' are data: the internal names take a longer prefix
    names = Names.of(["ter", "seed"], values={"_v1_", "_v0_", "baseline"})
    inner = names.internal_list(["ter", "seed"])
    assert not {"_v0_", "_v1_"} & set(inner)
    table = pd.DataFrame({"system": ["_v1_", "baseline"], "facet": [inner[1], "_v0_"]})
    back = names.user_table(table)
    assert list(back["system"]) == ["_v1_", "baseline"]
    assert list(back["facet"]) == ["seed", "_v0_"]
    assert Names.of(["ter"]).internal("ter") == "_v0_"  # unchanged when nothing collides


def test_formula_name_escapes_backquotes_as_r_does() -> None:
    assert formula_name("plain_name") == "plain_name"
    assert formula_name("`tick`") == "`\\`tick\\``"
    assert formula_name("a\\b") == "`a\\\\b`"


def test_a_centred_property_is_written_as_one_name_in_formulas_and_cells() -> None:
    """The run slopes' centred column of ``src len`` is ``src len_c`` (`` `src len_c` `` in a
    formula), not `` `src len`_c ``, which R would read as a different, invalid term."""
    from infrepro.core.vocabulary import centred, runaware_property_formula

    names = Names.of(["ter", "src len", "length"])
    metric, prop, plain = names.internal_list(["ter", "src len", "length"])
    model = runaware_property_formula(metric, "system", prop, True, "(1|run_id)")
    table = pd.DataFrame({"model": [model], "term": [centred(prop)], "plain": [centred(plain)]})
    back = names.user_table(table)
    assert back.loc[0, "model"] == (
        "ter ~ system * `src len` + (1|segment_id) + (1|run_id) + (0 + `src len_c` | run_id)"
    )
    assert back.loc[0, "term"] == "src len_c"
    assert back.loc[0, "plain"] == "length_c"
