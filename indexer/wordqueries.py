"""The words side of the index: BM25 over whole notes, which of a question's words each note holds, and how many
notes hold each word, all asked of the SQLite file's full-text tables."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from companion.errors import StoreError
from companion.recall.scope import Scope
from companion.sqlrows import rows_in
from indexer.scopesql import scope_sql

_POSTINGS_PER_NOTE = 50
"""`holding` reads a word's whole list of notes when it is at most this many per candidate (~0.4 µs a note against
FTS5's ~25 µs per candidate looked up), else looks the candidates up one by one."""


class WordQueries:
    """Full-text questions over one connection to the index (the manifest's, so one owner thread too)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._stemmer_ready = False

    def lexical(self, match: str, limit: int, scope: Scope | None = None) -> list[tuple[str, float]]:
        """BM25 over whole notes: (path, score) best first, where a higher score is better."""
        where, params = scope_sql(scope) if scope is not None and not scope.empty else ("", [])
        # Unscoped, the best rows are picked inside FTS before the join: a third faster at 50k notes.
        sql = (
            "SELECT notes.path, score FROM (SELECT rowid AS r, -bm25(fts, 2.0, 1.0) AS score FROM fts "
            "WHERE fts MATCH ? ORDER BY score DESC LIMIT ?) JOIN notes ON notes.id = r ORDER BY score DESC"
            if not where
            else "SELECT notes.path, -bm25(fts, 2.0, 1.0) AS score FROM fts JOIN notes ON notes.id = fts.rowid "
            f"WHERE fts MATCH ? AND {where} ORDER BY score DESC LIMIT ?"
        )
        try:
            rows = self._db.execute(sql, (match, limit) if not where else (match, *params, limit)).fetchall()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"Lexical search failed for {match!r}: {exc}") from exc
        return [(str(p), float(s)) for p, s in rows]

    def holding(
        self, terms: Sequence[str], paths: Sequence[str], frequencies: Mapping[str, int] | None = None
    ) -> dict[str, set[str]]:
        """For each of `paths`, which of `terms` it holds (as the index stems them); notes holding none are left
        out. `frequencies` (how many notes hold each term, as `doc_frequencies` gives them), when known, choose the
        faster way to ask for each term."""
        if not terms or not paths:
            return {}
        ids = {
            int(i): str(p) for i, p in rows_in(self._db, "SELECT id, path FROM notes WHERE path IN ({marks})", paths)
        }
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        out: dict[str, set[str]] = {}
        for term in terms:
            held = (frequencies or {}).get(term)
            if held is not None and held <= _POSTINGS_PER_NOTE * len(ids):
                # FTS5 answers `rowid IN (...)` by looking the word up once per id (~25 µs each): reading the word's
                # whole list of notes and keeping the candidates is 10-50 times faster while that list is short.
                rows = self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f'"{term}"',)).fetchall()
            else:
                rows = self._db.execute(
                    f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})", (f'"{term}"', *ids)
                ).fetchall()
            for (rowid,) in rows:
                path = ids.get(int(rowid))
                if path is not None:
                    out.setdefault(path, set()).add(term)
        return out

    def doc_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many notes hold each word, as the index stems it ("entity" is stored as "entiti"); words the
        index does not hold are left out."""
        if not terms:
            return {}
        if not self._stemmer_ready:
            # The index's own tokenizer stems the words: a scratch FTS table in the connection's temp schema.
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words USING fts5(w, tokenize = 'porter unicode61')"
            )
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_stems USING fts5vocab(temp, query_words, 'instance')"
            )
            self._stemmer_ready = True
        self._db.execute("DELETE FROM temp.query_words")
        self._db.executemany("INSERT INTO temp.query_words(rowid, w) VALUES (?, ?)", list(enumerate(terms, 1)))
        # Several words may share a stem ("files" and "file"): each of them holds what the stem holds.
        stems: dict[str, set[str]] = {}
        for term, doc in self._db.execute("SELECT term, doc FROM temp.query_stems"):
            stems.setdefault(str(term), set()).add(terms[int(doc) - 1])
        self._db.execute("DELETE FROM temp.query_words")
        if not stems:
            return {}
        marks = ",".join("?" * len(stems))
        rows = self._db.execute(f"SELECT term, doc FROM fts_terms WHERE term IN ({marks})", list(stems))
        out: dict[str, int] = {}
        for stem, docs in rows:
            for word in stems[str(stem)]:
                out[word] = max(out.get(word, 0), int(docs))
        return out
