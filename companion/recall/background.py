"""How common a word is in its language at large: the background a small vault cannot give.

A vault of fifty notes cannot tell a common word from a telling one: "best" held by one long clipping is as rare
there as "Obsidian", and a question about "the best pizza in Naples" then looks half answered. The package ships
each language's commonest words with their Zipf frequency (log10 of the times a word occurs in a billion words;
"the" 7.7, "pizza" 4.6, "obsidian" 3.1), derived from the `wordfreq` package's word lists (CC BY-SA 4.0; see
`frequencies/NOTICE` and `tools/make_background.py`, which writes them). Nothing is downloaded at run time.

A word is looked up in every table of its script (a German question of three words may be taken for English, and
technical words cross languages), its commonest use counting. Chinese, Japanese and Korean are indexed as pairs of
characters, and so are their tables. A word whose script has no table (Thai, a number) has no background figure.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from companion.recall.language import SCRIPT_LETTERS

SCRIPTS: dict[str, tuple[str, ...]] = {
    # The languages `companion.recall.language` names, and the commonest others it calls `latin`.
    "latin": (
        "en",
        "de",
        "fr",
        "es",
        "it",
        "pt",
        "nl",
        "sv",
        "da",
        "nb",
        "fi",
        "pl",
        "cs",
        "tr",
        "ca",
        "id",
        "vi",
    ),
    "cyrillic": ("ru", "uk", "bg"),
    "greek": ("el",),
    "arabic": ("ar", "fa"),
    "hebrew": ("he",),
    "devanagari": ("hi",),
    "bengali": ("bn",),
    "pairs": ("zh", "ja", "ko"),
}
"""The languages whose table is shipped, by the script their words are written in (`pairs`: the character pairs
of Chinese, Japanese and Korean, as the index holds them)."""

# Kana, Chinese characters and Hangul: the scripts the index holds as pairs of characters.
_PAIRED = "".join(SCRIPT_LETTERS[name] for name in ("kana", "han", "hangul"))
_SCRIPT_OF: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pairs", re.compile("[" + _PAIRED + "]")),
    *(
        (name, re.compile(f"[{SCRIPT_LETTERS[name]}]"))
        for name in ("latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari", "bengali")
    ),
)

RARE_ZIPF = 2.5
"""The Zipf frequency given to a word its script's tables leave out: rarer than every word they keep (the tables
stop between 2.9 and 3.6)."""
COMMONEST_ZIPF = 8.0
"""Above every word's Zipf frequency ("the" is 7.7): a word's `rarity` is how far below it the word falls."""


def script_of(word: str) -> str | None:
    """The script of a lower-cased word, as `SCRIPTS` names them (None for a number or a script without tables)."""
    for name, pattern in _SCRIPT_OF:
        if pattern.search(word):
            return name
    return None


@dataclass(frozen=True)
class Background:
    """Word frequencies by script: each word's highest Zipf frequency among the script's languages."""

    scripts: Mapping[str, Mapping[str, float]]
    """For each script with at least one table, its words and their Zipf frequency."""

    def zipf(self, word: str) -> float | None:
        """The word's Zipf frequency in its language at large: `RARE_ZIPF` when its script's tables leave it out,
        None when no table covers its script, or for a character pair the pair tables leave out (no figure is then
        better than a guess)."""
        script = script_of(word) or ""
        table = self.scripts.get(script)
        if table is None:
            return None
        found = table.get(word, table.get(word.casefold()))
        if found is None and script == "pairs":
            # The pair tables are counted within words, and the index pairs running text: a pair across a word's
            # edge ("京で", a name and its particle) is missing from them without being rare.
            return None
        return RARE_ZIPF if found is None else found

    def rarity(self, word: str) -> float | None:
        """How telling the word is: how far its Zipf frequency falls below `COMMONEST_ZIPF` (about 0.3 for "the",
        3.4 for "pizza", 5.5 for a word no table keeps); None without a figure."""
        found = self.zipf(word)
        return None if found is None else max(0.0, COMMONEST_ZIPF - found)


def read_table(language: str) -> dict[str, float] | None:
    """One shipped language's table (None when the package does not hold it)."""
    try:
        data = resources.files("companion.recall").joinpath("frequencies", f"{language}.txt.gz").read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return parse_table(gzip.decompress(data).decode("utf-8"))


def parse_table(text: str) -> dict[str, float]:
    """A table's text: a line per Zipf value in tenths, followed by the words that have it."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        value, _, words = line.partition(" ")
        if value:
            zipf = int(value) / 10
            out.update(dict.fromkeys(words.split(), zipf))
    return out


def combine(tables: Iterable[tuple[str, Mapping[str, float] | None]]) -> Background:
    """The background of the given (language, table) pairs, a missing table (None) left out: its script's other
    languages still count, and a script left with none has no figure."""
    scripts: dict[str, dict[str, float]] = {}
    script_of_language = {lang: script for script, langs in SCRIPTS.items() for lang in langs}
    for language, table in tables:
        script = script_of_language.get(language)
        if table is None or script is None:
            continue
        merged = scripts.setdefault(script, {})
        for word, zipf in table.items():
            if zipf > merged.get(word, 0.0):
                merged[word] = zipf
    return Background(scripts)


@cache
def shipped() -> Background:
    """The tables the package ships, read once per process (about a second's work, on the first question)."""
    return combine((lang, read_table(lang)) for langs in SCRIPTS.values() for lang in langs)


UNKNOWN_RARITY = 4.0
"""The rarity of a word without a background figure: a middling word's (Zipf 4), neither telling nor idle."""


def rare_unknown_share(terms: Iterable[str], held: Iterable[str], background: Background | None = None) -> float:
    """The share of a question's words (`terms`) that no note of the vault holds, each word weighted by its
    `rarity` in the language at large (`held`: the words some note holds; `background`: the shipped tables when
    None). A question without words lacks nothing (0)."""
    found = background if background is not None else shipped()
    weights: dict[str, float] = {}
    for term in terms:
        rarity = found.rarity(term)
        weights[term] = UNKNOWN_RARITY if rarity is None else rarity
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    known = set(held)
    return sum(w for t, w in weights.items() if t not in known) / total
