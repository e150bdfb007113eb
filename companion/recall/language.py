"""A text's language, as far as recall needs it: is a question in a language the embedding model reads, and is a
note in the question's language?

The English model (all-MiniLM-L6-v2) was trained on English text; in other languages its similarities are noise, so
its vote must shrink there. Scripts tell most languages apart (kana marks Japanese among texts in Chinese
characters); among languages written in Latin letters, their commonest short words do. A text of three words may
hold none, and is then taken as English, the model's own; a long text in accented letters that holds few of them is
in another language written in Latin letters (`latin`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SCRIPT_LETTERS: dict[str, str] = {
    "latin": "A-Za-z\u00c0-\u024f\u1e00-\u1eff",
    "kana": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",  # Chinese characters (Japanese too)
    "hangul": "\uac00-\ud7af\u1100-\u11ff",
    "cyrillic": "\u0400-\u04ff",
    "greek": "\u0370-\u03ff",
    "arabic": "\u0600-\u06ff\u0750-\u077f",
    "hebrew": "\u0590-\u05ff",
    "devanagari": "\u0900-\u097f",
    "bengali": "\u0980-\u09ff",
    "indic": "\u0900-\u0dff",
    "thai": "\u0e00-\u0eff",
}
"""The letters of each script as ranges for a regular expression's character class."""
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(f"[{SCRIPT_LETTERS[letters]}]"))
    for name, letters in (
        ("latin", "latin"),
        ("ja", "kana"),
        ("zh", "han"),
        ("ko", "hangul"),
        ("cyrillic", "cyrillic"),
        ("greek", "greek"),
        ("arabic", "arabic"),
        ("hebrew", "hebrew"),
        ("indic", "indic"),
        ("thai", "thai"),
    )
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_OTHER_THAN_ASCII = re.compile(r"[^\x00-\x7f]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The commonest short words of the most used languages written in Latin letters besides English.
_LATIN_COMMON: dict[str, frozenset[str]] = {
    "de": _words(
        "aber auch auf bei das dein deine dem den der des die du ein eine einem einen einer es für gibt habe "
        "hat ich im ins ist kann kein keine mein meine meinen mit nach nicht oder sich sie und von warum was "
        "welche welcher wenn werden wie wir wird wo zu zum zur über"
    ),
    "fr": _words(
        "au aux avec ce ces cette comment dans de des du elle est et faire il ils je la le les ma mes mon nous "
        "ou où pas peut pour pourquoi puis que quel quelle quels qui sa ses son sur tu un une vous"
    ),
    "es": _words(
        "al como con cuál cómo del donde dónde el en es esta este estos hacer la las le les lo los mi mis no "
        "para por puede puedo que qué se su sus tu un una unas unos y yo"
    ),
    "it": _words(
        "che come con cosa da del della di dove e gli il io la le lo mia mio nel nella non per perché posso può "
        "quale questa questo un una è"
    ),
    "pt": _words(
        "a as com como da das de do dos e em esta este eu fazer isso meu minha na no não o onde os para pode "
        "por posso qual que seu sua um uma é"
    ),
    "nl": _words(
        "bij dat de een en het hoe ik is je kan met mijn naar niet om ook op te van voor waar waarom welke wij zij"
    ),
}
_ENGLISH_COMMON = _words(
    "a an and are as at be by can do does for from how i in is it my not of on or that the this to we what "
    "where which why with you your"
)


def language_of(text: str) -> str:
    """A guess at a text's language: `en`, `de`, `fr`, `es`, `it`, `pt`, `nl`, `latin` (another language in Latin
    letters), `ja`, `zh`, `ko`, or a script's name (`cyrillic`, `arabic`, `greek`, `hebrew`, `indic`, `thai`)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return "en"
    if len(_OTHER_THAN_ASCII.findall(text)) * 4 < letters:
        return _latin_language(text)  # mostly plain Latin letters: no other script can make up a quarter
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS}
    if counts["ja"]:
        counts["ja"] += counts["zh"]  # Japanese writes with Chinese characters and kana
        counts["zh"] = 0
    script, count = max(((n, c) for n, c in counts.items() if n != "latin"), key=lambda kv: kv[1])
    # A product name in Latin letters inside a Japanese question leaves it Japanese.
    if count and count * 4 >= letters:
        return script
    return _latin_language(text)


def _latin_language(text: str) -> str:
    """Among languages written in Latin letters, the one whose commonest words the text holds most of."""
    return _latin_votes(text)[0]


LONG_TEXT_WORDS = 20
"""From this many words on, a text in one of the listed languages holds a good share of its common words."""
COMMON_SHARE = 0.12
"""The share of a long text's words that the guessed language's common words must make up. Measured on notes'
openings: in the listed languages they make up less than this in 8 of 1,936 notes; in Danish, Polish, Finnish,
Swedish, Czech, Slovak, Turkish or Vietnamese, which hold a few of them ("a", "is", "de", "et"), in 9 of 10."""
OWN_LETTERS = frozenset("åøæłąęśźżńćčřšžěůďťňőűışğăđơư")
"""Letters none of the listed languages writes (Danish and Norwegian å ø æ, Polish ł ą ę, Czech ř ě ů, Turkish ı ş ğ,
Hungarian ő ű, Vietnamese ă đ ơ ư...)."""
OWN_LETTER_SHARE = 0.005
"""The share of a long text's letters that must be `OWN_LETTERS` (or `ACCENTED_SHARE` accented letters of any kind)
before too few common words make it another language: measured on notes' openings, 95 in 100 Danish, Polish,
Czech, Slovak, Turkish or Vietnamese notes hold more, English ones none."""
ACCENTED_SHARE = 0.04
"""The share of accented letters that makes a long text with few common words another language even without
`OWN_LETTERS` (Finnish and Hungarian write ä, ö, ü as German does, in one letter of twenty or more): an English
note naming José, Zoë and Björn holds far fewer."""


def _latin_votes(text: str) -> tuple[str, int]:
    """(`_latin_language`'s guess, how many of the text's words are common words of that language)."""
    words = [w.casefold() for w in _WORD.findall(text)]
    english = sum(w in _ENGLISH_COMMON for w in words)
    best, hits = "en", english
    for code, common in _LATIN_COMMON.items():
        found = sum(w in common for w in words)
        if found > hits:
            best, hits = code, found
    accented = sum(not ch.isascii() for ch in text if ch.isalpha())
    if best == "en" and english == 0 and accented:
        return "latin", 0  # accented letters and no English word: some other language
    if len(words) >= LONG_TEXT_WORDS and hits < COMMON_SHARE * len(words):
        letters = _LETTER.findall(text)
        own = sum(ch.casefold() in OWN_LETTERS for ch in letters)
        if own >= OWN_LETTER_SHARE * len(letters) or accented >= ACCENTED_SHARE * len(letters):
            return "latin", 0  # a long text that borrows a few common words from a listed language
    return best, hits


VAULT_SHARE = 2 / 3
"""The share of the word matches' weight one language must hold to name the language of a question whose own words
name none."""


def question_language(text: str, holders: Sequence[tuple[str, float]]) -> str:
    """A question's language: `language_of`, except for a question in Latin letters holding no common word of any
    language (a few keywords: "Obsidian Sprache umstellen", "desactivar actualizaciones automáticas"), which is in
    the language of the notes holding its words when one language holds `VAULT_SHARE` of their weight.

    `holders` are the notes that hold the question's words, as (their language, their word score), best first.
    Such a question says nothing of its language by itself (taken for English, the embedding model would vote and
    the answer, in another language, would count as a translation); the words it shares with the vault do. An
    English keyword question in a vault of many languages finds English notes first, and stays English; a product
    name in Latin letters asked of a vault mostly in Japanese ("iPhone") is taken for Japanese, as its answers are.
    """
    guess = language_of(text)
    if guess not in ("en", "latin") or _latin_votes(text)[1] > 0 or not holders or not _LETTER.search(text):
        return guess  # its own words or script say it, or it has no word at all ("2024")
    weights: dict[str, float] = {}
    for language, weight in holders:
        if weight > 0:
            weights[language] = weights.get(language, 0.0) + weight
    total = sum(weights.values())
    # `latin` gathers every language written in Latin letters that is not listed: many languages, not one, so it
    # names none (English keywords are held by a dozen translations of the English note), but its weight counts.
    named = [(language, weight) for language, weight in weights.items() if language != "latin"]
    if total <= 0 or not named:
        return guess
    language, weight = max(named, key=lambda kv: kv[1])
    return language if weight >= VAULT_SHARE * total else guess


def foreign(text: str) -> bool:
    """Whether a question is in a language other than English (so an English-only model should not vote)."""
    return language_of(text) != "en"
