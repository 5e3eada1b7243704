"""Compute the configured properties for every segment of a test set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from infrepro.core.vocabulary import SEGMENT
from infrepro.io.properties import property_values
from infrepro.io.testset import property_text
from infrepro.properties.rarity import FrequencyTable, word_rarity
from infrepro.properties.text_properties import length, readability


def compute_properties(
    testset: pd.DataFrame,
    properties: Sequence[str],
    *,
    rarity_corpus: str | Path | None = None,
    categorical: Sequence[str] = (),
) -> tuple[pd.DataFrame, str]:
    """One row per segment: ``segment_id`` and one column per property.

    Returns the table and the name of the column the text properties describe (``source`` or
    ``reference``). User properties are test-set columns; they become numbers when every value
    parses as one (unless listed in ``categorical``).
    """
    texts, described = property_text(testset)
    texts = list(texts)
    out = pd.DataFrame({SEGMENT: testset[SEGMENT].astype(str).to_numpy()})
    rarity: tuple | None = None
    for prop in properties:
        if prop == "length":
            out[prop] = length(texts)
        elif prop == "readability":
            out[prop] = readability(texts)
        elif prop in ("word_rarity", "word_rarity_sum"):
            if rarity is None:
                table = (
                    FrequencyTable.from_file(rarity_corpus)
                    if rarity_corpus
                    else FrequencyTable.from_texts(texts)
                )
                rarity = word_rarity(texts, table)
            out[prop] = rarity[0] if prop == "word_rarity" else rarity[1]
        else:
            out[prop] = _user_property(testset[prop], prop in categorical)
    return out, described


def _user_property(values: pd.Series, categorical: bool) -> pd.Series:
    """A test-set column as a property (infrepro.io.properties; checked when the experiment
    is loaded)."""
    return property_values(values, categorical)
