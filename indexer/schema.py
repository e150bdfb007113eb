"""The tables of the index's SQLite file, and the columns an older file gains in place."""

from __future__ import annotations

from indexer import noteproblems, sessionshapes

SCHEMA_VERSION = "3"
"""2 added `fields` and `links` to `notes`, so recall filters, dates and the graph need no file reads; 3 cut unspaced
scripts into character pairs in the full-text index and added the `aliases` table (exact-name look-ups)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    meta_hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    note_type TEXT,
    title TEXT NOT NULL,
    date TEXT,
    fields TEXT NOT NULL DEFAULT '{}',
    links TEXT NOT NULL DEFAULT '[]',
    title_key TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS notes_hash ON notes(content_hash);
CREATE INDEX IF NOT EXISTS notes_date ON notes(date);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    anchor TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    ord INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pending (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS unembedded (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    text TEXT NOT NULL,
    meta TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    day INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ord INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS unembedded_order ON unembedded(day DESC, mtime_ns DESC, path, ord);
CREATE INDEX IF NOT EXISTS unembedded_path ON unembedded(path);
CREATE TABLE IF NOT EXISTS aliases (key TEXT NOT NULL, path TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_key ON aliases(key);
CREATE INDEX IF NOT EXISTS aliases_path ON aliases(path);
"""
"""Every table of the index's file, created where missing when it is opened (the full-text, session-shape and
note-problem tables are added to it below)."""
FULLTEXT_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_terms USING fts5vocab(fts, 'row');
"""
"""The full-text index (one row per note, under the note's id: its title and text) and its list of words; the
repair of a damaged one creates them again (`indexer.fulltext`)."""
SCHEMA += FULLTEXT_SCHEMA + sessionshapes.SCHEMA + noteproblems.SCHEMA

ADDED_COLUMNS = (
    ("fields", "fields TEXT NOT NULL DEFAULT '{}'"),
    ("links", "links TEXT NOT NULL DEFAULT '[]'"),
    ("title_key", "title_key TEXT NOT NULL DEFAULT ''"),
)
"""Columns added since schema 1, with their definitions: an index from then is upgraded in place."""
DERIVED_COLUMNS = (("title_vec", "title_vec BLOB"), ("language", "language TEXT"))
"""Columns an older index gains empty without a re-read: the embedding phase fills the title's vector, the next sync
every note's language (`Derived.guess_languages_again`; recall guesses it from the note's opening until then)."""
