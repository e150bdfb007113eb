"""What recall asks of an index, as values and one protocol, so the recall engine never imports the indexer.

`indexer.search.Searcher` implements `NoteIndex`; tests may hand the engine any object with the same methods.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

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
    """Fused relevance in [0, 1]: `w * dense_norm + (1 - w) * lexical_norm`."""
    dense: float
    """Best chunk's cosine similarity to the query (0 if no chunk was among the dense candidates)."""
    lexical: float
    """BM25 score of the whole note (0 if it did not match)."""
    dense_norm: float
    """`dense` min-max normalised over the candidates."""
    lexical_norm: float
    """`lexical` min-max normalised over the candidates."""
    anchor: str
    """Anchor of the best chunk, or empty when the note came from the lexical side only."""
    info: NoteInfo
    """The note as the index knows it."""

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
        self, query: str, k: int, *, scope: Scope | None = None, dense_weight: float = ..., candidates: int = ...
    ) -> list[Hit]:
        """The `k` most relevant notes within `scope`, best first."""
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

    def titled(self, titles: Iterable[str]) -> dict[str, list[str]]:
        """Lower-cased note title to the paths of the notes with that file name."""
        ...

    def chunk_lines(self, path: str, anchor: str) -> tuple[int, int] | None:
        """0-based (first line, line after the last) of a chunk's content in its file, or None."""
        ...

    def latest_of_type(self, note_type: str, until: dt.date | None = None) -> NoteInfo | None:
        """The newest note of a frontmatter `type` (by `date`) dated on or before `until`, or None."""
        ...
