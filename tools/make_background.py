"""Write the background word frequencies recall ships (`companion/recall/frequencies/*.txt.gz`).

How common a word is in a language at large, which a vault of fifty notes cannot tell: "best" is held by one long
clipping there, yet it says nothing about what a question is after. The figures come from the `wordfreq` package
(Robyn Speer et al., https://github.com/rspeer/wordfreq), whose word lists are licensed CC BY-SA 4.0; the written
tables are derived from them and carry the same licence (see `companion/recall/frequencies/NOTICE`).

`wordfreq` is needed only to run this script, never by the companion. Run from the repository's root:

    pip install wordfreq
    python tools/make_background.py
"""

from __future__ import annotations

import gzip
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

import wordfreq  # type: ignore[import-not-found]

OUT = Path(__file__).resolve().parent.parent / "companion" / "recall" / "frequencies"

SPACED: dict[str, int] = {
    # Latin letters: the languages `companion.recall.language` names and the commonest others it calls `latin`.
    "en": 30000,
    "de": 20000,
    "fr": 20000,
    "es": 20000,
    "it": 15000,
    "pt": 15000,
    "nl": 15000,
    "sv": 10000,
    "da": 10000,
    "nb": 10000,
    "fi": 10000,
    "pl": 10000,
    "cs": 10000,
    "tr": 10000,
    "ca": 8000,
    "id": 8000,
    "vi": 5000,
    # Other scripts.
    "ru": 15000,
    "uk": 8000,
    "bg": 8000,
    "el": 8000,
    "ar": 10000,
    "fa": 8000,
    "he": 8000,
    "hi": 8000,
    "bn": 5000,
}
"""Each language written with spaces between words, and how many of its commonest words are kept."""

UNSPACED: dict[str, int] = {"zh": 12000, "ja": 12000, "ko": 12000}
"""Languages the index reads as overlapping character pairs, and how many of their commonest pairs are kept."""

_WORD = re.compile(r"^\w+$", re.UNICODE)
_SOURCE_WORDS = 60000  # words read to count the character pairs of an unspaced language


def _pairs(word: str) -> set[str]:
    """The character pairs the index makes of a word (the word itself when it has one character)."""
    return {word} if len(word) == 1 else {word[i : i + 2] for i in range(len(word) - 1)}


def _spaced(language: str, keep: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for word, share in _by_frequency(language):
        if len(out) >= keep:
            break
        if _WORD.match(word) and not any(c.isdigit() for c in word):
            out[word] = math.log10(share * 1e9)
    return out


def _by_frequency(language: str) -> list[tuple[str, float]]:
    """The language's words with their frequencies (a share of all words), commonest first."""
    found = wordfreq.get_frequency_dict(language, wordlist="best")
    return sorted(found.items(), key=lambda p: -p[1])


def _unspaced(language: str, keep: int) -> dict[str, float]:
    """A pair's frequency is the sum of the frequencies of the words holding it: what the index's pairs of a text
    of those words would count (pairs across two words aside)."""
    counts: dict[str, float] = defaultdict(float)
    for word, share in _by_frequency(language)[:_SOURCE_WORDS]:
        if not _WORD.match(word) or any(c.isdigit() for c in word):
            continue
        for pair in _pairs(word.lower()):
            counts[pair] += share
    top = sorted(counts.items(), key=lambda p: -p[1])[:keep]
    return {pair: math.log10(share * 1e9) for pair, share in top}


def _write(language: str, zipf: dict[str, float]) -> int:
    """One gzip'd text file: a line per Zipf value in tenths, then the words that have it."""
    by_value: dict[int, list[str]] = defaultdict(list)
    for word, value in zipf.items():
        by_value[round(value * 10)].append(word)
    lines = [f"{value} {' '.join(sorted(words))}" for value, words in sorted(by_value.items(), reverse=True)]
    data = gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), compresslevel=9, mtime=0)
    (OUT / f"{language}.txt.gz").write_bytes(data)
    return len(data)


def main() -> int:
    """Write every language's table and print the sizes."""
    OUT.mkdir(parents=True, exist_ok=True)
    total = 0
    for language, keep in SPACED.items():
        total += _write(language, _spaced(language, keep))
    for language, keep in UNSPACED.items():
        total += _write(language, _unspaced(language, keep))
    print(f"{len(SPACED) + len(UNSPACED)} tables, {total / 1e6:.2f} MB, written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
