"""An analysis's per-system units kept from its job's previous run, by content.

A unit (one system's facet x property analysis in ``metaparam``) is a deterministic function of
its rows, its cell, the analysis options and the code. When new seeds arrive for one system, the
other systems' units see the very same rows: their table rows, diagnostics and QQ quantiles are
taken from the job's previous run instead of being refitted (docs/method.md §4.5; issue 31).

The store is one JSON file per job (``.snakemake/infrepro/units/<metric>/<analysis>.json``:
data only, never code, so a cloned folder's store cannot run anything), written atomically after
the job's tables and holding only the units of that run (it never grows). A unit is reused only
under the same key, which digests

- every column of the unit's rows (values, dtypes, names, row order),
- the cell, the metric's structure and the options the analysis sees,
- the source of the ``infrepro`` package and the versions of Python, numpy, scipy and pandas.

A missing, unreadable or foreign file is ignored (the units are computed). The one input a unit
reads from outside its rows, the metric's effect scale (a fit to all systems), is applied again
on reuse: the cached contrasts keep their estimate and get the current effect size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from infrepro.plumbing.kept import KeptStore
from infrepro.plumbing.memo import content_digest, frame_digest
from infrepro.stats.effects import EffectScale, effect_label

UNIT_TABLES = ("glrt", "means", "contrasts", "slopes", "predictions", "tests")

Row = dict[str, object]


@dataclass
class _Unit:
    """What one unit added: rows per table, diagnostics rows and QQ rows."""

    tables: dict[str, list[Row]]
    diagnostics: list[Row]
    qq: list[Row]


class UnitStore(KeptStore[_Unit]):
    """Units of the job's last run (``previous``) and of this one (``current``)."""

    @classmethod
    def decode(cls, entry: Any) -> _Unit:
        return _Unit(**entry)

    @classmethod
    def encode(cls, value: _Unit) -> Any:
        # the unit's own lists as they are (written once, at save): dataclasses.asdict deep-copies
        # every row first, 0.18 s of a paper-scale metaparam job for the same JSON
        return {f.name: getattr(value, f.name) for f in fields(value)}

    @staticmethod
    def key(frame: pd.DataFrame, *parts: object) -> str:
        """The key of a unit on ``frame`` (its values, not its row labels; the digest is
        remembered per frame, which a system's variants share) described by ``parts``."""
        return content_digest(frame_digest(frame, index=False), parts)

    def run(
        self,
        key: str,
        tables: Any,
        diagnostics: list[Row],
        qq: list[Row],
        compute: Callable[[], None],
    ) -> None:
        """Add the unit's rows to ``tables`` (conditional._Tables: a row list per table and the
        effect ``scale``), ``diagnostics`` and ``qq``: from the last run under the same key,
        else by ``compute()`` (which appends to them); kept for the next."""
        unit = self.previous.get(key)
        if unit is not None:
            self.reused += 1
            for name in UNIT_TABLES:
                rows = unit.tables.get(name, [])
                if name == "contrasts":
                    rows = [_rescaled(row, tables.scale) for row in rows]
                getattr(tables, name).extend(rows)
            diagnostics.extend(unit.diagnostics)
            qq.extend(unit.qq)
        else:
            sizes = {name: len(getattr(tables, name)) for name in UNIT_TABLES}
            first_diagnostic, first_qq = len(diagnostics), len(qq)
            compute()
            unit = _Unit(
                {name: list(getattr(tables, name)[sizes[name] :]) for name in UNIT_TABLES},
                list(diagnostics[first_diagnostic:]),
                list(qq[first_qq:]),
            )
        self.current[key] = unit


def _rescaled(row: Row, scale: EffectScale) -> Row:
    """A cached contrast row with the current effect scale's d (its estimate is the unit's)."""
    d = scale.d(float(row["estimate"]))  # type: ignore[arg-type]
    return {**row, "effect_size": d, "effect_sd": scale.sd, "effect_label": effect_label(d)}
