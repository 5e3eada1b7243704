"""Names shortened for axis ticks and legends, so that a 200-character system name neither
pushes the axes off the figure nor overlaps its neighbours; tables keep the full names."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

LIMIT = 32  # characters of a tick or legend label
TAIL = 10  # characters kept from the end: names often differ there (…-v2, …-seed3)


def short_name(name: str, limit: int = LIMIT) -> str:
    """``name`` itself when it fits, else its head and tail around an ellipsis."""
    if len(name) <= limit:
        return name
    return name[: limit - TAIL - 1] + "…" + name[-TAIL:]


def short_names(names: Sequence[str], limit: int = LIMIT) -> list[str]:
    """Each name shortened by :func:`short_name`; shortened names that collide are numbered
    (``#2``, ``#3``, in order) so that no two labels read the same."""
    shortened = [short_name(str(n), limit) for n in names]
    seen: dict[str, int] = {}
    out = []
    for full, short in zip(names, shortened, strict=True):
        if short != str(full) and shortened.count(short) > 1:
            seen[short] = seen.get(short, 0) + 1
            short = f"{short[: limit - 3]}#{seen[short]}"
        out.append(short)
    return out


@lru_cache(maxsize=4096)
def text_width(text: str, size: float = 7.0) -> float:
    """The width (inches) of ``text`` set in the figures' DejaVu Sans at ``size`` points, as
    matplotlib lays it out (no drawing)."""
    font = FontProperties(family="DejaVu Sans", size=size)
    width, _, _ = _LAYOUT.get_text_width_height_descent(text, font, ismath=False)
    return width / 72.0


_LAYOUT = TextToPath()


def label_width(labels: Sequence[str], per_char: float = 0.055, base: float = 0.25) -> float:
    """The left margin (inches) that tick labels of this many characters need."""
    return base + per_char * max((len(s) for s in labels), default=4)
