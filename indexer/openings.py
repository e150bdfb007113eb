"""A note's opening (its title and the start of its text), which its language is guessed from."""

from __future__ import annotations

from companion.recall.language import language_of
from companion.words import segment

OPENING_SQL = "fts.title || ' ' || substr(fts.body, 1, ?)"
"""A note's opening in SQL (its title, then the first characters of its body), what its language is guessed from."""
LANGUAGE_RULE = "2"
"""How `language_of` guesses a note's language, as a version: an index guessed by an older rule (before 2, a long
text in Danish or Polish could pass for English) guesses its notes' languages again at its next sync."""
OPENING_CHARS = 400
"""How much of a note's indexed text (after its title) `openings` gives, and a note's language is guessed from."""


def opening_language(title: str, body: str) -> str:
    """A note's language, guessed from its title and the start of its indexed text: what `openings` gives, so it
    equals the guess recall would make from it."""
    return language_of(f"{segment(title)} {segment(body)[:OPENING_CHARS]}")
