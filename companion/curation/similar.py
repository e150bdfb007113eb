"""Notes that say the same thing (near-duplicates) and notes that say it with other values (facts that changed).

Two notes of the same type are compared by meaning (the cosine of their vectors) and by words (the share of the
shorter note's word triples the other holds). Pairs are found without comparing every note with every other: word
triples through an inverted index that leaves out triples common to many notes, vectors in blocks of rows, keeping
only each note's closest few. A pair whose notes hold different values (numbers, dates, names) is a fact that
changed, not a duplicate: the newer one is kept current and the older one is marked superseded, never deleted.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from companion.curation.suggestions import NoteFacts, Proposal, Suggestion, fingerprint
from companion.vault.notes import STATEMENT_TYPES
from companion.words import unspaced_share

DUPLICATE_COSINE = 0.93
"""Vectors this close make two notes of one type near-duplicates, whatever their words."""
DUPLICATE_WORDS = 0.6
"""This share of the shorter note's word triples found in the other makes them near-duplicates."""
AGREEING_WORDS = 0.35
"""Close vectors make a duplicate only with at least this share of shared word triples too: in a language the
embedding model reads poorly, notes on one subject get much the same vector."""
UNSPACED_WORDS = 0.9
"""For text in a script written without spaces (Chinese, Japanese, Thai, Khmer...), indexed as overlapping
character pairs, the share of shared triples that makes a duplicate: pairs repeat far more than words do."""
RELATED_COSINE = 0.8
"""Vectors this close make two memory notes about the same subject (a candidate for a changed fact)."""
RELATED_WORDS = 0.4
"""This share of shared word triples makes two memory notes about the same subject."""
LATIN_SHARE = 0.6
"""A note whose letters are at least this share Latin is compared by meaning too (the model reads it)."""
COMMON_TRIPLE = 40
"""A word triple held by more notes than this links nothing (boilerplate, a template's lines)."""
MIN_WORDS = 8
"""A note with fewer words than this in its body (an empty daily note, a page that only embeds a view) is never
called a duplicate: there is nothing in it to merge, and its vector is its title's."""
NEIGHBOURS = 5
"""How many closest notes by meaning each note is compared with."""
_BLOCK = 1024
_NOT_COMPARED = frozenset({"conversation", "summary", "history"})
_WORD = re.compile(r"\w+", re.UNICODE)
_LETTER = re.compile(r"[^\W\d_]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:/-]\d+)*(?![\w])")
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*[-*#>]*\s*)([A-Z][\w'-]*)")
_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*")


@dataclass(frozen=True)
class Pair:
    """Two notes of one type and how alike they are."""

    first: str
    """One note's path (the smaller, so each pair is found once)."""
    second: str
    """The other note's path."""
    cosine: float | None
    """The cosine of their vectors, or None when one has none yet."""
    words: float
    """The share of the shorter note's word triples the other holds."""


def similar_pairs(notes: Mapping[str, NoteFacts], vectors: Mapping[str, npt.NDArray[np.float32]]) -> list[Pair]:
    """Every pair of notes of the same type alike enough by meaning or by words to be worth a look."""
    groups: dict[str, list[str]] = defaultdict(list)
    for path, note in notes.items():
        # Typed notes are compared within their type; untyped ones within their folder (a vault that keeps one note
        # per language or version in parallel folders means those notes to be alike).
        group = f"type:{note.note_type}" if note.note_type else f"folder:{posixpath.dirname(path)}"
        wordy = len(_WORD.findall(note.text)) >= MIN_WORDS
        if wordy and note.kind != "conversation" and note.note_type not in _NOT_COMPARED and not note.superseded:
            groups[group].append(path)
    triples = {path: _triples(notes[path].text) for paths in groups.values() for path in paths}
    # The default embedding model reads Latin letters; in other scripts every note's vector is much the same, so
    # only words compare notes there.
    vectors = {path: vector for path, vector in vectors.items() if path in triples and _latin(notes[path].text)}
    found: dict[tuple[str, str], Pair] = {}
    for paths in groups.values():
        if len(paths) < 2:
            continue
        close = _close_by_words(paths, triples) | _close_by_meaning(paths, vectors)
        for first, second in close:
            cosine = _cosine(vectors, first, second)
            words = _containment(triples[first], triples[second])
            if (cosine is not None and cosine >= RELATED_COSINE) or words >= RELATED_WORDS:
                found[(first, second)] = Pair(first, second, cosine, words)
    return sorted(found.values(), key=lambda p: (p.first, p.second))


def duplicates_and_changes(
    notes: Mapping[str, NoteFacts], pairs: Iterable[Pair], backlinks: Mapping[str, int]
) -> list[Suggestion]:
    """The suggestions the alike pairs make: a merge for a near-duplicate, a supersede for a fact that changed."""
    out: list[Suggestion] = []
    stated: dict[str, set[str]] = {}
    unspaced: dict[str, bool] = {}

    def states(note: NoteFacts) -> set[str]:
        if note.path not in stated:
            stated[note.path] = _stated(note)
        return stated[note.path]

    def spaceless(note: NoteFacts) -> bool:
        if note.path not in unspaced:
            unspaced[note.path] = unspaced_share(note.text[:1000]) > 0.5
        return unspaced[note.path]

    for pair in pairs:
        a, b = notes[pair.first], notes[pair.second]
        similarity = [f"words: {pair.words:.0%} of the shorter note's word triples are in the other"]
        if pair.cosine is not None:
            similarity.insert(0, f"meaning: cosine {pair.cosine:.2f}")
        differ = _differing(states(a), states(b))
        # Notes that state something (a fact, a decision) and say different things: the older may be out of date.
        stating = a.note_type in STATEMENT_TYPES and b.note_type in STATEMENT_TYPES
        if stating and differ is not None:
            older, newer = sorted((a, b), key=lambda n: (n.moment, n.stamp, n.changed))
            only_old, only_new = differ if older is a else (differ[1], differ[0])
            evidence = (
                f"{older.title} ({older.moment}) says: {', '.join(only_old)}",
                f"{newer.title} ({newer.moment}) says: {', '.join(only_new)}",
                *similarity,
            )
            out.append(
                Suggestion(
                    kind="changed_fact",
                    paths=(older.path, newer.path),
                    summary=f"{older.title} may be out of date: {newer.title} says otherwise",
                    evidence=evidence,
                    proposal=Proposal("supersede", older.path, newer.path),
                    value=0.85 + 0.1 * max(pair.words, pair.cosine or 0.0),
                    fingerprint=fingerprint(notes, (older.path, newer.path)),
                )
            )
        enough = UNSPACED_WORDS if spaceless(a) or spaceless(b) else DUPLICATE_WORDS
        if differ is None and (
            pair.words >= enough
            or (pair.cosine is not None and pair.cosine >= DUPLICATE_COSINE and pair.words >= AGREEING_WORDS)
        ):
            keep, drop = sorted((a, b), key=lambda n: _worth(n, backlinks), reverse=True)
            why = _why_kept(keep, drop, backlinks)
            out.append(
                Suggestion(
                    kind="duplicate",
                    paths=(drop.path, keep.path),
                    summary=f"{drop.title} repeats {keep.title}",
                    evidence=(*similarity, f"same type: {keep.note_type or keep.kind}", f"keep {keep.title}: {why}"),
                    proposal=Proposal("merge", drop.path, keep.path),
                    value=0.6 + 0.3 * max(pair.words, pair.cosine or 0.0),
                    fingerprint=fingerprint(notes, (drop.path, keep.path)),
                )
            )
    return out


def _latin(text: str) -> bool:
    """Whether most of a text's letters are Latin ones (a note the embedding model reads)."""
    sample = text[:2000]
    letters = len(_LETTER.findall(sample))
    return not letters or len(_LATIN_LETTER.findall(sample)) / letters >= LATIN_SHARE


def _triples(text: str) -> frozenset[str]:
    words = _WORD.findall(text.casefold())
    if len(words) < 3:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + 3]) for i in range(len(words) - 2))


def _containment(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _close_by_words(paths: list[str], triples: Mapping[str, frozenset[str]]) -> set[tuple[str, str]]:
    """Pairs sharing enough word triples, found through the triples two to `COMMON_TRIPLE` notes hold (sorted by
    hash in one array: most triples belong to one note and cost nothing more)."""
    keys: list[int] = []
    owners: list[int] = []
    for n, path in enumerate(paths):
        held = triples[path]
        keys.extend(hash(t) for t in held)
        owners.extend([n] * len(held))
    if not keys:
        return set()
    key_array, owner_array = np.array(keys, dtype=np.int64), np.array(owners, dtype=np.int64)
    order = np.argsort(key_array, kind="stable")
    key_array, owner_array = key_array[order], owner_array[order]
    starts = np.flatnonzero(np.r_[True, key_array[1:] != key_array[:-1]])
    sizes = np.diff(np.r_[starts, len(key_array)])
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for start, size in zip(
        starts[(sizes > 1) & (sizes <= COMMON_TRIPLE)], sizes[(sizes > 1) & (sizes <= COMMON_TRIPLE)], strict=True
    ):
        held_by = sorted(set(owner_array[start : start + size].tolist()))
        for i, first in enumerate(held_by):
            for second in held_by[i + 1 :]:
                shared[(first, second)] += 1
    out = set()
    for (first, second), count in shared.items():
        a, b = paths[first], paths[second]
        if count / max(1, min(len(triples[a]), len(triples[b]))) >= RELATED_WORDS:
            out.add((a, b) if a < b else (b, a))
    return out


def _close_by_meaning(paths: list[str], vectors: Mapping[str, npt.NDArray[np.float32]]) -> set[tuple[str, str]]:
    held = [p for p in paths if p in vectors]
    if len(held) < 2:
        return set()
    matrix = np.stack([vectors[p] for p in held]).astype(np.float32)
    out = set()
    keep = min(NEIGHBOURS + 1, len(held))
    for start in range(0, len(held), _BLOCK):
        sims = matrix[start : start + _BLOCK] @ matrix.T
        for row, scores in enumerate(sims):
            i = start + row
            scores[i] = -1.0
            best = np.argpartition(-scores, keep - 1)[:keep]
            for j in best:
                if scores[j] >= RELATED_COSINE:
                    first, second = held[i], held[int(j)]
                    out.add((first, second) if first < second else (second, first))
    return out


def _cosine(vectors: Mapping[str, npt.NDArray[np.float32]], a: str, b: str) -> float | None:
    if a not in vectors or b not in vectors:
        return None
    return float(np.dot(vectors[a], vectors[b]))


def values_of(text: str) -> set[str]:
    """The values a statement holds that a changed fact would change: numbers, dates, months and names."""
    values = {m.group(0).rstrip(".,") for m in _NUMBER.finditer(text)}
    values |= {w for w in _WORD.findall(text.casefold()) if w in _MONTHS}
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    values |= {
        m.group(0) for m in _NAME.finditer(text) if m.start() not in starts and m.group(0).casefold() not in _MONTHS
    }
    return values


def _differing(first: set[str], second: set[str]) -> tuple[list[str], list[str]] | None:
    """What each of two notes states that the other does not, when both state some: else None."""
    only_a, only_b = sorted(first - second), sorted(second - first)
    if not only_a or not only_b:
        return None
    return only_a[:5], only_b[:5]


def _stated(note: NoteFacts) -> set[str]:
    """The values a note states: those of its text that are not its properties' (a `created` day, a `source`),
    which the index keeps with the text."""
    properties = " ".join(str(value) for value in note.frontmatter.values())
    return values_of(note.text) - values_of(properties)


def _worth(note: NoteFacts, backlinks: Mapping[str, int]) -> tuple[int, float, int, str]:
    return (backlinks.get(note.path, 0), note.confidence or 0.0, len(note.text), note.moment)


def _why_kept(keep: NoteFacts, drop: NoteFacts, backlinks: Mapping[str, int]) -> str:
    if backlinks.get(keep.path, 0) != backlinks.get(drop.path, 0):
        return f"{backlinks.get(keep.path, 0)} notes link to it, {backlinks.get(drop.path, 0)} to the other"
    if (keep.confidence or 0.0) != (drop.confidence or 0.0):
        return f"confidence {keep.confidence or 0:.2f} against {drop.confidence or 0:.2f}"
    if len(keep.text) != len(drop.text):
        return "it says more"
    return "the two are alike; either can stay"
