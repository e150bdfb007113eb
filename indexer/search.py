"""Hybrid search over the index: dense chunk vectors and BM25 over whole notes, fused per note."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from companion.embeddings import Embedder
from companion.fusion import fuse
from indexer.manifest import Manifest
from indexer.store import VectorStore

_TERM = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    """One note found for a query, with every part of its score."""

    path: str
    """Vault-relative POSIX path."""
    score: float
    """Fused score in [0, 1]."""
    dense: float
    """Best chunk's cosine similarity to the query (0 if no chunk was among the dense candidates)."""
    lexical: float
    """BM25 score of the whole note (0 if it did not match)."""
    anchor: str
    """Anchor of the best chunk, or empty when the note came from the lexical side only."""
    title: str
    """File name without `.md`."""
    kind: str
    """Note kind."""
    note_type: str | None
    """Frontmatter `type`."""
    date: str | None
    """Frontmatter `date`."""


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


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression that ORs the query's words, quoted so no word is read as syntax.

    Stopwords are dropped unless the query holds nothing else.
    """
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(text)))
    kept = [t for t in terms if t not in STOPWORDS] or terms
    return " OR ".join(f'"{t}"' for t in kept)


class Searcher:
    """Answers queries from a manifest and a vector store; opens the model and store on first query."""

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

    def search(self, query: str, k: int = 10, *, dense_weight: float = 0.5, candidates: int = 50) -> list[Hit]:
        """The `k` best notes for `query`, best first."""
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        if self._store is None:
            self._store = self._store_factory()
        dense: dict[str, float] = {}
        anchors: dict[str, str] = {}
        if query.strip():
            vector = self._embedder.embed([query])[0]
            for chunk_id, similarity, meta in self._store.query(vector, candidates * 3):
                path = str(meta.get("path") or chunk_id.rsplit("#", 1)[0])
                if similarity > dense.get(path, -1.0):
                    dense[path] = similarity
                    anchors[path] = str(meta.get("anchor", ""))
        match = fts_query(query)
        lexical = dict(self.manifest.lexical(match, candidates)) if match else {}
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
                    anchor=anchors.get(fused.key, ""),
                    title=record.title,
                    kind=record.kind,
                    note_type=record.note_type,
                    date=record.date,
                )
            )
            if len(hits) >= k:
                break
        return hits
