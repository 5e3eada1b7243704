"""One decision, said once (issue 27, acceptance 1): read a finished run's report page and
paste-ready files and check that every place that shows a pair's decision shows the record's
values (``results/tables/decisions.csv``): the decision table's row, the headline card, the
forest plot, the sentence to quote and the LaTeX row.

The page is parsed into a small element tree (the standard library's HTML parser); the numbers
are compared as the report words them (``infrepro.report.decisions``), so a view that computed
its own number, rounded differently or lost a sign fails here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from infrepro.core.decisions import MEANS_LEVEL, PairDecision, interval_parts, level_text
from infrepro.core.vocabulary import file_stem
from infrepro.io.results import read_result_table
from infrepro.plots.names import short_name
from infrepro.report.decisions import interval, records_of, sentence, verdict_text
from infrepro.report.escape import latex_name
from infrepro.report.formatting import points
from infrepro.report.labels import metric_label
from infrepro.report.paper import DAGGER, earlier_look, latex_escape, verdict_cell, wrapped_name
from infrepro.report.verdict import badge

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "source", "wbr"}
NEVER = ("could not be fitted", "Δ = baseline − competitor", "baseline − competitor")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def find_all(self, tag: str, **attrs: str) -> list[Element]:
        found = []
        for child in self.children:
            if isinstance(child, Element):
                if child.tag == tag and all(
                    (value in child.attrs.get(key.rstrip("_"), "").split())
                    if key == "class_"
                    else child.attrs.get(key) == value
                    for key, value in attrs.items()
                ):
                    found.append(child)
                found += child.find_all(tag, **attrs)
        return found

    def find(self, tag: str, **attrs: str) -> Element:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag} {attrs}>"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    return builder.root


def _table_rows(table: Element) -> tuple[list[str], list[list[Element]]]:
    headers = [th.text.strip() for th in table.find_all("th")]
    rows = [tr.find_all("td") for tr in table.find("tbody").find_all("tr")]
    return headers, rows


def _column(headers: list[str], start: str) -> int:
    return next(i for i, h in enumerate(headers) if h.startswith(start))


def check_views(
    results: Path, baseline: str, family: str = "baseline", alpha: float | None = None
) -> int:
    """Assert that the page and the paste-ready files show each record of the named family
    against the baseline as the record says; with ``alpha`` (``report.alpha``), that every
    interval of the decision is labelled with the level 1 − α on every surface
    (:func:`check_levels`); returns how many records were checked."""
    page = (results / "report.html").read_text(encoding="utf-8")
    for phrase in NEVER:
        assert phrase not in page, phrase
    root = parse(page)
    decisions = records_of(read_result_table("decisions", results / "tables" / "decisions.csv"))
    shown = [r for r in decisions if r.family == family and r.reference == baseline]
    assert shown, "no decision records"
    for metric in sorted({r.metric for r in shown}):
        mine = [r for r in shown if r.metric == metric]
        _check_table(root, metric, mine)
        _check_cards(root, mine)
        _check_forest(root, metric, mine)
        _check_sentences(root, metric, mine)
        _check_latex(results / "paper" / f"{file_stem(metric)}.tex", mine)
        if alpha is not None:
            check_levels(root, results, metric, mine, alpha)
    return len(shown)


# a level as a label writes it: "95 %", in LaTeX "95~\%" (and "95\%")
LEVEL = re.compile(r"(\d+(?:\.\d+)?)(?: |~|\\,)?\\?%")


def check_levels(
    root: Element, results: Path, metric: str, records: list[PairDecision], alpha: float
) -> None:
    """Every interval of ``metric``'s decision is labelled with the level it was computed at,
    1 − α (issue 42, item 1), on every surface: the records (``decisions.csv``'s ``interval``
    column), the decision table's header, the cards' and the list's sentences, the forest
    plot's caption, and the LaTeX and Markdown header and caption. The model means and ranks
    are 95 % intervals whatever α, and labelled so; no other level is written."""
    level = level_text(1 - alpha)
    allowed = {level[:-2], level_text(MEANS_LEVEL)[:-2]}
    for record in records:
        kind, said = interval_parts(record.interval)
        assert said == level, (record.system, record.interval, alpha)
        assert f"({record.interval} CI)" in sentence(record, metric_label(record.metric))
    table = root.find("div", id=f"decision-table-{metric}").find("table")
    headers, _ = _table_rows(table)
    assert headers[_column(headers, "improvement")] == f"improvement [{record.interval} CI]"
    assert headers[_column(headers, "model mean")] == f"model mean [{level_text(MEANS_LEVEL)} CI]"
    texts = [li.text for ul in root.find_all("ul", class_="sentences") for li in ul.find_all("li")]
    texts += [p.text for p in root.find_all("p", class_="verdict")]
    texts += [root.find("figure", id=f"forest-{metric}").find("figcaption").text]
    for text in texts:
        found = {m.group(1) for m in LEVEL.finditer(text)}
        assert level[:-2] in found and found <= allowed, (text, level)
    for suffix in (".tex", ".md"):
        paper = (results / "paper" / f"{file_stem(metric)}{suffix}").read_text(encoding="utf-8")
        found = {m.group(1) for m in LEVEL.finditer(paper)}
        assert found == allowed or found == {level[:-2]}, (suffix, found, level)
        assert f"{kind} {level} intervals" in paper.replace("~\\%", " %"), suffix


def _check_table(root: Element, metric: str, records: list[PairDecision]) -> None:
    table = root.find("div", id=f"decision-table-{metric}").find("table")
    headers, rows = _table_rows(table)
    system, gain = _column(headers, "system"), _column(headers, "improvement")
    # "p (max-t ...)", or what a sequential verdict's p is: "repeated p (...)" (§4e.10)
    p = next(i for i, h in enumerate(headers) if h.split(" (")[0].split()[-1:] == ["p"])
    verdict = _column(headers, "verdict")
    by_system = {row[system].attrs.get("title") or row[system].text: row for row in rows}
    for record in records:
        row = by_system[record.system]
        assert row[gain].text == interval(record), (metric, record.system)
        assert row[p].text == record.p_adjusted, (metric, record.system)
        assert row[verdict].text == verdict_text(record), (metric, record.system)
        lower, upper = record.lower, record.upper
        assert (lower > 0 or upper < 0) == record.directional or record.adjust == "holm"


def _check_cards(root: Element, records: list[PairDecision]) -> None:
    cards = {
        c.attrs["data-decision"]: c
        for c in root.find_all("article", class_="card")
        if "data-decision" in c.attrs
    }
    for record in records:
        card = cards["|".join(record.key)]
        said = sentence(record, metric_label(record.metric))
        assert card.find("span", class_="badge").text == badge(record, said).badge
        assert card.find("p", class_="verdict").text.strip() == said
        assert interval(record) in card.text


def _check_forest(root: Element, metric: str, records: list[PairDecision]) -> None:
    label = root.find("figure", id=f"forest-{metric}").find("svg").attrs["aria-label"]
    for record in records:
        assert f"{record.system}: {interval(record)}, {verdict_text(record)}" in label


def _check_sentences(root: Element, metric: str, records: list[PairDecision]) -> None:
    root.find("h3", id=f"decision-{metric}")  # the metric's section, its sentences below it
    said = {li.text for ul in root.find_all("ul", class_="sentences") for li in ul.find_all("li")}
    for record in records:
        assert sentence(record, metric_label(record.metric)) in said, record.system


def _check_latex(path: Path, records: list[PairDecision]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for record in records:
        name = short_name(record.system, 10_000)
        names = (latex_name(name), wrapped_name(name))  # a long name wraps in its column
        index = next(
            i for i, line in enumerate(lines) if any(f" & {n} & " in f" & {line}" for n in names)
        )
        cells = lines[index].split(" & ")
        below = lines[index + 1].split(" & ")
        mark = DAGGER if earlier_look(record) else ""  # read at a look with fewer runs
        assert latex_escape(points(record.improvement, sign=True) + mark) in cells, cells
        assert latex_escape(f"[{points(record.lower)}, {points(record.upper)}]") in below
        assert record.p_adjusted in cells
        assert latex_escape(verdict_cell(record)) in cells, cells
