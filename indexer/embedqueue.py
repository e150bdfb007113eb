"""The embedding queue and the write journal, on the manifest's connection.

The words phase queues each chunk with its text (`unembedded`), to be embedded later, newest notes first. The
`pending` journal holds the chunk ids whose vectors are being written: Chroma and SQLite cannot share a transaction,
so the journal is committed before the store is touched and cleared in the transaction that records the result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

from companion.sqlrows import rows_in
from indexer.records import Unembedded


class EmbedQueue:
    """The `unembedded` and `pending` tables; `transaction` is the manifest's, for what commits on its own (the
    other writes take the caller's transaction)."""

    def __init__(self, db: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]):
        self._db = db
        self._transaction = transaction

    def embedded_ids(self) -> set[str]:
        """The chunk ids whose vectors the store should hold: every chunk but those still to be embedded."""
        rows = self._db.execute("SELECT id FROM chunks WHERE id NOT IN (SELECT id FROM unembedded)")
        return {str(r[0]) for r in rows}

    def embedded_count(self) -> int:
        """How many vectors the store should hold."""
        row = self._db.execute("SELECT (SELECT count(*) FROM chunks) - (SELECT count(*) FROM unembedded)").fetchone()
        return int(row[0])

    def unembedded_totals(self) -> tuple[int, int]:
        """(chunks, model tokens) still to be embedded."""
        row = self._db.execute("SELECT count(*), coalesce(sum(tokens), 0) FROM unembedded").fetchone()
        return int(row[0]), int(row[1])

    def next_unembedded(self, limit: int) -> list[Unembedded]:
        """The next chunks to embed: of the newest notes first (by their date, then their file's time)."""
        rows = self._db.execute(
            "SELECT id, path, text, meta, tokens FROM unembedded ORDER BY day DESC, mtime_ns DESC, path, ord LIMIT ?",
            (limit,),
        )
        return [Unembedded(str(i), str(p), str(t), str(m), int(n)) for i, p, t, m, n in rows]

    def unembedded_of(self, paths: Iterable[str]) -> set[str]:
        """Which of these notes have chunks still to be embedded."""
        rows = rows_in(self._db, "SELECT DISTINCT path FROM unembedded WHERE path IN ({marks})", paths)
        return {str(r[0]) for r in rows}

    def unembedded_among(self, ids: Iterable[str]) -> set[str]:
        """Which of these chunk ids are queued for embedding."""
        return {str(r[0]) for r in rows_in(self._db, "SELECT id FROM unembedded WHERE id IN ({marks})", ids)}

    def unembedded_ids(self, path: str) -> set[str]:
        """The chunk ids of one note still to be embedded."""
        return {str(r[0]) for r in self._db.execute("SELECT id FROM unembedded WHERE path = ?", (path,))}

    def pending(self) -> list[str]:
        """Chunk ids left in the journal by an interrupted write."""
        return [str(r[0]) for r in self._db.execute("SELECT id FROM pending")]

    def journal(self, ids: Iterable[str]) -> None:
        """Record chunk ids about to be written to or deleted from the vector store; commits at once."""
        with self._transaction() as db:
            db.executemany("INSERT OR IGNORE INTO pending(id) VALUES (?)", [(i,) for i in ids])

    def clear_journal(self, db: sqlite3.Connection, ids: Iterable[str]) -> None:
        """Drop ids from the journal, in the caller's transaction."""
        db.executemany("DELETE FROM pending WHERE id = ?", [(i,) for i in ids])

    def queue_chunks(self, db: sqlite3.Connection, chunks: Sequence[tuple[Unembedded, int, int, int]]) -> None:
        """Record chunks to embed later, each with its note's day (`YYYYMMDD`, 0 when undated), file time and its
        place in the note, which order the embedding (newest first)."""
        db.executemany(
            "INSERT OR REPLACE INTO unembedded(id, path, text, meta, tokens, day, mtime_ns, ord) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(c.id, c.path, c.text, c.meta_json, c.tokens, day, mtime, ord_) for c, day, mtime, ord_ in chunks],
        )

    def mark_embedded(self, db: sqlite3.Connection, ids: Iterable[str]) -> None:
        """Chunks whose vectors are now in the store."""
        db.executemany("DELETE FROM unembedded WHERE id = ?", [(i,) for i in ids])
