"""The index's record of notes indexed with a problem their author should fix: a frontmatter block that is not valid
YAML, whose properties were read line by line. Such a note is indexed and recalled (it is not among the skipped);
its row here keeps the problem for `companion doctor` until the note is read again, changed or gone.
"""

from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS note_problems (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
"""
"""The table (created with the manifest's schema)."""

READING_RULE = "2"
"""How notes are read, as a version: before 2 a frontmatter block that is not valid YAML cost the whole note (it was
skipped); an index kept by an older rule reads its skipped notes again at its next sync."""


def record(db: sqlite3.Connection, path: str, reason: str | None) -> None:
    """Keep the problem of a note just indexed, or forget an older one when it has none now (in `db`'s transaction)."""
    if reason is None:
        db.execute("DELETE FROM note_problems WHERE path = ?", (path,))
    else:
        db.execute("INSERT OR REPLACE INTO note_problems(path, reason) VALUES (?, ?)", (path, reason))


def listed(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every note indexed with a problem, with the problem, by path."""
    rows = db.execute("SELECT path, reason FROM note_problems ORDER BY path")
    return [(str(p), str(r)) for p, r in rows]
