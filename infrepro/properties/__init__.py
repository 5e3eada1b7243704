"""Data properties of test inputs: length, readability, word rarity, user columns, bins."""

from infrepro.vocabulary import BIN_SUFFIX

from .bins import add_bins
from .compute import compute_properties
from .rarity import FrequencyTable, word_rarity

__all__ = ["BIN_SUFFIX", "FrequencyTable", "add_bins", "compute_properties", "word_rarity"]
