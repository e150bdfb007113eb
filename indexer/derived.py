"""What the index derives from each note beside its words: the language its opening is in, its title's vector (the
learned fusion's title-meaning feature), and the openings and bodies those are read from, all on the manifest's
connection (the same SQLite file and owner thread)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from companion.recall.language import language_of
from companion.sqlrows import rows_in
from indexer.openings import LANGUAGE_RULE, OPENING_CHARS, OPENING_SQL

TITLE_VECTOR_DTYPE = "float16"
"""How a title's vector is stored: half precision moves a cosine by about 0.001 and halves the space."""


class Derived:
    """Reads the `language` column of the notes table (a note's write sets it; `guess_languages_again` redoes
    every note's), reads and writes its `title_vec` column, and reads notes' texts from the full-text table;
    `transaction` is the manifest's, for what commits on its own."""

    def __init__(self, db: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]):
        self._db = db
        self._transaction = transaction

    def guess_languages_again(self) -> int:
        """Guess every note's language again when the index's were guessed by an older rule (`LANGUAGE_RULE`) or
        not kept at all, from the same opening a write guesses it from; the writer does it at the start of a sync.
        A few seconds once at 50,000 notes, 500 notes a transaction so that a reader is never kept waiting; a note
        rewritten meanwhile keeps what its write guessed. Returns how many notes were guessed again."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'language_rule'").fetchone()
        if row is not None and str(row[0]) == LANGUAGE_RULE:
            return 0
        sql = (
            f"SELECT notes.id, notes.content_hash, {OPENING_SQL} "
            "FROM notes JOIN fts ON fts.rowid = notes.id WHERE notes.id IN ({marks})"
        )
        ids = [int(r[0]) for r in self._db.execute("SELECT id FROM notes")]
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self._db.execute(sql.format(marks=",".join("?" * len(part))), (OPENING_CHARS, *part))
            guesses = [(language_of(str(text)), int(rowid), str(digest)) for rowid, digest, text in rows]
            with self._transaction() as db:
                db.executemany("UPDATE notes SET language = ? WHERE id = ? AND content_hash = ?", guesses)
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('language_rule', ?)", (LANGUAGE_RULE,))
        return len(ids)

    def language_counts(self) -> dict[str, int]:
        """How many notes of the index are in each language, as `opening_language` guessed it."""
        rows = self._db.execute("SELECT language, COUNT(*) FROM notes WHERE language IS NOT NULL GROUP BY language")
        return {str(language): int(count) for language, count in rows}

    def languages(self, paths: Sequence[str]) -> dict[str, str]:
        """Each note's language as `language_of` guessed it from its opening (notes of an older index that did not
        keep it are left out until its next sync)."""
        sql = "SELECT path, language FROM notes WHERE language IS NOT NULL AND path IN ({marks})"
        return {str(p): str(lang) for p, lang in rows_in(self._db, sql, paths)}

    def openings(self, paths: Sequence[str], chars: int = OPENING_CHARS) -> dict[str, str]:
        """The first `chars` characters of each note's indexed text (title, then body), by path."""
        return self._texts(paths, OPENING_SQL, chars)

    def bodies(self, paths: Sequence[str], chars: int = 4000) -> dict[str, str]:
        """The first `chars` characters of each note's indexed body (no title), by path."""
        return self._texts(paths, "substr(fts.body, 1, ?)", chars)

    def _texts(self, paths: Sequence[str], text: str, chars: int) -> dict[str, str]:
        """`text` (an expression over `fts`, cut at `chars`) for each note, by path, 500 paths a query."""
        sql = f"SELECT notes.path, {text} FROM notes JOIN fts ON fts.rowid = notes.id WHERE notes.path IN ({{marks}})"
        out: dict[str, str] = {}
        for start in range(0, len(paths), 500):
            part = list(paths[start : start + 500])
            marks = ",".join("?" * len(part))
            for path, found in self._db.execute(sql.format(marks=marks), (chars, *part)):
                out[str(path)] = str(found or "")
        return out

    def untitled(self, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` notes whose title has no vector yet, as (path, title)."""
        # A summary's file name says nothing of what was said (`14-03.md`): its words and chunks speak for it.
        rows = self._db.execute(
            "SELECT path, title FROM notes WHERE title_vec IS NULL AND kind != 'session' ORDER BY id LIMIT ?", (limit,)
        )
        return [(str(p), str(t)) for p, t in rows]

    def untitled_count(self) -> int:
        """How many notes' titles have no vector yet."""
        sql = "SELECT count(*) FROM notes WHERE title_vec IS NULL AND kind != 'session'"
        return int(self._db.execute(sql).fetchone()[0])

    def set_title_vectors(self, db: sqlite3.Connection, vectors: Sequence[tuple[str, bytes]]) -> None:
        """Store title vectors (`TITLE_VECTOR_DTYPE` bytes) by path, in the caller's transaction."""
        db.executemany("UPDATE notes SET title_vec = ? WHERE path = ?", [(v, p) for p, v in vectors])

    def title_vectors(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The stored title vectors of these notes (those without one are left out)."""
        sql = "SELECT path, title_vec FROM notes WHERE title_vec IS NOT NULL AND path IN ({marks})"
        return {str(p): bytes(v) for p, v in rows_in(self._db, sql, paths)}

    def forget_title_vectors(self, model_id: str) -> None:
        """Drop every title vector, for vectors of `model_id` to be made (the embedding model changed)."""
        with self._transaction() as db:
            db.execute("UPDATE notes SET title_vec = NULL")
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('title_model', ?)", (model_id,))
