"""The indexer's own record of what is indexed, and the lexical index beside the vectors.

One SQLite file per vault (WAL mode) holds every indexed note with the stat and hash it was indexed at, every chunk
id with the hash of its text, an FTS5 table for BM25 over whole notes, and the notes that were skipped and why.
Beside them on the same connection: the embedding queue and the write journal (`embedqueue`), each note's language
and title vector (`derived`), and the full-text questions (`wordqueries`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from companion.errors import StoreError
from companion.locations import private_file, private_folder
from companion.recall.scope import Scope
from companion.sqlrows import rows_in
from companion.vault.boilerplate import Boilerplate
from companion.vault.parse import aliases_of
from companion.words import segment
from indexer import noteproblems, sessionshapes
from indexer.derived import Derived
from indexer.embedqueue import EmbedQueue
from indexer.openings import LANGUAGE_RULE, opening_language
from indexer.records import NOTE_COLUMNS, ChunkRecord, NoteRecord
from indexer.schema import ADDED_COLUMNS, DERIVED_COLUMNS, SCHEMA, SCHEMA_VERSION
from indexer.scopesql import casefold_value, json_path, next_day, scope_sql
from indexer.wordqueries import WordQueries


class Manifest:
    """The SQLite side of the index. Not thread-safe: one owner thread, as the writer lock ensures."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._own_writes = 0
        # The full-text index holds every note's text: only this user may open it (SQLite's `-wal` and `-shm`
        # files take the database file's mode).
        private_folder(path.parent)
        private_file(path)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL, not NORMAL: the write journal must survive a power cut, not only a killed process.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            # SQLite's lower() folds ASCII only; filters fold case as Python does, for every script.
            self._db.create_function("casefold", 1, casefold_value, deterministic=True)
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"The index file {path} is unreadable ({exc}). "
                "Run `companion index --rebuild` to build it again from the vault."
            ) from exc
        self._words = WordQueries(self._db)
        self.derived = Derived(self._db, self.transaction)
        """Each note's language and title vector, and the texts they are read from."""
        self.queue = EmbedQueue(self._db, self.transaction)
        """The chunks waiting for their vectors, and the journal of vectors being written."""
        if self.get_meta("schema") is None:
            self.set_meta("schema", SCHEMA_VERSION)
            self.set_meta("language_rule", LANGUAGE_RULE)
        self._add_columns()

    def _add_columns(self) -> None:
        """Bring an index written by an older schema up to date: add the columns, and have every note re-read (schema
        3 cuts unspaced scripts into character pairs in the full-text index).

        Vectors stay valid, so nothing is embedded again; until the next sync the new columns are empty.
        """
        have = {str(r[1]) for r in self._db.execute("PRAGMA table_info(notes)")}
        missing = [(name, sql) for name, sql in ADDED_COLUMNS if name not in have]
        if missing or self.get_meta("schema") != SCHEMA_VERSION:
            with self.transaction() as db:
                for _, sql in missing:
                    db.execute(f"ALTER TABLE notes ADD COLUMN {sql}")
                db.execute("UPDATE notes SET mtime_ns = -1, content_hash = ''")
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
        for name, sql in DERIVED_COLUMNS:
            if name not in have:
                try:
                    self._db.execute(f"ALTER TABLE notes ADD COLUMN {sql}")
                except sqlite3.OperationalError as exc:
                    # Another process opening the same older index may have added it first: nothing to do then.
                    if "duplicate column" not in str(exc):
                        raise
        if sessionshapes.outdated(self._db):
            with self.transaction() as db:
                sessionshapes.upgrade(db)
        self._db.execute(sessionshapes.SESSION_INDEX)
        self._db.execute("CREATE INDEX IF NOT EXISTS notes_title_key ON notes(title_key)")
        # Every embedding pass asks which titles wait for a vector: a partial index answers without a table scan.
        self._db.execute("CREATE INDEX IF NOT EXISTS notes_untitled ON notes(id) WHERE title_vec IS NULL")

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: everything inside commits together or not at all."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"The index file {self.path} cannot be written: {exc}") from exc
        try:
            yield self._db
            self._db.execute("COMMIT")
            self._own_writes += 1
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"The index file {self.path} cannot be written: {exc}") from exc
            raise

    def reset(self) -> None:
        """Forget everything indexed (for a rebuild); the schema stays."""
        with self.transaction() as db:
            for table in ("notes", "chunks", "skipped", "pending", "fts", "aliases", "unembedded", "note_problems"):
                db.execute(f"DELETE FROM {table}")

    def reembed(self, model_id: str, before: str) -> None:
        """Make every vector again with `model_id` (the vectors of `before` are gone): the notes and their words stay
        searchable, every note is read again and its chunks queued, and until that reading is done readers are told
        (`reembedding`) and answer from words only."""
        with self.transaction() as db:
            for table in ("chunks", "unembedded", "pending"):
                db.execute(f"DELETE FROM {table}")
            db.execute("UPDATE notes SET mtime_ns = -1, content_hash = '', title_vec = NULL")
            for key, value in (("vectors_model", model_id), ("title_model", model_id), ("reembedding", before)):
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def reembedding(self) -> str | None:
        """The model whose vectors were dropped, while the notes are read again for another (else None)."""
        return self.get_meta("reembedding")

    def reread_done(self) -> None:
        """Every note was read again after a change of model: readers may ask the meaning side again."""
        if self.reembedding() is None:
            return
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM notes WHERE mtime_ns = -1 LIMIT 1").fetchone() is None:
                db.execute("DELETE FROM meta WHERE key = 'reembedding'")

    def invalidate(self) -> None:
        """Make the next sync re-read every note and retry every skipped one (after a settings change).

        Vectors are kept: notes whose chunks come out the same are only touched.
        """
        with self.transaction() as db:
            db.execute("DELETE FROM skipped")
            db.execute("UPDATE notes SET mtime_ns = -1")

    def read_skipped_again(self) -> bool:
        """Forget the notes skipped by an older way of reading notes (`noteproblems.READING_RULE`), so this sync reads
        them again: a frontmatter that is not valid YAML no longer costs a note. True when there was one to forget."""
        if self.get_meta("reading_rule") == noteproblems.READING_RULE:
            return False
        with self.transaction() as db:
            db.execute("DELETE FROM skipped")
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('reading_rule', ?)", (noteproblems.READING_RULE,)
            )
        return True

    def reread(self) -> None:
        """Make the next sync read and chunk every note again and rewrite its lexical text (after the redaction
        rules changed); chunks whose text comes out the same keep their vectors."""
        with self.transaction() as db:
            db.execute("DELETE FROM skipped")
            db.execute("UPDATE notes SET content_hash = '', mtime_ns = -1")

    # -- meta ----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A value of the `meta` table."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the `meta` table."""
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        self._own_writes += 1

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index changes, by this connection or another process (to key caches)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0]), self._own_writes

    def newest_day(self) -> str | None:
        """The latest `date` (its first 10 characters) of any note, or None (dates that are not dates are ignored)."""
        # Digits sort before ':' and letters after, so this walks the date index from the newest real date.
        row = self._db.execute("SELECT date FROM notes WHERE date < ':' ORDER BY date DESC LIMIT 1").fetchone()
        return None if row is None else str(row[0])[:10]

    # -- reads ---------------------------------------------------------------------------------

    def stats(self) -> dict[str, tuple[int, int]]:
        """Path to (mtime_ns, size) of every indexed and every skipped note: the cheap restart check."""
        out = {str(p): (int(m), int(s)) for p, m, s in self._db.execute("SELECT path, mtime_ns, size FROM notes")}
        for p, m, s in self._db.execute("SELECT path, mtime_ns, size FROM skipped"):
            out[str(p)] = (int(m), int(s))
        out.update(sessionshapes.left_out(self._db))  # summaries known to be boilerplate, read already
        # A summary recorded ahead of a judgement that never came is known with a stat no file has: read again if
        # it is there, forgotten if it is gone.
        out.update(dict.fromkeys(sessionshapes.unjudged(self._db), (-1, -1)))
        return out

    def stats_of_chatter(self) -> dict[str, tuple[int, int]]:
        """Path to (mtime_ns, size) of the session summaries left out as boilerplate."""
        return sessionshapes.left_out(self._db)

    def befores(self, rule: Boilerplate, session: str) -> dict[str, sessionshapes.Before]:
        """The exchange before each session summary of one session, as `rule` judges them."""
        return sessionshapes.befores(self._db, rule, session)

    def note(self, path: str) -> NoteRecord | None:
        """The record of one indexed note."""
        row = self._db.execute(
            f"SELECT {NOTE_COLUMNS} FROM notes WHERE path = ?",
            (path,),
        ).fetchone()
        return None if row is None else NoteRecord(*row)

    def notes_by_path(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        """The records of several notes at once (missing paths are left out)."""
        rows = rows_in(self._db, f"SELECT {NOTE_COLUMNS} FROM notes WHERE path IN ({{marks}})", paths)
        return {str(row[0]): NoteRecord(*row) for row in rows}

    def notes(self) -> list[NoteRecord]:
        """Every indexed note."""
        rows = self._db.execute(f"SELECT {NOTE_COLUMNS} FROM notes ORDER BY path")
        return [NoteRecord(*row) for row in rows]

    def notes_after(self, path: str, limit: int) -> list[NoteRecord]:
        """Up to `limit` indexed notes whose paths sort after `path`, in path order (one page of a listing)."""
        rows = self._db.execute(f"SELECT {NOTE_COLUMNS} FROM notes WHERE path > ? ORDER BY path LIMIT ?", (path, limit))
        return [NoteRecord(*row) for row in rows]

    def latest_changed(self, limit: int, *, kinds: Sequence[str] = ()) -> list[NoteRecord]:
        """The `limit` notes changed last on disk, newest first (of `kinds` only, when given)."""
        where = f"WHERE kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        rows = self._db.execute(
            f"SELECT {NOTE_COLUMNS} FROM notes {where} ORDER BY mtime_ns DESC, path LIMIT ?", (*kinds, limit)
        )
        return [NoteRecord(*row) for row in rows]

    def paths_with_hash(self, content_hash: str) -> list[str]:
        """Indexed notes whose bytes hash to `content_hash` (rename candidates)."""
        rows = self._db.execute("SELECT path FROM notes WHERE content_hash = ?", (content_hash,))
        return [str(r[0]) for r in rows]

    def chunks(self, path: str) -> list[ChunkRecord]:
        """The chunks of one note, in order."""
        rows = self._db.execute(
            "SELECT id, path, anchor, text_hash, start_line, end_line, ord FROM chunks WHERE path = ? ORDER BY ord",
            (path,),
        )
        return [ChunkRecord(*row) for row in rows]

    def chunk(self, chunk_id: str) -> ChunkRecord | None:
        """One chunk by id."""
        row = self._db.execute(
            "SELECT id, path, anchor, text_hash, start_line, end_line, ord FROM chunks WHERE id = ?",
            (chunk_id,),
        ).fetchone()
        return None if row is None else ChunkRecord(*row)

    def chunk_ids_of(self, paths: Iterable[str]) -> list[str]:
        """The chunk ids of the given notes."""
        return [str(r[0]) for r in rows_in(self._db, "SELECT id FROM chunks WHERE path IN ({marks})", paths)]

    def chunk_notes(self, paths: Iterable[str]) -> dict[str, str]:
        """The chunk ids of the given notes, each with its note's path."""
        sql = "SELECT id, path FROM chunks WHERE path IN ({marks})"
        return {str(r[0]): str(r[1]) for r in rows_in(self._db, sql, paths)}

    def chunk_ids(self) -> set[str]:
        """Every chunk id the manifest holds."""
        return {str(r[0]) for r in self._db.execute("SELECT id FROM chunks")}

    def skipped(self) -> list[tuple[str, str]]:
        """Notes skipped as unreadable, with the reason, by path."""
        rows = self._db.execute("SELECT path, reason FROM skipped ORDER BY path")
        return [(str(p), str(r)) for p, r in rows]

    def problems(self) -> list[tuple[str, str]]:
        """Notes indexed with a problem their author should fix (properties read line by line), with it, by path."""
        return noteproblems.listed(self._db)

    def note_count(self) -> int:
        """Notes indexed."""
        return int(self._db.execute("SELECT count(*) FROM notes").fetchone()[0])

    def counts(self) -> tuple[int, int]:
        """(notes, chunks) indexed."""
        notes = self._db.execute("SELECT count(*) FROM notes").fetchone()[0]
        chunks = self._db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return int(notes), int(chunks)

    def lexical(self, match: str, limit: int, scope: Scope | None = None) -> list[tuple[str, float]]:
        """BM25 over whole notes: (path, score) best first, where a higher score is better."""
        return self._words.lexical(match, limit, scope)

    def named(self, name: str) -> list[str]:
        """Notes whose title or one of whose `aliases` is `name` (case folded as Python does, in any script); at most
        50, shortest paths first (a help vault translated into 35 languages shares a title 35 times)."""
        key = name.strip().casefold()
        if not key:
            return []
        # Two index look-ups: every recall asks this, so it must not scan the notes' frontmatter.
        rows = self._db.execute(
            "SELECT path FROM (SELECT path FROM notes WHERE title_key = ? "
            "UNION SELECT path FROM aliases WHERE key = ?) ORDER BY length(path), path LIMIT 50",
            (key, key),
        )
        return [str(path) for (path,) in rows]

    def fields_held(self, keys: Sequence[str]) -> set[str]:
        """Which of these frontmatter keys at least one indexed note has (to tell a misspelt filter from an
        empty result)."""
        return {
            key
            for key in keys
            if self._db.execute(
                "SELECT 1 FROM notes WHERE json_type(notes.fields, ?) IS NOT NULL LIMIT 1", (json_path(key),)
            ).fetchone()
        }

    def holding(
        self, terms: Sequence[str], paths: Sequence[str], frequencies: Mapping[str, int] | None = None
    ) -> dict[str, set[str]]:
        """For each of `paths`, which of `terms` it holds (as the index stems them); notes holding none are left
        out (`frequencies`, from `doc_frequencies`, choose the faster way to ask for each term)."""
        return self._words.holding(terms, paths, frequencies)

    def doc_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many notes hold each word, as the index stems it; words the index does not hold are left out."""
        return self._words.doc_frequencies(terms)

    def paths_in_scope(self, scope: Scope) -> set[str]:
        """The indexed notes a scope lets through."""
        where, params = scope_sql(scope)
        rows = self._db.execute(f"SELECT path FROM notes WHERE {where or '1'}", params)
        return {str(r[0]) for r in rows}

    def dated(self, first_day: str, last_day: str, kinds: Sequence[str] = ("conversation",)) -> list[NoteRecord]:
        """Notes of the given kinds whose `date` falls within `[first_day, last_day]` (ISO days), any order."""
        marks = ",".join("?" * len(kinds))
        rows = self._db.execute(
            f"SELECT {NOTE_COLUMNS} FROM notes WHERE date >= ? AND date < ? AND substr(date, 1, 10) <= ? "
            f"AND kind IN ({marks})",
            (first_day, next_day(last_day), last_day, *kinds),
        )
        return [NoteRecord(*row) for row in rows]

    def placed_within(self, first_day: str, last_day: str) -> list[NoteRecord]:
        """Notes whose `date` or `created` property, or the start of whose title, falls within `[first_day,
        last_day]` (ISO days), any order."""
        rows = self._db.execute(
            f"SELECT {NOTE_COLUMNS} FROM notes WHERE substr(date, 1, 10) BETWEEN ?1 AND ?2 "
            "OR substr(json_extract(fields, '$.created'), 1, 10) BETWEEN ?1 AND ?2 "
            "OR substr(title, 1, 10) BETWEEN ?1 AND ?2",
            (first_day, last_day),
        )
        return [NoteRecord(*row) for row in rows]

    def latest_of_type(self, note_type: str, until_day: str | None = None) -> NoteRecord | None:
        """The newest dated note whose `type` is `note_type` (case-insensitive), on or before `until_day`."""
        row = self._db.execute(
            f"SELECT {NOTE_COLUMNS} FROM notes WHERE lower(coalesce(note_type, '')) = lower(?) "
            "AND coalesce(date, '') != '' AND substr(date, 1, 10) <= ? ORDER BY date DESC, path LIMIT 1",
            (note_type, until_day or "9999-12-31"),
        ).fetchone()
        return None if row is None else NoteRecord(*row)

    def titled(self, titles: Iterable[str]) -> dict[str, list[str]]:
        """Lower-cased title to the paths of the notes with that file name (for resolving link targets)."""
        sql = "SELECT title_key, path FROM notes WHERE title_key IN ({marks}) ORDER BY length(path), path"
        out: dict[str, list[str]] = {}
        for key, path in rows_in(self._db, sql, (t.casefold() for t in titles)):
            out.setdefault(str(key), []).append(str(path))
        return out

    # -- writes (call inside `transaction()`) ---------------------------------------------------

    def put_note(
        self,
        db: sqlite3.Connection,
        record: NoteRecord,
        chunks: Sequence[ChunkRecord],
        body: str,
        problem: str | None = None,
    ) -> None:
        """Insert or replace a note, its chunks and its lexical entry, and what is wrong with it (`problem`: its
        properties were read line by line) or that nothing is."""
        db.execute("DELETE FROM skipped WHERE path = ?", (record.path,))
        noteproblems.record(db, record.path, problem)
        row = db.execute("SELECT id FROM notes WHERE path = ?", (record.path,)).fetchone()
        values = (
            record.path,
            record.mtime_ns,
            record.size,
            record.content_hash,
            record.meta_hash,
            record.kind,
            record.note_type,
            record.title,
            record.date,
            record.fields_json,
            record.links_json,
            record.title.casefold(),
            opening_language(record.title, body),
        )
        if row is None:
            cur = db.execute(
                "INSERT INTO notes(path, mtime_ns, size, content_hash, meta_hash, kind, note_type, "
                "title, date, fields, links, title_key, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            rowid = cur.lastrowid
        else:
            rowid = int(row[0])
            db.execute(
                "UPDATE notes SET path = ?, mtime_ns = ?, size = ?, content_hash = ?, meta_hash = ?, "
                "kind = ?, note_type = ?, title = ?, date = ?, fields = ?, links = ?, title_key = ?, language = ?, "
                # The right-hand sides read the row as it was: a renamed title loses its vector, others keep it.
                "title_vec = CASE WHEN title = ? THEN title_vec END WHERE id = ?",
                (*values, record.title, rowid),
            )
            db.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        # Unspaced scripts (Chinese, Japanese, Thai...) go in as character pairs, as queries are cut (`segment`).
        db.execute(
            "INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)", (rowid, segment(record.title), segment(body))
        )
        db.execute("DELETE FROM aliases WHERE path = ?", (record.path,))
        db.executemany(
            "INSERT INTO aliases(key, path) VALUES (?, ?)",
            # Most notes have none: their frontmatter is not decoded for it.
            [(a.casefold(), record.path) for a in aliases_of(record.frontmatter)]
            if '"alias' in record.fields_json
            else [],
        )
        db.execute("DELETE FROM chunks WHERE path = ?", (record.path,))
        db.execute("DELETE FROM unembedded WHERE path = ?", (record.path,))
        db.executemany(
            "INSERT OR REPLACE INTO chunks(id, path, anchor, text_hash, start_line, end_line, ord) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(c.id, c.path, c.anchor, c.text_hash, c.start_line, c.end_line, c.ord) for c in chunks],
        )

    def touch_note(self, db: sqlite3.Connection, path: str, mtime_ns: int, size: int) -> None:
        """Record a new stat for a note whose bytes did not change (a `touch`, a sync tool)."""
        db.execute("UPDATE notes SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))

    def delete_note(self, db: sqlite3.Connection, path: str) -> None:
        """Forget a note, its chunks and its lexical entry."""
        row = db.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
        if row is not None:
            db.execute("DELETE FROM fts WHERE rowid = ?", (int(row[0]),))
        db.execute("DELETE FROM notes WHERE path = ?", (path,))
        db.execute("DELETE FROM aliases WHERE path = ?", (path,))
        db.execute("DELETE FROM chunks WHERE path = ?", (path,))
        db.execute("DELETE FROM unembedded WHERE path = ?", (path,))
        db.execute("DELETE FROM skipped WHERE path = ?", (path,))
        noteproblems.record(db, path, None)
        sessionshapes.forget(db, path)

    def mark_skipped(self, db: sqlite3.Connection, path: str, mtime_ns: int, size: int, reason: str) -> None:
        """Remember that a note could not be read, so an unchanged broken note is not re-read."""
        db.execute(
            "INSERT OR REPLACE INTO skipped(path, mtime_ns, size, reason) VALUES (?, ?, ?, ?)",
            (path, mtime_ns, size, reason),
        )
        sessionshapes.forget(db, path)  # a summary that cannot be read counts toward no boilerplate

    def forget_chunks(self, db: sqlite3.Connection, ids: Iterable[str]) -> set[str]:
        """Drop chunk rows and mark their notes for re-indexing; returns the notes' paths."""
        paths: set[str] = set()
        for chunk_id in ids:
            row = db.execute("SELECT path FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
            path = str(row[0]) if row else chunk_id.rsplit("#", 1)[0]
            paths.add(path)
            db.execute("DELETE FROM chunks WHERE id = ?", (chunk_id,))
            db.execute("DELETE FROM unembedded WHERE id = ?", (chunk_id,))
        for path in paths:
            db.execute("UPDATE notes SET content_hash = '', mtime_ns = -1 WHERE path = ?", (path,))
        return paths
