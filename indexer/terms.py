"""A question's words as the index holds them: what BM25, the coverage and the fusion's features count."""

from __future__ import annotations

import re
from collections.abc import Sequence

from companion.words import QUESTION_FILLER, STOPWORDS, segment

_TERM = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The query's distinct lower-cased words (character pairs in unspaced scripts, as the index holds them);
    stopwords are dropped unless the query holds nothing else."""
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(segment(text))))
    return [t for t in terms if t not in STOPWORDS and t not in QUESTION_FILLER] or terms


def fts_query(text: str | Sequence[str]) -> str:
    """An FTS5 MATCH expression that ORs the query's words (or the given terms), quoted so none is read as syntax."""
    terms = query_terms(text) if isinstance(text, str) else list(text)
    return " OR ".join(f'"{t}"' for t in terms)
