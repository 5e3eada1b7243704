"""The workflow's parse (every `snakemake` call, a no-op included) imports only what the
Snakefile and the rule files name, and those must not load the renderer, the figures or
scipy: they were most of a no-op run's time (issue 31, goal 3; benchmarks time it)."""

from __future__ import annotations

import re
import subprocess
import sys

from workflow_helpers import REPO_ROOT

HEAVY = ("matplotlib", "scipy.stats", "jinja2", "infrepro.report.page", "infrepro.plots")
IMPORT = re.compile(r"^\s*(?:from\s+(infrepro[\w.]*)\s+import|import\s+(infrepro[\w.]*))", re.M)


def parse_time_modules() -> list[str]:
    """The infrepro modules the Snakefile and workflow/rules/*.smk import."""
    files = [REPO_ROOT / "Snakefile", *sorted((REPO_ROOT / "workflow" / "rules").glob("*.smk"))]
    found = {a or b for f in files for a, b in IMPORT.findall(f.read_text(encoding="utf-8"))}
    return sorted(found)


def test_the_workflow_parse_loads_nothing_heavy() -> None:
    modules = parse_time_modules()
    assert "infrepro.report.assets" in modules and "infrepro.report.checksums" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print([h for h in {HEAVY!r} if h in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"loaded at parse time: {done.stdout}"


def test_collecting_the_tables_loads_no_model_engine() -> None:
    """collect_tables runs on a thread of Snakemake's process between the last analysis and the
    report: its imports (``infrepro.analyses.common.tables``) must not load scipy or the engine,
    which
    the ``infrepro.analyses`` package would if it imported its modules eagerly."""
    script = REPO_ROOT / "scripts" / "collect_tables.py"
    code = (
        "import runpy, sys\n"
        f"runpy.run_path({str(script)!r}, run_name='infrepro_rule_script')\n"
        "print([m for m in ('scipy', 'infrepro.lmm', 'infrepro.analyses.runner') "
        "if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"loaded by collect_tables: {done.stdout}"


def test_the_analyses_package_names_resolve_on_first_use() -> None:
    import infrepro.analyses as analyses

    for name in analyses.__all__:
        assert getattr(analyses, name) is not None
