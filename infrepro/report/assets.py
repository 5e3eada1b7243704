"""The page's template, its macros, style and script: package data (``templates/``), named in
one place. Import-light: the workflow reads these at parse time to checksum the templates."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

TEMPLATE_DIR = Path(str(files(__package__) / "templates"))
TEMPLATE = "report.html.j2"
ASSETS = {"css": "report.css", "js": "report.js"}
TEMPLATE_FILES = (TEMPLATE, "macros.html.j2", *ASSETS.values())
