"""Work shared by several fits to the same rows: a ``FitCache`` passed to ``fit(cache=...)``.

An analysis fits several models to one table: the H1 and H0 of a GLRT, the REML fit of the same
fixed part with run terms. Their grouping codes, factor codes, fixed-effect matrix X (with X'X
and the OLS start) and the cross-products of the random-effect indicators with [X y] coincide
wherever their terms do. A cache hands the second fit the very objects the first one computed,
so every number downstream is bit-for-bit what the fit would compute alone.

A cache belongs to one DataFrame: pass it only with that frame, unmodified in between (the
caller's contract; the engine cannot check it cheaply).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class FitCache:
    """Per-DataFrame memo of the engine's data preparation (see the module docstring)."""

    groups: dict[str, Any] = field(default_factory=dict)  # grouping column -> codes
    masks: dict[str, Any] = field(default_factory=dict)  # dummy() level -> its rows
    factors: dict[tuple[object, ...], Any] = field(default_factory=dict)  # fixed-part codes
    terms: dict[str, Any] = field(default_factory=dict)  # random term -> RandomColumns
    fixed: dict[tuple[object, ...], Any] = field(default_factory=dict)  # fixed part -> X, ...
    products: dict[tuple[object, ...], tuple[list[object], Any]] = field(default_factory=dict)

    def release(self) -> None:
        """Forget everything but the codes of the grouping columns and the rows of the dummy()
        levels (the model matrices, covariates, term columns and cross-products are large)."""
        self.factors.clear()
        self.terms.clear()
        self.fixed.clear()
        self.products.clear()


def memo(
    products: dict[tuple[object, ...], tuple[list[object], Any]] | None,
    objects: Sequence[object],
    extra: tuple[object, ...],
    compute: Callable[[], T],
) -> T:
    """``compute()``, or its earlier value for the same ``objects`` (by identity; they are kept
    alive with the value, so their ids stay theirs) and ``extra`` values."""
    if products is None:
        return compute()
    key = (*(id(o) for o in objects), *extra)
    hit = products.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], objects, strict=True)):
        return hit[1]
    value = compute()
    products[key] = (list(objects), value)
    return value
