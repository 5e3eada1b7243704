"""End-to-end: the bundled example's HTML report, in a real browser and as a file.

Headless Chromium (Debian's ``chromium``) is driven over the DevTools protocol through
``--remote-debugging-pipe``: fd 3 carries commands to the browser and fd 4 its replies, each a JSON
message ended by a NUL byte. No websocket library, nothing downloaded. Without Chromium the
browser tests skip, except in CI (``CI`` set), where they fail (the ``chromium_executable``
fixture, tests/conftest.py).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from workflow_helpers import run_snakemake

from infrepro.core.decisions import df_number

pytestmark = pytest.mark.e2e  # runs on the worker of the example run (tests/conftest.py)
SCREENSHOT = "report-screenshot.png"  # kept in the example run's results/ as a test artifact
SECTIONS = (
    "headline",
    "next",
    "scores",
    "significance",
    "properties",
    "reliability",
    "metaparams",
    "diagnostics",
    "classical",
    "methods",
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)


class Browser:
    """A headless Chromium with one page; collects console, exception, log and network events."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="infrepro-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # The child's ends are copied above fd 10 (close-on-exec), and placed at fds 3 and 4 in
        # the child just before exec; nothing else of ours is inherited (Python's fds are
        # close-on-exec by default).
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def pipes_at_3_and_4() -> None:
            os.dup2(child_in, 3)  # dup2 makes the copies inheritable
            os.dup2(child_out, 4)

        command = [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        self.process = subprocess.Popen(
            command,
            close_fds=False,
            preexec_fn=pipes_at_3_and_4,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_in)
        os.close(child_out)
        self.writer = to_browser_w
        self.reader = from_browser_r
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    # -- protocol ---------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply from Chromium")
            ready, _, _ = select.select([self.reader], [], [], remaining)
            if ready:
                chunk = os.read(self.reader, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        """Send a command and wait for its result; events seen meanwhile are kept."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        target = self.session if session is None else session
        if target:
            message["sessionId"] = target
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """Wait for an event (it may have arrived already)."""
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._read_message(deadline)
            if "method" in event:
                self.events.append(event)
                if event["method"] == method:
                    return event

    # -- page -------------------------------------------------------------------------------
    def open(self, url: str, width: int = 1280, height: int = 900) -> None:
        """Open ``url`` in a new page with console, log and network tracking enabled."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=""
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.send("Browser.close", session="")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self.writer, self.reader):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- fixtures -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report(example_run: Path) -> Path:
    path = example_run / "results" / "report.html"
    assert path.is_file()
    return path


@pytest.fixture(scope="module")
def page(chromium_executable: str, report: Path) -> Iterator[Browser]:
    """The report opened in headless Chromium, every collapsed section expanded."""
    with Browser(chromium_executable) as browser:
        browser.open(report.as_uri(), width=1280, height=900)
        browser.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        yield browser


def html_of(report: Path) -> str:
    return report.read_text(encoding="utf-8")


def section(html: str, name: str) -> str:
    return html.split(f'<section id="{name}">', 1)[1].split("</section>", 1)[0]


# -- in the browser -------------------------------------------------------------------------------
def test_report_loads_offline_without_errors(page: Browser, report: Path) -> None:
    events = page.events
    console = [
        e["params"]
        for e in events
        if e["method"] == "Runtime.consoleAPICalled"
        and e["params"]["type"] in ("error", "warning", "assert")
    ]
    exceptions = [e["params"] for e in events if e["method"] == "Runtime.exceptionThrown"]
    log_errors = [
        e["params"]["entry"]
        for e in events
        if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")
    ]
    assert console == [] and exceptions == [] and log_errors == []
    requests = [
        e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"
    ]
    assert requests == [report.as_uri()]  # the page itself and nothing else
    assert not [e for e in events if e["method"] == "Network.loadingFailed"]


def test_every_figure_is_rendered(page: Browser, report: Path) -> None:
    sizes = page.evaluate(
        "Array.from(document.querySelectorAll('svg.plot')).map(s => {"
        " const r = s.getBoundingClientRect(); const b = s.getBBox();"
        " return [r.width, r.height, b.width, b.height]; })"
    )
    assert len(sizes) == html_of(report).count('class="plot"') >= 30
    assert all(min(size) > 0 for size in sizes), sizes
    unresolved = page.evaluate(
        "Array.from(document.querySelectorAll('svg use')).map(u => u.getAttribute('xlink:href')"
        " || u.getAttribute('href')).filter(h => !document.getElementById(h.slice(1)))"
    )
    assert unresolved == []


def test_headline_table_is_present(page: Browser, example_run: Path) -> None:
    metrics = list(dict.fromkeys(pd.read_csv(example_run / "results/tables/glrt.csv")["metric"]))
    rows = page.evaluate(
        "Array.from(document.querySelectorAll('#headline table.headline-table')).map("
        "t => [t.tBodies[0].rows.length, t.getBoundingClientRect().height])"
    )
    assert len(rows) == len(metrics)
    # the decision (verdict), best vs best (the seeds' reproduction), the paper's all-runs GLRT
    assert all(count == 3 and height > 0 for count, height in rows)
    badges = page.evaluate(
        "Array.from(document.querySelectorAll('#headline .badge')).map(b => b.textContent)"
    )
    assert len(badges) == len(metrics) and all(badges)


def test_tables_sort_when_a_header_is_clicked(page: Browser) -> None:
    script = """(() => {
      const table = Array.from(document.querySelectorAll('#reliability table.sortable')).find(
        t => Array.from(t.tHead.rows[0].cells).some(th => th.textContent === 'φ'));
      const index = Array.from(table.tHead.rows[0].cells).findIndex(th => th.textContent === 'φ');
      const values = () => Array.from(table.tBodies[0].rows).map(
        r => parseFloat(r.cells[index].getAttribute('data-v')));
      table.tHead.rows[0].cells[index].click();
      const up = values();
      table.tHead.rows[0].cells[index].click();
      return [up, values()];
    })()"""
    up, down = page.evaluate(script)
    assert len(up) >= 2
    assert up == sorted(up) and down == sorted(up, reverse=True)


def test_screenshot_of_the_headline(page: Browser, report: Path) -> None:
    box = page.evaluate(
        "(() => { const r = document.querySelector('#headline').getBoundingClientRect();"
        " return [r.bottom + window.scrollY]; })()"
    )
    target = report.parent / SCREENSHOT
    page.screenshot(target, {"x": 0, "y": 0, "width": 1280, "height": min(box[0] + 16, 3000)})
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height > 600


# -- the file ------------------------------------------------------------------------------------
def test_every_section_is_filled_and_links_its_tables(report: Path) -> None:
    html = html_of(report)
    for name in SECTIONS:
        part = section(html, name)
        assert "<table" in part or "<svg" in part, name
        assert "Not computed for this experiment" not in part, name
    counts = {name: section(html, name).count('class="plot"') for name in SECTIONS}
    assert counts["scores"] == 3 and counts["properties"] == 9 and counts["reliability"] == 6
    assert counts["metaparams"] == 36 and counts["diagnostics"] == 3
    assert counts["next"] == 3 + 4  # power per metric; budget on dev scores and per metric
    links = set(re.findall(r'href="([^"#]+)"', html))
    assert {f"tables/{t}.csv" for t in ("glrt", "contrasts", "variance_components")} <= links
    assert all((report.parent / link).is_file() for link in links), links
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<script src" not in html and "<link" not in html and "@import" not in html


def test_headline_numbers_come_from_the_tables(report: Path, example_run: Path) -> None:
    """Each card's decision row is its record's (decisions.csv); best vs best and the paper's
    GLRT come from contrasts.csv as improvements (positive = the competitor better)."""
    tables = example_run / "results" / "tables"
    contrasts = pd.read_csv(tables / "contrasts.csv", dtype={"p_holm": str})
    decisions = pd.read_csv(tables / "decisions.csv", dtype={"p_adjusted": str})
    headline = section(html_of(report), "headline")
    better = {"ter": "lower", "rouge1": "higher", "rougeL": "higher"}
    rows = contrasts[contrasts["analysis"].isin(("best_vs_best", "all_runs"))]
    assert len(rows) == 2 * contrasts["metric"].nunique()
    for row in rows.itertuples():
        improvement = row.estimate if better[row.metric] == "lower" else -row.estimate
        text = f"{100 * improvement:+.2f}".replace("-", "\u2212")
        assert f">{text}<" in headline, (row.metric, row.analysis)
        assert f">{row.p_holm}<" in headline
    for row in decisions[decisions["family"] == "baseline"].itertuples():
        assert f"p = {row.p_adjusted}" in headline  # the record's p, in its sentence
        assert f"Kenward-Roger df {df_number(row.df)}" in headline
    reliability = pd.read_csv(tables / "reliability.csv")
    for row in reliability[reliability["vca"] == "run-aware"].itertuples():
        text = f"{row.system} {row.phi:.2f} ({row.label}; mean score SD across retraining"
        assert text in headline


def test_headline_verdict_is_the_decision_record(report: Path, example_run: Path) -> None:
    """The example: best vs best favours the competitor; over all runs the baseline is better
    (TER, calibrated test, p = 0.046) and the order is reversed; the paper's GLRT is shown,
    labelled."""
    decisions = pd.read_csv(example_run / "results/tables/decisions.csv", dtype={"p_adjusted": str})
    headline = section(html_of(report), "headline")
    ter = decisions[(decisions["metric"] == "ter") & (decisions["family"] == "baseline")].iloc[0]
    assert 0.01 < float(ter["p_adjusted"]) < 0.05 and ter["improvement"] < 0  # TER worse
    cards = headline.split('<article class="card')[1:]
    assert len(cards) == decisions["metric"].nunique()
    ter_card = next(c for c in cards if 'data-decision="ter|baseline|baseline|competitor"' in c)
    assert ">baseline better<" in ter_card
    assert "competitor worse than baseline by 3.84" in ter_card
    assert "over retraining at these meta-parameter settings" in ter_card
    assert "over retraining the order is reversed" in ter_card
    assert "Generalising to other levels of the shared facets: not judged (" in ter_card
    assert "levels); facet-aware model, df 2.4, p = " in ter_card
    assert "paper&#39;s model, conditional on these trained runs (ML GLRT)" in ter_card
    assert "rejects identical systems in 41-54 % of simulated A-vs-A experiments" in ter_card


def test_the_look_history_and_the_decision_in_the_browser(
    chromium_executable: str, sequential_example_run: Path
) -> None:
    """The example declared as three looks: under each metric's decision table the look history
    is shown (its table with one row per look, its figure drawn), the decision is said in words,
    and the headline card and the table give the sequential verdict of ``decisions.csv``."""
    report = sequential_example_run / "results" / "report.html"
    decisions = pd.read_csv(sequential_example_run / "results/tables/decisions.csv")
    with Browser(chromium_executable) as browser:
        browser.open(report.as_uri(), width=1280, height=900)
        browser.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        blocks = browser.evaluate(
            "Array.from(document.querySelectorAll('div.looks')).map(d => {"
            " const r = d.getBoundingClientRect();"
            " const svg = d.querySelector('svg.plot'); const s = svg && svg.getBBox();"
            " return {id: d.id, width: r.width, height: r.height,"
            " rows: d.querySelectorAll('tbody tr').length, text: d.innerText,"
            " figure: s ? s.width * s.height : 0}; })"
        )
    assert [b["id"] for b in blocks] == [f"looks-{m}" for m in decisions["metric"].unique()]
    for block in blocks:
        assert block["width"] > 300 and block["height"] > 100 and block["figure"] > 0
        assert block["rows"] == 3  # one comparison, three looks
        assert f"(look {len(set(decisions['look']))}" in block["text"] or "(look " in block["text"]
    headline = section(html_of(report), "headline")
    for row in decisions[decisions["family"] == "baseline"].itertuples():
        card = headline.split(f'data-decision="{row.metric}|baseline|')[1].split("</article>")[0]
        badge = {"better": f"{row.system} better", "worse": f"{row.reference} better"}
        assert f">{badge.get(row.verdict, row.verdict)}</span>" in card
        assert f"at look {row.look}," in card and "repeated 95 % CI" in card


def test_inputs_and_software_are_listed(report: Path, example_run: Path) -> None:
    methods = section(html_of(report), "methods")
    inputs = pd.read_csv(example_run / "results/tables/inputs.csv")
    assert "config/config.yaml" in set(inputs["path"])
    assert "resources/example/testset.tsv" in set(inputs["path"])
    assert all(digest in methods for digest in inputs["sha256"])
    assert ">snakemake<" in methods


def test_snakemake_report_archive_holds_the_report(
    report: Path, example_run: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "report.zip"
    result = run_snakemake(
        example_run, "--report", str(archive), configfile=example_run / "config/config.yaml"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with zipfile.ZipFile(archive) as bundle:
        contents = {name: bundle.read(name) for name in bundle.namelist()}
    assert report.read_bytes() in contents.values()  # registered with report(), embedded as is
    assert any(name.endswith("/inputs.csv") for name in contents)
    assert any(name.endswith("/software.csv") for name in contents)
