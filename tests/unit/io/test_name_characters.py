"""Names whose characters would mislead (issue 42, items 2, 4 and 5; infrepro/io/names.py):
invisible characters and compatibility look-alikes that split one system in two, bidirectional
controls that reorder the text around a name, and spreadsheet formulas that a table's cell
would run. Each is refused up front, naming the code point or character, the file, the line and
the column; numbers, joiners and variation selectors stay names."""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from infrepro.experiment import load_experiment
from infrepro.io import InputError, ScoresColumns, read_runs_sheet, read_scores_table
from infrepro.io.names import name_key
from infrepro.io.testset import read_testset

COLUMNS = ScoresColumns.from_config(
    {
        "segment": "seg",
        "system": "sys",
        "run": ["sys", "seed"],
        "metrics": ["m"],
        "facets": ["seed"],
    }
)


def scores(tmp_path: Path, systems: list[str], seeds: tuple[str, ...] = ("1", "2")) -> Path:
    """A scores file: two segments for each system and seed, in the order given (line 2 on)."""
    rows = [
        {"seg": f"s{j}", "sys": system, "seed": seed, "m": 0.5}
        for system in systems
        for seed in seeds
        for j in range(2)
    ]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False, quoting=csv.QUOTE_ALL)  # a \r stays in its cell
    return path


def runs_sheet(tmp_path: Path, systems: list[str], facet: str = "seed") -> Path:
    (tmp_path / "h.txt").write_text("x\n")
    lines = [f"run_id\tsystem\thypotheses\t{facet}"]
    lines += [f"r{i}\t{system}\th.txt\t{i}" for i, system in enumerate(systems)]
    path = tmp_path / "runs.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- item 4: a zero-width space splits a system ------------------------------------------------
INVISIBLE = {
    "\u200b": "U+200B ZERO WIDTH SPACE",
    "\u00ad": "U+00AD SOFT HYPHEN",
    "\ufeff": "U+FEFF ZERO WIDTH NO-BREAK SPACE",
    "\u2060": "U+2060 WORD JOINER",
    "\u180e": "U+180E MONGOLIAN VOWEL SEPARATOR",
    "\u034f": "U+034F COMBINING GRAPHEME JOINER",
}


@pytest.mark.parametrize("char", list(INVISIBLE))
def test_a_zero_width_space_does_not_split_a_system(tmp_path: Path, char: str) -> None:
    """``comp\\u200b`` beside ``comp`` was a third system with its own runs: refused, naming the
    code point and both lines."""
    path = scores(tmp_path, ["base", "comp", "comp" + char])
    with pytest.raises(InputError) as err:
        read_scores_table(path, COLUMNS)
    message = str(err.value)
    assert message.startswith(f"{path}:10: column 'sys': system "), message
    assert INVISIBLE[char] in message and "(line 6)" in message, message
    assert char not in message  # the message shows the code point, never the character


@pytest.mark.parametrize("char", ["\u200b", "\u00ad", "\ufeff"])
def test_a_zero_width_space_does_not_split_a_system_of_the_runs_sheet(
    tmp_path: Path, char: str
) -> None:
    sheet = runs_sheet(tmp_path, ["base", "comp", char + "comp"])
    with pytest.raises(InputError, match=r"runs.tsv:4: column 'system': ") as err:
        read_runs_sheet(sheet)
    assert INVISIBLE[char] in str(err.value) and "(line 3)" in str(err.value)


@pytest.mark.parametrize("char", list(INVISIBLE))
def test_an_invisible_character_without_a_plain_twin_is_refused_too(
    tmp_path: Path, char: str
) -> None:
    """A name that holds a character that shows nothing cannot be typed or searched as it
    reads (a config's baseline, a filter on a table): refused, naming the code point."""
    path = scores(tmp_path, ["base", "co" + char + "mp"])
    with pytest.raises(InputError, match=r"scores.csv:6: column 'sys': system ") as err:
        read_scores_table(path, COLUMNS)
    assert INVISIBLE[char] in str(err.value) and "character 3" in str(err.value)


@pytest.mark.parametrize(
    ("twin", "code_points"),
    [
        ("ｃｏｍｐ", "U+FF43 FULLWIDTH LATIN SMALL LETTER C"),  # NFKC: comp
        ("com\ufb01", "U+FB01 LATIN SMALL LIGATURE FI"),  # the ligature of "comfi"
        ("comp\u00a0", "U+00A0 NO-BREAK SPACE"),
    ],
)
def test_compatibility_lookalikes_are_refused_naming_code_points(
    tmp_path: Path, twin: str, code_points: str
) -> None:
    plain = unicodedata.normalize("NFKC", twin).strip()
    path = scores(tmp_path, ["base", plain, twin])
    with pytest.raises(InputError, match=r"scores.csv:10: column 'sys': system ") as err:
        read_scores_table(path, COLUMNS)
    assert code_points in str(err.value) and "(line 6)" in str(err.value)


def test_a_decomposed_twin_names_its_code_points() -> None:
    """The message of two normal forms shows which code points differ (it showed two identical
    names)."""
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert name_key(composed) == name_key(decomposed)
    with pytest.raises(InputError) as err:
        from infrepro.io.names import check_names

        check_names([composed, decomposed], "x.tsv", "system", lines=[2, 3])
    message = str(err.value)
    assert "U+00E9 LATIN SMALL LETTER E WITH ACUTE" in message, message
    assert "U+0065 LATIN SMALL LETTER E, U+0301 COMBINING ACUTE ACCENT" in message, message


def test_a_baseline_spelled_in_another_normal_form_is_refused_naming_code_points(
    tmp_path: Path,
) -> None:
    path = scores(tmp_path, ["caf\u00e9", "comp"])
    config = {
        "experiment": "x",
        "scores": str(path),
        "columns": {"segment": "seg", "system": "sys", "run": ["sys", "seed"], "metrics": ["m"]},
        "better": {"m": "higher"},
        "baseline": "cafe\u0301",
        "incomplete_runs": "reject",
        "property_options": {},
        "analyses": {},
    }
    with pytest.raises(InputError) as err:
        load_experiment(config)
    message = str(err.value)
    assert "baseline" in message and "U+0301 COMBINING ACUTE ACCENT" in message, message
    assert "U+00E9 LATIN SMALL LETTER E WITH ACUTE" in message, message


@pytest.mark.parametrize(
    "name",
    [
        "\U0001f469\u200d\U0001f4bb",  # woman technologist: a zero-width joiner makes the emoji
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian: a zero-width non-joiner
        "\u2764\ufe0f",  # heavy black heart, emoji presentation (variation selector 16)
        "-1",  # numbers: no spreadsheet reads them as formulas
        "+0.5",
        "-1e-3",
    ],
)
def test_joiners_variation_selectors_and_numbers_stay_names(tmp_path: Path, name: str) -> None:
    path = scores(tmp_path, ["base", name], seeds=("1", "-2"))
    table = read_scores_table(path, COLUMNS)
    assert set(table["system"]) == {"base", name}


# -- item 2: a right-to-left override reverses the report's sentences ----------------------------
BIDI = {
    "\u202e": "U+202E RIGHT-TO-LEFT OVERRIDE",
    "\u200f": "U+200F RIGHT-TO-LEFT MARK",
    "\u202a": "U+202A LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "U+202B RIGHT-TO-LEFT EMBEDDING",
    "\u2067": "U+2067 RIGHT-TO-LEFT ISOLATE",
    "\u061c": "U+061C ARABIC LETTER MARK",
}


@pytest.mark.parametrize("char", list(BIDI))
def test_a_right_to_left_override_in_a_system_name_is_refused(tmp_path: Path, char: str) -> None:
    """A bidirectional control reorders the text around the name in every output that cannot
    isolate it (CSV, LaTeX, Markdown, a terminal): refused in any name, naming it."""
    path = scores(tmp_path, ["base", "comp" + char])
    with pytest.raises(InputError, match=r"scores.csv:6: column 'sys': system ") as err:
        read_scores_table(path, COLUMNS)
    assert BIDI[char] in str(err.value) and char not in str(err.value)
    sheet = runs_sheet(tmp_path, ["base", "comp", "x" + char])
    with pytest.raises(InputError, match=r"runs.tsv:4: column 'system': system ") as err:
        read_runs_sheet(sheet)
    assert BIDI[char] in str(err.value)


def test_a_bidirectional_control_in_a_facet_level_segment_or_column_is_refused(
    tmp_path: Path,
) -> None:
    path = scores(tmp_path, ["base", "comp"], seeds=("1", "\u202e2"))
    with pytest.raises(InputError, match=r"scores.csv:4: column 'seed': level ") as err:
        read_scores_table(path, COLUMNS)
    assert BIDI["\u202e"] in str(err.value)
    sheet = runs_sheet(tmp_path, ["base", "comp"], facet="lr\u202e")
    with pytest.raises(InputError, match=r"runs.tsv:1: column ") as err:
        read_runs_sheet(sheet)
    assert BIDI["\u202e"] in str(err.value) and "\u202e" not in str(err.value)
    testset = tmp_path / "t.tsv"
    testset.write_text("segment_id\treference\ns1\ta\ns\u200f2\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"t.tsv:3: column 'segment_id': segment_id ") as err:
        read_testset(testset)
    assert BIDI["\u200f"] in str(err.value)


# -- item 5: spreadsheet formulas in names are written raw -------------------------------------
FORMULAS = [
    ("=cmd|' /C calc'!A0", "="),
    ("@SUM(1+1)*cmd|' /C calc'!A0", "@"),
    ("+1+cmd|' /C calc'!A0", "+"),
    ("-2+3+cmd|' /C calc'!A0", "-"),
    ("-base", "-"),
    ("\t=1+1", "a tab"),
    ("\r=1+1", "a carriage return"),
    ("\uff1dSUM(A1)", "="),  # a full-width equals sign: a formula in some spreadsheets
]


@pytest.mark.parametrize(("name", "first"), FORMULAS)
def test_spreadsheet_formulas_in_names_are_refused(tmp_path: Path, name: str, first: str) -> None:
    """A table's cell that starts with = + - @, a tab or a carriage return is a formula to a
    spreadsheet (OWASP, CSV injection): such a name is refused, naming the character."""
    path = scores(tmp_path, ["base", name])
    with pytest.raises(InputError, match=r"scores.csv:6: column 'sys': system ") as err:
        read_scores_table(path, COLUMNS)
    message = str(err.value)
    assert f"starts with {first}" in message or f"starts with '{first}'" in message, message
    assert "spreadsheet" in message and "\n" not in message and "\r" not in message


@pytest.mark.parametrize(("name", "first"), FORMULAS[:5])
def test_spreadsheet_formulas_in_levels_facets_and_metrics_are_refused(
    tmp_path: Path, name: str, first: str
) -> None:
    path = scores(tmp_path, ["base", "comp"], seeds=("1", name))
    with pytest.raises(InputError, match=r"scores.csv:4: column 'seed': level "):
        read_scores_table(path, COLUMNS)
    sheet = runs_sheet(tmp_path, ["base", "comp"], facet=name)
    with pytest.raises(InputError, match=r"runs.tsv:1: facet .*spreadsheet"):
        read_runs_sheet(sheet)
    frame = pd.read_csv(scores(tmp_path, ["base", "comp"]), dtype=str)
    frame.rename(columns={"m": name}).to_csv(tmp_path / "metric.csv", index=False)
    columns = ScoresColumns.from_config(
        {"segment": "seg", "system": "sys", "run": ["sys", "seed"], "metrics": [name]}
    )
    with pytest.raises(InputError, match=r"metric.csv:1: .*spreadsheet"):
        read_scores_table(tmp_path / "metric.csv", columns)


def test_a_raw_mode_property_that_is_a_spreadsheet_formula_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test-set column named as a property becomes a column of the tables: refused at the
    test set's header when it starts with a formula character."""
    from label_experiments import with_all_defaults
    from workflow_helpers import make_mini_experiment

    experiment = make_mini_experiment(tmp_path / "exp", n_segments=4, metrics=("ter",))
    lines = experiment.root.joinpath("testset.tsv").read_text().splitlines()
    lines = [lines[0] + "\t@len"] + [f"{line}\t{i}" for i, line in enumerate(lines[1:])]
    experiment.root.joinpath("testset.tsv").write_text("\n".join(lines) + "\n")
    config = with_all_defaults(experiment.config() | {"properties": ["length", "@len"]})
    monkeypatch.chdir(experiment.root)
    with pytest.raises(InputError, match=r"^testset.tsv:1: property '@len' starts with '@'"):
        load_experiment(config)
