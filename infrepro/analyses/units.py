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

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from infrepro.memo import code_digest, frame_digest, read_kept, write_kept

from .effects import EffectScale, effect_label

FORMAT = 1  # the store's layout; another value is ignored
UNIT_TABLES = ("glrt", "means", "contrasts", "slopes", "predictions", "tests")

Row = dict[str, object]


@dataclass
class _Unit:
    """What one unit added: rows per table, diagnostics rows and QQ rows."""

    tables: dict[str, list[Row]]
    diagnostics: list[Row]
    qq: list[Row]


@dataclass
class UnitStore:
    """Units of the job's previous run (``previous``) and of this one (``current``)."""

    path: Path | None = None
    previous: dict[str, _Unit] = field(default_factory=dict)
    current: dict[str, _Unit] = field(default_factory=dict)
    reused: int = 0

    @classmethod
    def open(cls, path: str | Path) -> UnitStore:
        """The store at ``path``, with the units it holds when they were made by this code."""
        path = Path(path)
        try:
            previous = {key: _Unit(**unit) for key, unit in read_kept(path, FORMAT).items()}
        except TypeError:  # entries of another shape: compute every unit
            previous = {}
        return cls(path, previous)

    def key(self, frame: pd.DataFrame, *parts: object) -> str:
        """The key of a unit on ``frame`` described by ``parts`` (cell, options, structure)."""
        digest = hashlib.blake2b(digest_size=20)
        digest.update(code_digest().encode())
        digest.update(frame_digest(frame, index=False))  # labels are not data
        digest.update(repr(parts).encode())
        return digest.hexdigest()

    def run(
        self,
        key: str,
        tables: Any,
        diagnostics: list[Row],
        qq: list[Row],
        compute: Callable[[], None],
    ) -> None:
        """Add the unit's rows to ``tables`` (conditional._Tables: a row list per table and the
        effect ``scale``), ``diagnostics`` and ``qq``: from the previous run
        under the same key, else by ``compute()`` (which appends to them); kept for the next."""
        unit = self.previous.get(key) if self.path is not None else None
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

    def save(self) -> None:
        """Write this run's units (atomically), replacing the previous run's."""
        if self.path is None:
            return
        if not self.current:  # an analysis without units keeps no file
            self.path.unlink(missing_ok=True)
            return
        write_kept(self.path, FORMAT, {key: asdict(u) for key, u in self.current.items()})


def options_part(options: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The options an analysis sees, as a key part."""
    return tuple(sorted((str(k), repr(v)) for k, v in options.items()))


def _rescaled(row: Row, scale: EffectScale) -> Row:
    """A cached contrast row with the current effect scale's d (its estimate is the unit's)."""
    d = scale.d(float(row["estimate"]))  # type: ignore[arg-type]
    return {**row, "effect_size": d, "effect_sd": scale.sd, "effect_label": effect_label(d)}
