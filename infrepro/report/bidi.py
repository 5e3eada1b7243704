"""Names isolated from the text around them in the HTML page (issue 42, item 2).

A right-to-left name beside a sentence's numbers takes them into its run: after an Arabic or
Hebrew name, ": +4.91 [−1.22, 11.04]" is drawn right to left, digits and brackets reordered; a
bidirectional control would reverse all that follows it. Such controls are refused in names up
front (``infrepro.io.names``); the page, which may be rendered from any tables, isolates besides
every name that can move the text around it, as the HTML standard advises for text of unknown
direction: each of its occurrences in the page's text becomes ``<bdi>name</bdi>`` (an isolate
whose direction is the name's own; an embedding or override left open inside it ends with it),
and in a ``title`` attribute (a tooltip) it is wrapped in U+2068 FIRST STRONG ISOLATE and
U+2069 POP DIRECTIONAL ISOLATE. The shortened forms the page shows of a long name
(``plots.names.short_name``) and a property's label (``_`` read as a space) are isolated too.

Only names that hold a right-to-left letter, an Arabic digit or a bidirectional control are
isolated: in a left-to-right page the text around a name of left-to-right letters, European
digits and neutral characters keeps its order whether the name is isolated or not (the Unicode
bidirectional algorithm resolves all of them to the left-to-right level), and wrapping every
occurrence of a name like ``base`` would need to tell it from the same letters in a word.
Scripts, styles, figures (their text is drawn as paths), comments and the page's ``<title>``
are left as they are.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Mapping

import pandas as pd
from markupsafe import escape

from infrepro.core.vocabulary import RUN, SYSTEM
from infrepro.plots.names import TAIL, short_name
from infrepro.report.inputs import ReportSettings

# the bidirectional classes that can move the text around a name in a left-to-right line
MOVERS = frozenset({"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
# the tables' columns that hold names (their values); facet columns hold levels
NAME_COLUMNS = (SYSTEM, "reference", RUN, "best_run", "group", "level1", "level2", "bin")
FSI, PDI = "\u2068", "\u2069"
# what is not the page's text: scripts, styles, figures, comments, the title; then any tag
_NOT_TEXT = re.compile(
    r"<(script|style|svg|title|textarea)\b.*?</\1\s*>|<!--.*?-->|(<[^>]*>)", re.DOTALL
)
_TITLE = re.compile(r'(\stitle=")([^"]*)(")')


def reorders(name: str) -> bool:
    """Whether ``name`` can move the text around it in a left-to-right line: it holds a
    right-to-left letter, an Arabic digit or a bidirectional control."""
    return any(unicodedata.bidirectional(c) in MOVERS for c in name)


def shown_forms(name: str) -> set[str]:
    """``name`` as the page may show it: itself, its shortened forms and, as a property's label,
    with ``_`` as spaces."""
    forms = {name, name.replace("_", " ")}
    forms |= {short_name(name, limit) for limit in range(TAIL + 2, len(name))}
    return {form for form in forms if reorders(form)}


def user_names(tables: Mapping[str, pd.DataFrame], settings: ReportSettings) -> list[str]:
    """Every name of the experiment the page may show that can move the text around it:
    systems, metrics, facets, properties and the experiment's name (``settings``), and the
    values of the tables' name and facet columns (runs, levels, bins)."""
    names = {
        settings.name,
        *settings.systems,
        *settings.metrics,
        *settings.facets,
        *settings.properties,
    }
    for table in tables.values():
        for column in (*NAME_COLUMNS, *settings.facets):
            if column in table.columns:
                names.update(str(v) for v in table[column].dropna().unique())
    return sorted(name for name in names if reorders(name))


def isolate_names(page: str, names: Iterable[str]) -> str:
    """``page`` with every occurrence of each of ``names`` (:func:`user_names`), in any form it
    is shown in, isolated from the text around it; the page itself when there is none."""
    forms = {form for name in names for form in shown_forms(name)}
    if not forms:
        return page
    spelled: dict[str, str] = {}  # as the page's HTML writes it -> the form
    for form in forms:
        spelled[str(escape(form))] = form
        spelled[html.escape(form)] = form
    found = re.compile("|".join(map(re.escape, sorted(spelled, key=len, reverse=True))))
    out: list[str] = []
    at = 0
    for match in _NOT_TEXT.finditer(page):
        out.append(found.sub(lambda m: f"<bdi>{m.group()}</bdi>", page[at : match.start()]))
        tag = match.group(2)
        if tag is not None and ' title="' in tag:
            tag = _TITLE.sub(lambda t: t.group(1) + _isolated(found, t.group(2)) + t.group(3), tag)
            out.append(tag)
        else:
            out.append(match.group())
        at = match.end()
    out.append(found.sub(lambda m: f"<bdi>{m.group()}</bdi>", page[at:]))
    return "".join(out)


def _isolated(forms: re.Pattern[str], value: str) -> str:
    """An attribute's value with each form of a name between FSI and PDI."""
    return forms.sub(lambda m: FSI + m.group() + PDI, value)
