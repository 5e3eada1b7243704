"""Versions of the software behind the results (``results/tables/software.csv``)."""

from __future__ import annotations

import pandas as pd

from infrepro.core.provenance import software_versions
from infrepro.core.vocabulary import TABLE_SPECS

SOFTWARE_COLUMNS = list(TABLE_SPECS["software"].names)


def software_table(rows: list[tuple[str, str]] | None = None) -> pd.DataFrame:
    """The versions as a table."""
    return pd.DataFrame(rows if rows is not None else software_versions(), columns=SOFTWARE_COLUMNS)
