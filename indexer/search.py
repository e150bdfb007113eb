"""Hybrid search over the index: dense chunk vectors and BM25 over whole notes, fused per note."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.candidates import Hit, NoteInfo
from companion.config import RecallConfig
from companion.embeddings import Embedder
from companion.fusion import fuse
from companion.scope import Scope
from companion.words import STOPWORDS
from indexer.manifest import Manifest, NoteRecord
from indexer.store import VectorStore

_TERM = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression that ORs the query's words, quoted so no word is read as syntax.

    Stopwords are dropped unless the query holds nothing else.
    """
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(text)))
    kept = [t for t in terms if t not in STOPWORDS] or terms
    return " OR ".join(f'"{t}"' for t in kept)


DENSE_WEIGHT = RecallConfig.dense_weight
"""Share of the dense side in the fused score (the rest is BM25); the config's default."""

_NATIVE_KEYS = {"kind": "kind", "type": "type", "user_id": "user_id", "chat_id": "chat_id"}
_IN_LIMIT = 2000  # largest path list sent to Chroma as `$in`; past it, ask for more and filter here


def info_from_record(record: NoteRecord) -> NoteInfo:
    """A manifest record as the recall engine's `NoteInfo`."""
    return NoteInfo(
        path=record.path,
        title=record.title,
        kind=record.kind,
        note_type=record.note_type,
        date=record.date,
        frontmatter=record.frontmatter,
        links=tuple(record.link_targets),
    )


class Searcher:
    """Answers queries from a manifest and a vector store; opens the model and store on first query.

    Implements `companion.candidates.NoteIndex`.
    """

    def __init__(
        self,
        manifest: Manifest,
        embedder_factory: Callable[[], Embedder],
        store_factory: Callable[[], VectorStore],
    ) -> None:
        self.manifest = manifest
        self._embedder_factory = embedder_factory
        self._store_factory = store_factory
        self._embedder: Embedder | None = None
        self._store: VectorStore | None = None
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    def embed_queries(self, queries: Sequence[str]) -> None:
        """Embed many queries in batches ahead of time (batch recall); later searches reuse the vectors."""
        todo = [q for q in dict.fromkeys(queries) if q.strip() and q not in self._vectors]
        if not todo:
            return
        embedder = self._open_embedder()
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            for query, vector in zip(part, embedder.embed(part), strict=True):
                self._vectors[query] = vector

    def _vector(self, query: str) -> npt.NDArray[np.float32]:
        vector = self._vectors.get(query)
        if vector is None:
            if len(self._vectors) > 4096:
                self._vectors.clear()
            vector = self._vectors[query] = self._open_embedder().embed([query])[0]
        return vector

    def _open_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        scope: Scope | None = None,
        dense_weight: float = DENSE_WEIGHT,
        candidates: int = 50,
    ) -> list[Hit]:
        """The `k` best notes for `query` within `scope`, best first."""
        if self._store is None:
            self._store = self._store_factory()
        scope = scope if scope is not None and not scope.empty else None
        dense: dict[str, float] = {}
        anchors: dict[str, str] = {}
        if query.strip():
            where, allowed = self._dense_filter(scope)
            if allowed is not None and not allowed:
                return []
            want = candidates * 3
            if allowed is not None and where is None:
                # Too many paths for `$in`: over-fetch in proportion to how much the scope keeps, then filter.
                total = max(self.manifest.counts()[1], 1)
                want = min(total, int(want * max(1.0, total / max(len(allowed), 1) / 4)))
            for chunk_id, similarity, meta in self._store.query(self._vector(query), want, where):
                path = str(meta.get("path") or chunk_id.rsplit("#", 1)[0])
                if allowed is not None and path not in allowed:
                    continue
                if similarity > dense.get(path, -1.0):
                    dense[path] = similarity
                    anchors[path] = str(meta.get("anchor", ""))
        match = fts_query(query)
        lexical = dict(self.manifest.lexical(match, candidates, scope)) if match else {}
        hits: list[Hit] = []
        ranked = fuse(dense, lexical, dense_weight)
        records = self.manifest.notes_by_path([f.key for f in ranked[: k * 2]])
        if len(records) < min(k, len(ranked)):
            records = self.manifest.notes_by_path([f.key for f in ranked])
        for fused in ranked:
            record = records.get(fused.key)
            if record is None:  # written to the store, not yet committed to the manifest
                continue
            hits.append(
                Hit(
                    path=fused.key,
                    score=fused.score,
                    dense=fused.dense,
                    lexical=fused.lexical,
                    dense_norm=fused.dense_norm,
                    lexical_norm=fused.lexical_norm,
                    anchor=anchors.get(fused.key, ""),
                    info=info_from_record(record),
                )
            )
            if len(hits) >= k:
                break
        return hits

    def _dense_filter(self, scope: Scope | None) -> tuple[dict[str, Any] | None, set[str] | None]:
        """A Chroma `where` for the scope, and the paths the scope allows (checked again on every result)."""
        if scope is None:
            return None, None
        allowed = self.manifest.paths_in_scope(scope)
        if len(allowed) <= _IN_LIMIT:
            return ({"path": {"$in": sorted(allowed)}} if allowed else None), allowed
        if all(key in _NATIVE_KEYS for key, _ in scope.where) and not scope.path_glob:
            # Chroma compares exactly where SQL ignores case; results are filtered by `allowed` either way.
            clauses: list[dict[str, Any]] = [{_NATIVE_KEYS[key]: value} for key, value in scope.where]
            if scope.since is not None:
                clauses.append({"day": {"$gte": int(scope.since.strftime("%Y%m%d"))}})
            if scope.until is not None:
                clauses.append({"day": {"$lte": int(scope.until.strftime("%Y%m%d"))}})
            return (clauses[0] if len(clauses) == 1 else {"$and": clauses}), allowed
        return None, allowed

    def infos(self, paths: Sequence[str]) -> dict[str, NoteInfo]:
        """What the manifest knows of these notes."""
        return {p: info_from_record(r) for p, r in self.manifest.notes_by_path(paths).items()}

    def dated(self, first_day: dt.date, last_day: dt.date) -> list[NoteInfo]:
        """Conversation notes dated within `[first_day, last_day]`."""
        return [info_from_record(r) for r in self.manifest.dated(first_day.isoformat(), last_day.isoformat())]

    def titled(self, titles: Iterable[str]) -> dict[str, list[str]]:
        """Lower-cased note title to the paths of the notes with that file name."""
        return self.manifest.titled(titles)

    def chunk_lines(self, path: str, anchor: str) -> tuple[int, int] | None:
        """0-based (first line, line after the last) of a chunk's content in its file, or None."""
        record = self.manifest.chunk(f"{path}#{anchor}")
        return None if record is None else (record.start_line, record.end_line)

    def latest_of_type(self, note_type: str, until: dt.date | None = None) -> NoteInfo | None:
        """The newest note of a frontmatter `type` dated on or before `until`, or None."""
        record = self.manifest.latest_of_type(note_type, until.isoformat() if until else None)
        return None if record is None else info_from_record(record)
