"""Data properties of test inputs: length, readability, word rarity, user columns, bins."""

from infrepro.core.vocabulary import BIN_SUFFIX
from infrepro.properties.bins import add_bins
from infrepro.properties.compute import compute_properties
from infrepro.properties.rarity import FrequencyTable, word_rarity

__all__ = ["BIN_SUFFIX", "FrequencyTable", "add_bins", "compute_properties", "word_rarity"]
