"""What recall asks of an index, as values and one protocol, so the recall engine never imports the indexer; and how
an index fuses its dense and lexical rankings into one (pure functions, no I/O).

`indexer.search.Searcher` implements `NoteIndex`; tests may hand the engine any object with the same methods.
Measured on long multi-session conversations, equal-weight reciprocal-rank fusion of BM25 and dense scores did
worse than BM25 alone, while a weighted sum of normalised scores beat it; so scores, not ranks, are fused. BM25 is
scaled min-max over the candidates; cosine similarity against the best candidate and a fixed span (`span_scaled`),
because its values crowd into a narrow band where min-max turns differences of a few hundredths into the whole
[0, 1] range and lets the embeddings outvote a strong lexical match.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from companion.recall.fusion import FusionModel
from companion.recall.scope import Scope
from companion.vault.dates import note_day


@dataclass(frozen=True)
class NoteInfo:
    """What the index knows of a note without reading its file."""

    path: str
    """Vault-relative POSIX path."""
    title: str
    """File name without `.md`."""
    kind: str
    """Note kind (`conversation`, `memory`, `note`)."""
    note_type: str | None
    """Frontmatter `type`."""
    date: str | None
    """Frontmatter `date` as written (first 10 characters are the day)."""
    fields_json: str = field(default="{}", compare=False, hash=False, repr=False)
    """The whole frontmatter as JSON (decoded on first use of `frontmatter`: most candidates never need it)."""
    links_json: str = field(default="[]", compare=False, hash=False, repr=False)
    """Link targets as written, as a JSON list (decoded on first use of `links`)."""

    @cached_property
    def frontmatter(self) -> dict[str, Any]:
        """The whole frontmatter, JSON-safe (empty when it was not a mapping)."""
        value = json.loads(self.fields_json or "{}")
        return value if isinstance(value, dict) else {}

    @cached_property
    def links(self) -> tuple[str, ...]:
        """Link targets as written."""
        value = json.loads(self.links_json or "[]")
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    @property
    def day(self) -> dt.date | None:
        """The note's day (frontmatter `date`, as the index's date filters read it), or None."""
        return note_day(self.date)

    @property
    def pinned(self) -> bool:
        """Frontmatter `pinned: true` (set by curation): the note keeps its full score whatever its age."""
        return '"pinned"' in self.fields_json and self.frontmatter.get("pinned") is True

    @property
    def superseded_by(self) -> str:
        """Frontmatter `superseded_by` (a review marks an older fact replaced by a newer note): the newer note's
        link as written, or empty."""
        if '"superseded_by"' not in self.fields_json:
            return ""
        value = self.frontmatter.get("superseded_by")
        if isinstance(value, list) and len(value) == 1:  # a property Obsidian shows as a list of one link
            value = value[0]
        return value.strip() if isinstance(value, str) else ""

    @property
    def confidence(self) -> float | None:
        """Frontmatter `confidence` (0..1) of a memory note, when it is a number."""
        if '"confidence"' not in self.fields_json:
            return None  # skip decoding the frontmatter of the many notes without one
        value = self.frontmatter.get("confidence")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value)


@dataclass(frozen=True)
class Hit:
    """One note found for a query, with every part of its relevance."""

    path: str
    """Vault-relative POSIX path."""
    score: float
    """Fused relevance: `w * dense_norm + (1 - w) * lexical_norm` in [0, 1], plus `words`."""
    dense: float
    """Best chunk's cosine similarity to the query (0 if no chunk was among the dense candidates)."""
    lexical: float
    """BM25 score of the whole note (0 if it did not match)."""
    dense_norm: float
    """`dense` scaled to [0, 1] against the best candidate (see `fuse`)."""
    lexical_norm: float
    """`lexical` min-max normalised over the candidates."""
    anchor: str
    """Anchor of the best chunk, or empty when the note came from the lexical side only."""
    info: NoteInfo
    """The note as the index knows it."""
    words: float = 0.0
    """What holding every word of the query added to `score` (0 when the note misses one)."""
    dense_weight: float = 0.5
    """The dense share this query's fusion used (`lexical_dense_weight` of the settings and `coverage`)."""
    coverage: float = 0.0
    """How much of the query (its words weighted by idf) the best BM25 note holds; the same for every hit."""
    features: tuple[float, ...] = ()
    """The learned fusion's features (`companion.recall.fusion.FEATURES`), empty when weights fused the sides."""
    name_rank: int = 0
    """How strongly the question names the note by its title or an alias (`companion.recall.fusion.name_rank`);
    a named note ranks above every other."""

    @property
    def title(self) -> str:
        """File name without `.md`."""
        return self.info.title

    @property
    def kind(self) -> str:
        """Note kind."""
        return self.info.kind

    @property
    def note_type(self) -> str | None:
        """Frontmatter `type`."""
        return self.info.note_type

    @property
    def date(self) -> str | None:
        """Frontmatter `date`."""
        return self.info.date


class NoteIndex(Protocol):
    """The read side of an index, as recall uses it."""

    def search(
        self,
        query: str,
        k: int,
        *,
        scope: Scope | None = None,
        dense_weight: float = ...,
        candidates: int = ...,
        every_word_weight: float = ...,
        every_word_query: str | None = None,
        lexical_trust: float = ...,
        dense_span: float = ...,
        unspaced_dense_weight: float = ...,
        model: FusionModel | None = None,
    ) -> list[Hit]:
        """The `k` most relevant notes within `scope`, best first (a note holding every word of the query, or of
        `every_word_query` when given, gets `every_word_weight` on top of its fused relevance; the dense share is
        `lexical_dense_weight(dense_weight, lexical_trust, coverage)`; cosine similarity is scaled with
        `dense_span`)."""
        ...

    def generation(self) -> Hashable:
        """A value that changes whenever the index changes (to key caches)."""
        ...

    def embed_queries(self, queries: Sequence[str]) -> None:
        """Prepare many queries at once (batch recall); a no-op is a valid implementation."""
        ...

    def infos(self, paths: Sequence[str]) -> dict[str, NoteInfo]:
        """What the index knows of these notes (unknown paths are left out)."""
        ...

    def dated(self, first_day: dt.date, last_day: dt.date) -> list[NoteInfo]:
        """Conversation notes dated within `[first_day, last_day]`."""
        ...

    def chatter(self) -> frozenset[str]:
        """The session summaries left out as boilerplate (both sides of their exchange), by path."""
        ...

    def titled(self, titles: Iterable[str]) -> dict[str, list[str]]:
        """Lower-cased note title to the paths of the notes with that file name."""
        ...

    def chunk_lines(self, path: str, anchor: str) -> tuple[int, int] | None:
        """0-based (first line, line after the last) of a chunk's content in its file, or None."""
        ...

    def latest_of_type(self, note_type: str, until: dt.date | None = None) -> NoteInfo | None:
        """The newest note of a frontmatter `type` (by `date`) dated on or before `until`, or None."""
        ...


@dataclass(frozen=True)
class Fused:
    """One candidate's fused score with the parts it came from."""

    key: str
    """What was ranked (a note path)."""
    score: float
    """`dense_weight * dense_norm + (1 - dense_weight) * lexical_norm`, in [0, 1]."""
    dense: float
    """Raw dense score (cosine similarity), 0 when the dense ranking did not return it."""
    lexical: float
    """Raw lexical score (BM25, higher is better), 0 when the lexical ranking did not return it."""
    dense_norm: float
    """Dense score scaled to [0, 1] (see `fuse`)."""
    lexical_norm: float
    """Lexical score min-max normalised over the candidates."""
    words: float = 0.0
    """The bonus for holding every word of the query, included in `score`."""


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scale scores to [0, 1]; a single candidate (or all equal) scores 1."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def span_scaled(scores: Mapping[str, float], span: float) -> dict[str, float]:
    """Scale scores to [0, 1] against the best one: the best scores 1, a score `span` or more below it 0.

    Unlike `min_max`, what a candidate gets does not depend on the weakest candidate in the list, so a list of 5
    and one of 500 scale alike, and a list whose scores are all close stays close.
    """
    if span <= 0:
        raise ValueError(f"span must be positive, got {span}")
    if not scores:
        return {}
    best = max(scores.values())
    return {k: max(0.0, 1.0 - (best - v) / span) for k, v in scores.items()}


def lexical_dense_weight(dense_weight: float, lexical_trust: float, coverage: float) -> float:
    """The dense share for one question: `dense_weight * (1 - lexical_trust * coverage ** 3)`.

    `coverage` is how much of the question the best BM25 note holds (its words weighted by idf, 0..1). When one
    note holds the question's words, lexical evidence is strong and BM25 gets the larger share; when none holds
    most of them, the question is a paraphrase and the embeddings keep theirs. The cube keeps the shift for notes
    that hold nearly every word: a note holding half of them is common, and says little.
    """
    coverage = min(max(coverage, 0.0), 1.0)
    return dense_weight * (1.0 - lexical_trust * coverage**3)


def fuse(
    dense: Mapping[str, float],
    lexical: Mapping[str, float],
    dense_weight: float = 0.5,
    *,
    dense_span: float = 0.0,
    every_word: Collection[str] = (),
    every_word_weight: float = 0.0,
) -> list[Fused]:
    """Weighted sum of normalised scores, best first (ties broken by key for stable output); the keys in
    `every_word` (notes holding every word of the query) get `every_word_weight` on top.

    BM25 is scaled min-max over the candidates; cosine similarity by `span_scaled` with `dense_span`, or min-max
    too when `dense_span` is 0.
    """
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError(f"dense_weight must be within [0, 1], got {dense_weight}")
    dn = span_scaled(dense, dense_span) if dense_span > 0 else min_max(dense)
    ln = min_max(lexical)
    bonus = {key: every_word_weight for key in every_word}
    out = [
        Fused(
            key=key,
            score=dense_weight * dn.get(key, 0.0) + (1.0 - dense_weight) * ln.get(key, 0.0) + bonus.get(key, 0.0),
            dense=dense.get(key, 0.0),
            lexical=lexical.get(key, 0.0),
            dense_norm=dn.get(key, 0.0),
            lexical_norm=ln.get(key, 0.0),
            words=bonus.get(key, 0.0),
        )
        for key in set(dense) | set(lexical) | set(bonus)
    ]
    # A tie (to float noise: a perfect fused 1.0 against the bonus alone) goes to the note holding every word.
    out.sort(key=lambda f: (-round(f.score, 9), -f.words, f.key))
    return out
