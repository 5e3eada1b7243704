"""Regenerate docs/report-headline.png: the top of the bundled example's report (the decision
table, its groups and forest diagrams) as a reader's browser shows it.

    python docs/make_screenshot.py [results/report.html]

Needs a finished run of the bundled example (`snakemake --cores 2`) and Debian's `chromium`.
The page is rendered headless at 1,280 px wide and the first screen of the decision section is
kept (the crop starts at the section's heading, found by the browser's own layout through a
small script that writes it into the page title).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.image as mpimg

WIDTH, HEIGHT, KEEP = 1280, 3000, 1150  # viewport and the height of the crop, in px
OUT = Path(__file__).parent / "report-headline.png"
PROBE = (
    "<script>addEventListener('load', () => { document.title = 'top=' + "
    "Math.round(document.getElementById('decision').getBoundingClientRect().top); });</script>"
)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("chromium is not installed (apt-get install chromium)")
    return found


def section_top(page: Path, browser: str) -> int:
    """The decision section's top edge in the page, in px, as the browser lays it out."""
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    dump = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--window-size={WIDTH},{HEIGHT}",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    found = re.search(r"<title>top=(\d+)</title>", dump)
    return int(found.group(1)) if found else 0


def main(report: Path) -> None:
    browser = chromium()
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        shutil.copy(report, page)
        top = section_top(page, browser)
        shot = Path(folder) / "shot.png"
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--window-size={WIDTH},{HEIGHT}",
                f"--screenshot={shot}",
                page.as_uri(),
            ],
            capture_output=True,
            check=True,
            timeout=120,
        )
        image = mpimg.imread(shot)
        mpimg.imsave(OUT, image[top : top + KEEP])
    print(f"wrote {OUT} (from {report}, decision section at {top} px)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/report.html"))
