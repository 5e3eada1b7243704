"""Formula parsing and fixed-effect design: R's term order and model.matrix column names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.lmm import LmmError, parse_formula
from infrepro.lmm.design import aliased_columns, build_fixed, encode_factor
from infrepro.lmm.formula import ParsedFormula


def _labels(f: ParsedFormula) -> tuple[str, ...]:
    """R's term labels of the fixed part (without the intercept)."""
    return tuple(":".join(t) for t in f.fixed_terms)


def test_basic_parse() -> None:
    f = parse_formula("score ~ system + (1|segment_id)")
    assert f.response == "score"
    assert f.intercept
    assert f.fixed_terms == (("system",),)
    assert f.random_names == ("segment_id",)


def test_star_expansion_and_r_term_order() -> None:
    # R: attr(terms(y ~ b:x + a:b + a + x*b), "term.labels") == a, x, b, b:x, b:a
    f = parse_formula("y ~ b:x + a:b + a + x*b + (1|g)")
    assert _labels(f) == ("a", "x", "b", "b:x", "b:a")
    f3 = parse_formula("y ~ a*b*c + (1|g)")
    assert _labels(f3) == ("a", "b", "c", "a:b", "a:c", "b:c", "a:b:c")


def test_parentheses_removal_and_intercept() -> None:
    f = parse_formula("y ~ (a + b)*c - b + (1|s)")
    assert _labels(f) == ("a", "c", "a:c", "b:c")
    assert not parse_formula("y ~ 0 + a + (1|s)").intercept
    assert not parse_formula("y ~ a - 1 + (1|s)").intercept
    assert parse_formula("y ~ 1 + (1|s)").fixed_terms == ()


def test_random_terms_nested_and_interaction() -> None:
    f = parse_formula("y ~ 1 + (1|s) + (1 | a/b) + (1|f1:f2)")
    assert f.random_names == ("s", "a", "a:b", "f1:f2")
    assert f.random_terms[2].variables == ("a", "b")
    assert parse_formula("y ~ 1 + (1|a/b/c)").random_names == ("a", "a:b", "a:b:c")


def test_backquoted_names() -> None:
    f = parse_formula("y ~ `len class` + (1|`seg id`)")
    assert _labels(f) == ("len class",)
    assert f.random_names == ("seg id",)


@pytest.mark.parametrize(
    ("formula", "fragment"),
    [
        ("y ~ x + (x|g)", "(x|g)"),
        ("y ~ x + (1 + x|g)", "(1 + x|g)"),
        ("y ~ x + (0 + x + z|g)", "(0 + x + z|g)"),
        ("y ~ x + (0 + log(x)|g)", "dummy(factor"),
        ("y ~ x + (0 + dummy(a)|g)", "dummy(factor"),
        ("y ~ x + (1 + x || a/b)", "nested"),
        ("y ~ log(x) + (1|g)", "log(x)"),
        ("y ~ a^2 + (1|g)", "^2"),
        ("y ~ a", "no random-effects terms"),
        ("y ~ a + (1|g) + (1|g)", "['g']"),
        ("log(y) ~ a + (1|g)", "response"),
        ("y ~ a + (1|g", "parenthes"),
        ("y ~ 2 + (1|g)", "'2'"),
    ],
)
def test_unsupported_formulas_name_the_term(formula: str, fragment: str) -> None:
    with pytest.raises(LmmError) as err:
        parse_formula(formula)
    assert fragment in str(err.value)


def _toy() -> pd.DataFrame:
    # the same toy data as in R: a = rep(c("x","y"), 10), b = rep(c("p","q","r","s"), 5), x = 1:20
    return pd.DataFrame(
        {
            "a": ["x", "y"] * 10,
            "b": ["p", "q", "r", "s"] * 5,
            "x": np.arange(1, 21, dtype=float),
            "y": np.zeros(20),
        }
    )


@pytest.mark.parametrize(
    ("rhs", "names"),
    [
        # colnames(model.matrix(~ <rhs>, d)) in R 4.2
        ("b + a + a:b", ["(Intercept)", "bq", "br", "bs", "ay", "bq:ay", "br:ay", "bs:ay"]),
        ("x:a", ["(Intercept)", "x:ax", "x:ay"]),
        (
            "b:x + a:b",
            ["(Intercept)", "bp:x", "bq:x", "br:x", "bs:x", "bp:ay", "bq:ay", "br:ay", "bs:ay"],
        ),
        ("0 + a + b", ["ax", "ay", "bq", "br", "bs"]),
        ("0 + a:b", ["ax:bp", "ay:bp", "ax:bq", "ay:bq", "ax:br", "ay:br", "ax:bs", "ay:bs"]),
    ],
)
def test_model_matrix_names_match_r(rhs: str, names: list[str]) -> None:
    parsed = parse_formula(f"y ~ {rhs} + (1|g)")
    design, X = build_fixed(parsed, _toy(), [], {})
    assert list(design.columns) == names
    assert X.shape == (20, len(names))


def test_model_matrix_values() -> None:
    df = _toy()
    parsed = parse_formula("y ~ b * a + x:a + (1|g)")
    design, X = build_fixed(parsed, df, [], {})
    cols = dict(zip(design.columns, X.T, strict=True))
    np.testing.assert_array_equal(cols["(Intercept)"], 1.0)
    np.testing.assert_array_equal(cols["bq:ay"], ((df.b == "q") & (df.a == "y")).astype(float))
    np.testing.assert_array_equal(cols["ay:x"], (df.a == "y") * df.x)


def test_factor_levels_reference_and_string_sort() -> None:
    s = pd.Series(["b", "B", "a", "10", "9", "b"])
    codes, levels = encode_factor(s, "s")
    assert levels == ("10", "9", "B", "a", "b")  # C-locale (byte) order
    assert [levels[c] for c in codes] == list(s)
    _, levels = encode_factor(s, "s", reference="b")
    assert levels == ("b", "10", "9", "B", "a")
    with pytest.raises(LmmError, match="not a level"):
        encode_factor(s, "s", reference="zzz")


def test_reference_levels_and_forced_factors() -> None:
    df = pd.DataFrame(
        {
            "sys": ["base", "comp", "alt"] * 4,
            "k": [1, 2, 3, 4] * 3,
            "flag": [True, False] * 6,
            "y": np.arange(12.0),
        }
    )
    parsed = parse_formula("y ~ sys + k + flag + (1|g)")
    design, _ = build_fixed(parsed, df, ["k"], {"sys": "comp"})
    assert list(design.columns) == [
        "(Intercept)",
        "sysalt",
        "sysbase",
        "k2",
        "k3",
        "k4",
        "flagTRUE",
    ]


def test_aliased_columns() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    X = np.column_stack([np.ones(50), x, 2 * x - 1, rng.normal(size=50), np.zeros(50)])
    assert aliased_columns(X) == [2, 4]
    assert aliased_columns(X[:, [0, 1, 3]]) == []


def test_uncorrelated_slopes_expand_like_lme4() -> None:
    f = parse_formula("y ~ x + (1|s) + (1 + x + z || g)")
    assert f.random_names == ("s", "g", "x|g", "z|g")
    assert [t.slope for t in f.random_terms] == [None, None, "x", "z"]
    assert [t.written for t in f.random_terms] == ["(1|s)", "(1|g)", "(0 + x|g)", "(0 + z|g)"]
    assert parse_formula("y ~ x + (0 + x || g)").random_names == ("x|g",)
    assert parse_formula("y ~ x + (1 || g)").random_names == ("g",)


def test_dummy_terms_give_one_variance_per_level() -> None:
    f = parse_formula(
        "y ~ sys + (1|s) + (0 + dummy(sys, \"A\")|run) + (0 + dummy(`my sys`, 'B 2')|run)"
    )
    assert f.random_names == (
        "s",
        'dummy(sys, "A")|run',
        'dummy(my sys, "B 2")|run',
    )
    assert f.random_terms[1].indicator == ("sys", "A")
    assert f.random_terms[2].indicator == ("my sys", "B 2")
    assert _labels(f) == ("sys",)


def test_quoted_levels_may_hold_formula_syntax() -> None:
    f = parse_formula('y ~ sys + (1|s) + (0 + dummy(sys, "A~ (1|x)")|run)')
    assert f.random_terms[1].indicator == ("sys", "A~ (1|x)")


def test_a_level_with_both_quote_kinds_reads_back_exactly() -> None:
    from infrepro.core.vocabulary import string_literal
    from infrepro.lmm.formula import _tokenize

    for level in ["plain", "it's", 'say "hi"', "both ' and \"", "back\\slash", '\\"']:
        written = string_literal(level)
        strings = [t.text for t in _tokenize(f"dummy(system, {written})") if t.kind == "string"]
        assert strings == [level], written
    assert string_literal("baseline") == '"baseline"'  # the common case as before
