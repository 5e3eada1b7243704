"""Word material shared by the synthetic benchmark data (`scoring.py`, `paper_scale/generate.py`).

Each benchmark keeps its own function-word and content-word lists: their published numbers were
measured on those exact lists, and the word frequencies differ on purpose (sentence pairs vs
CNN/DailyMail-like summaries).
"""

NAMES = (
    "Obama London Chelsea Smith Johnson Paris Syria Texas McDonald O'Neill Müller José Zürich "
    "2014 2015 $5 3.5 20-year-old"
).split()
"""Names and numbers: capitalised, accented, with punctuation inside (tokenizers split them)."""

SYLLABLES = (
    "ba be bi bo bu ca co da de di do fa fe fi ga go ha he ho ka ke ki la le li lo ma me mi mo "
    "na ne ni no pa pe pi po ra re ri ro sa se si so ta te ti to va ve vi wa we za ze"
).split()
"""Syllables of made-up content words, so the vocabulary can be as large as a benchmark needs."""

SUFFIXES = ("", "", "", "s", "ed", "ing", "er", "ly", "tion", "ment")
"""Endings of made-up words that the Porter stemmer strips, so ROUGE's stemming matters."""
