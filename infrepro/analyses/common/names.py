"""User column names <-> safe internal names: the one place where names meet model formulas.

A metric, facet or property may be called anything its input file allows (``comet-22``,
``rand seed``, ``srclen-ratio``, ``(1|x) + y``, Unicode). Formulas would misread such names, so
:func:`infrepro.analyses.runner.load_metric_data` renames those columns once, to ``_v0_``,
``_v1_``, ... (valid formula identifiers that no formula keyword or other name can shadow; when
any user value of the job, a name, a system or a level, holds ``_v`` and a digit, the prefix
grows, ``_vv0_``, until no user value can be mistaken for an internal name), and
:func:`infrepro.analyses.runner.run_analysis` maps every output table back with
:meth:`Names.user_table`. Analysis code therefore builds formulas only from the names in
:class:`~infrepro.analyses.common.data.MetricData` (``metric``, ``facets``, ``properties``,
``property_variants``, ``facets_of``) and never sees a user's spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.schema import with_defaults

PREFIX = "_v"
_PLAIN = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")  # names a formula reads without backquotes


def formula_name(name: str) -> str:
    """A name as R writes it in a formula: as is when plain, else in backquotes (a backquote or
    backslash in it escaped with a backslash, as R does)."""
    if _PLAIN.fullmatch(name):
        return name
    escaped = name.replace("\\", "\\\\").replace("`", "\\`")
    return f"`{escaped}`"


@dataclass(frozen=True)
class Names:
    """The renaming of one analysis job's user column names (identity when empty)."""

    users: tuple[str, ...] = ()
    prefix: str = PREFIX
    _internal: dict[str, str] = field(init=False, repr=False, compare=False)
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        internal = {user: f"{self.prefix}{i}_" for i, user in enumerate(self.users)}
        object.__setattr__(self, "_internal", internal)
        # an internal name and the suffix a derived column adds to it (``_c``: centred)
        pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(self.prefix)}(\d+)_([A-Za-z0-9_.]*)")
        object.__setattr__(self, "_pattern", pattern)

    @classmethod
    def of(cls, names: Iterable[str], values: Iterable[object] = ()) -> Names:
        """Internal names for ``names`` (each once, in order), with a prefix that neither the
        names nor any of ``values`` (every other user text of the job: systems, levels) hold
        followed by a digit: no user value can be read as an internal name."""
        users = tuple(dict.fromkeys(map(str, names)))
        # one search of all texts (a run's segment ids are tens of thousands of them): the
        # prefix and a digit cannot match across the line breaks that join them
        texts = "\n".join([*users, *(v for v in values if isinstance(v, str))])
        prefix = PREFIX
        while re.search(rf"{re.escape(prefix)}\d", texts):
            prefix += PREFIX[-1]
        return cls(users, prefix)

    def internal(self, name: str) -> str:
        """The internal name of a user name (names not renamed stay as they are)."""
        return self._internal.get(name, name)

    def internal_list(self, names: Iterable[str]) -> list[str]:
        return [self.internal(n) for n in names]

    def user(self, text: str) -> str:
        """A cell or column header of an output table in the user's names.

        An internal name standing alone becomes the user's name; inside longer text (a formula,
        a reason, ``a:b``) it becomes the name as a formula would write it (backquoted if needed).
        A derived column's suffix stays inside the name: ``_v0__c`` is ``src len_c``, written
        `` `src len_c` `` in a formula, never `` `src len`_c ``.
        """
        if not self.users or self.prefix not in text:
            return text
        whole = self._pattern.fullmatch(text)
        if whole is not None and int(whole.group(1)) < len(self.users):
            return self.users[int(whole.group(1))] + whole.group(2)
        return self._pattern.sub(self._display, text)

    def _display(self, match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(self.users):
            return match.group(0)
        return formula_name(self.users[index] + match.group(2))

    def rename_columns(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with user-named columns renamed to internal names."""
        return frame.rename(columns={u: i for u, i in self._internal.items() if u in frame})

    def user_table(self, frame: pd.DataFrame) -> pd.DataFrame:
        """An output table with every header and text cell back in the user's names."""
        if not self.users:
            return frame
        out = frame.rename(columns={c: self.user(c) for c in frame.columns if isinstance(c, str)})
        for column in out.columns:
            dtype = out[column].dtype
            if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
                values = out[column]
                mapping = {v: self.user(v) for v in values.unique() if isinstance(v, str)}
                if any(k != v for k, v in mapping.items()):
                    out[column] = values.map(
                        lambda v, m=mapping: m.get(v, v) if isinstance(v, str) else v
                    )
        return out

    def internal_values(self, frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
        """``frame`` with the cells of ``columns`` that hold user names renamed (e.g. the
        variance components a metaparam job reads back from the variance job's table)."""
        out = frame.copy()
        for column in columns:
            out[column] = out[column].map(lambda v: self.internal(v) if isinstance(v, str) else v)
        return out

    def internal_options(self, options: Mapping[str, object]) -> dict[str, object]:
        """The analysis options with facet names (``facets``, ``vca_interactions``,
        ``metaparam_facets``, ``retraining_facets``) renamed."""
        options = with_defaults("analyses", options)  # defaults name facets too (seed)
        out = dict(options)
        facets = options.get("facets") or {}
        if isinstance(facets, Mapping):
            out["facets"] = {s: self.internal_list(f) for s, f in facets.items()}
        for key in ("metaparam_facets", "retraining_facets"):
            if key in options:
                out[key] = self.internal_list(list(options[key] or []))
        terms = options.get("vca_interactions") or []
        out["vca_interactions"] = [
            re.sub(r"[^:/]+", lambda m: self.internal(m.group(0)), str(t)) for t in terms
        ]
        return out
