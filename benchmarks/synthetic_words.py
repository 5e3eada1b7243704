"""Word material shared by the synthetic benchmark data (`scoring.py`, `paper_scale/generate.py`).

Each benchmark keeps its own function-word list and its own additions to the content words
(``CONTENT``): their published numbers were measured on those exact lists, and the word
frequencies differ on purpose (sentence pairs vs CNN/DailyMail-like summaries).
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

CONTENT = (
    "police officer man woman child family year week day month government minister president "
    "city country world team player club match season game goal fans hospital doctor patient "
    "court judge trial company market price money million billion report study research school "
    "student teacher home house car road crash fire water weather storm attack soldier army war "
    "election vote party leader campaign official statement investigation video photo picture "
    "social media twitter story news life death age people members group record history film "
    "music star show night morning airport flight passenger border refugee island charge arrest "
    "victim friend mother father daughter son brother sister wife husband announce announced "
    "announcing reveal revealed revealing claim claimed claiming find found finding kill killed "
    "killing injure injured injuring win won winning lose lost losing play played playing say "
    "says saying tell told telling believe believed leave left leaving return returned "
    "returning warn warned warning accuse accused build built building happy serious major "
    "former young old british american local national dead huge small quickly recently later "
    "early finally reportedly"
).split()
"""Real content words of news text, most frequent first."""
