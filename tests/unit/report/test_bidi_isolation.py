"""The page's isolation of names (infrepro/report/bidi.py; issue 42, item 2; the browser test is
tests/e2e/test_report_bidi.py): every occurrence in the page's text of a name that can move the
text around it, and of its shortened forms, becomes a ``<bdi>``; a tooltip's gets FSI...PDI;
scripts, styles, figures, comments and the title are left alone, and a page without such names
is the same page."""

from __future__ import annotations

from infrepro.plots.names import short_name
from infrepro.report.bidi import isolate_names, reorders, user_names
from infrepro.report.inputs import ReportSettings

ARABIC = "نموذج عربي"
PAGE = (
    "<!DOCTYPE html><html><head><title>{n} report</title><style>p>b{{}}</style>"
    "<script>var s = '{n}';</script></head><body>"
    '<p title="{n}: +4.91">between {n} and base: improvement +4.91 [1.17, 8.66]</p>'
    "<!-- {n} --><svg><text>{n}</text></svg><td>{n}&#39;s</td><li>{short}, 3</li></body></html>"
)


def test_a_right_to_left_name_is_isolated_wherever_the_page_text_shows_it() -> None:
    long = ARABIC * 5
    page = PAGE.format(n=ARABIC, short=short_name(long, 24))
    out = isolate_names(page, [ARABIC, long])
    assert out.count("<bdi>") == 3, out
    assert f"between <bdi>{ARABIC}</bdi> and base" in out
    assert f"<td><bdi>{ARABIC}</bdi>&#39;s</td>" in out
    assert f"<li><bdi>{short_name(long, 24)}</bdi>, 3</li>" in out
    assert f'title="\u2068{ARABIC}\u2069: +4.91"' in out
    for untouched in (
        f"<title>{ARABIC} report</title>",
        f"var s = '{ARABIC}';",
        f"<!-- {ARABIC} -->",
        f"<svg><text>{ARABIC}</text></svg>",
    ):
        assert untouched in out


def test_a_page_without_names_that_move_text_is_unchanged() -> None:
    page = PAGE.format(n="comp-7", short="comp")
    assert isolate_names(page, ["comp-7", "base"]) == page
    assert isolate_names(page, []) == page
    assert not reorders("comp-7 (x) é 日本語") and reorders("a\u202eb") and reorders("٣")


def test_the_names_come_from_the_settings_and_the_tables_name_columns() -> None:
    import pandas as pd

    settings = ReportSettings(
        name="x", baseline="base", systems=["base", ARABIC], metrics=["m"], better={}
    )
    tables = {"means": pd.DataFrame({"group": ["מערכת", "b"], "estimate": [1.0, 2.0]})}
    assert user_names(tables, settings) == sorted([ARABIC, "מערכת"])
