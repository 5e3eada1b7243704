"""The config schema (package data: infrepro/assets/config.schema.yaml) as the only source of
defaults.

Snakemake fills a config's defaults when it validates it; code that builds analysis options
without Snakemake (the package's API, tests, benchmarks) takes them from the same file here
instead of writing them again.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

# The workflow validates its config against this file (Snakefile); an installed package carries it.
SCHEMA = Path(str(files("infrepro") / "assets" / "config.schema.yaml"))


@cache
def _schema() -> dict[str, Any]:
    import yaml

    # libyaml's loader when PyYAML has it: the same document, parsed in a fraction of the time
    # (every workflow parse, a run with nothing to do included, reads this file)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(SCHEMA.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (safe)


def schema() -> dict[str, Any]:
    """The config schema, as loaded (cached: treat it as read-only)."""
    return _schema()


def _defaults(node: Mapping[str, Any]) -> Any:
    value = copy.deepcopy(node.get("default"))
    properties = node.get("properties")
    if properties and isinstance(value, dict):
        for key, child in properties.items():
            filled = _defaults(child)
            if filled is not None and key not in value:
                value[key] = filled
    return value


def defaults(section: str) -> dict[str, Any]:
    """Every default of one top-level section of the config (e.g. ``analyses``), nested."""
    found = _defaults(_schema()["properties"][section])
    return found if isinstance(found, dict) else {}


def with_defaults(section: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """``given`` over the section's schema defaults (nested mappings merged key by key)."""

    def merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(base)
        for key, value in over.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = merge(out[key], value)
            else:
                out[key] = value
        return out

    return merge(defaults(section), given or {})
