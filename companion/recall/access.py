"""Access statistics (`last_accessed_at`, `access_count`) kept by the companion, never written into notes.

They could live in each note's frontmatter; here they live in the vault's data directory, so recalling never rewrites
the vault (query mode is read-only) and an agent's reads do not churn the user's files or sync.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from companion.errors import StoreError
from companion.locations import private_file, private_folder
from companion.recall.decay import AccessStats
from companion.sqlrows import rows_in

_SCHEMA = """
CREATE TABLE IF NOT EXISTS access (
    path TEXT PRIMARY KEY,
    last_accessed_at TEXT NOT NULL,
    access_count INTEGER NOT NULL
);
"""


class AccessLog:
    """A small SQLite table of access statistics per vault-relative path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        private_folder(path.parent)
        private_file(path)  # access times say which notes were read: this user's only
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"The access statistics in {path} are unreadable ({exc}): `companion index` sets the file aside and "
                "starts afresh (stop a running indexer first)."
            ) from exc

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def stats(self, paths: Sequence[str]) -> dict[str, AccessStats]:
        """The statistics of the given paths; paths never accessed get `AccessStats()`."""
        out = {p: AccessStats() for p in paths}
        sql = "SELECT path, last_accessed_at, access_count FROM access WHERE path IN ({marks})"
        for path, when, count in rows_in(self._db, sql, out):
            out[str(path)] = AccessStats(datetime.fromisoformat(str(when)), int(count))
        return out

    def record(self, paths: Iterable[str], when: datetime) -> None:
        """Count one access of each path at `when` (a timezone-naive `when` is taken as UTC)."""
        # Stored in UTC with one format, so SQLite's text `max` orders the times correctly.
        stamp = (when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()
        unique = list(dict.fromkeys(paths))
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany(
                "INSERT INTO access(path, last_accessed_at, access_count) VALUES (?, ?, 1) "
                "ON CONFLICT(path) DO UPDATE SET access_count = access_count + 1, "
                "last_accessed_at = max(last_accessed_at, excluded.last_accessed_at)",
                [(p, stamp) for p in unique],
            )
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def rename(self, old: str, new: str) -> None:
        """Carry a note's statistics over to its new path (renames keep their history)."""
        self._db.execute("UPDATE OR REPLACE access SET path = ? WHERE path = ?", (new, old))

    def forget(self, paths: Iterable[str]) -> None:
        """Drop the statistics of deleted notes."""
        self._db.executemany("DELETE FROM access WHERE path = ?", [(p,) for p in paths])
