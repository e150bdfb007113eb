"""Word lists shared by lexical search and question analysis, and counting words for what commands print."""

from __future__ import annotations

import re

# Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) and Korean, whose
# words carry their particles: SQLite's tokenizer would make a whole run of them one token, so no word inside it
# could ever match. Such runs are indexed and searched as overlapping pairs of characters (bigrams), the usual way
# of full-text search for these scripts.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+"
)


def segment(text: str) -> str:
    """The text with every run of an unspaced script written as its overlapping character pairs, spaced
    (`东京大学` -> ` 东京 京大 大学 `); other text is left as it is."""

    def pairs(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) == 1:
            return f" {run} "
        return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "

    return _UNSPACED.sub(pairs, text)


# Words that match nearly every note: BM25 gives them little weight anyway, but each one makes SQLite score
# every note that holds it, which is most of the cost of a lexical query on a large vault.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)

# Words of how a question is asked rather than what it is about ("can you remind me what we said about..."); they
# match most conversation notes and only blur BM25's ranking.
QUESTION_FILLER = frozenset(
    [
        "tell",
        "please",
        "say",
        "said",
        "says",
        "remind",
        "remember",
        "recall",
        "mention",
        "mentioned",
        "talk",
        "talked",
        "discuss",
        "discussed",
        "thanks",
        "thank",
        "hi",
        "hey",
        "ok",
        "okay",
        "also",
        "let",
    ]
)


def counted(number: int, word: str, plural: str | None = None) -> str:
    """`1 access`, `2 accesses`: a number with its noun in the right form (`plural` when adding `s` is wrong)."""
    if number == 1:
        return f"{number} {word}"
    return f"{number} {plural or word + 's'}"


def one_line(text: str, width: int) -> str:
    """`text` on one line of at most `width` characters: whitespace runs made single spaces, and a longer text cut
    at the last word that fits (mid-word when there is none) with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    if " " in cut[width // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-") + "…"


def duration(seconds: float) -> str:
    """A time as a person reads it: `40 s`, `12 min 05 s`, `1 h 05 min`."""
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"


def unspaced_share(text: str) -> float:
    """The share of a text's letters that belong to unspaced scripts (0 for none, 1 for all)."""
    letters = sum(1 for ch in text if ch.isalnum())
    if not letters:
        return 0.0
    return sum(len(m.group(0)) for m in _UNSPACED.finditer(text)) / letters


def significant(value: float, digits: int = 6) -> float:
    """`value` to `digits` significant digits, for JSON: a final score of 3e-09 must not print as 0.0, which would
    hide the order of a list."""
    return float(f"{value:.{digits}g}")
