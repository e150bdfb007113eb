"""The index's record of every session summary's shapes, from which the vault's boilerplate is counted.

Whether a reply is boilerplate depends on every other summary (`companion.vault.boilerplate`), so the index keeps
each summary's shapes (three short hashes) and the parts it kept: the counts come from one query, and a summary
whose verdict changed since it was indexed (the fifth `HEARTBEAT_OK` makes the first four boilerplate) is found
without reading any file. A summary that is no candidate has no row in `notes`; its row here, with its stat,
is what tells a restart it needs no reading.
"""

from __future__ import annotations

import sqlite3

from companion.vault.boilerplate import Boilerplate, ExchangeShapes
from companion.vault.notes import FileStat

SCHEMA = """
CREATE TABLE IF NOT EXISTS session_shapes (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    user TEXT NOT NULL,
    reply TEXT NOT NULL,
    body TEXT NOT NULL,
    kept TEXT NOT NULL
);
"""
"""The table (created with the manifest's schema)."""


def record(db: sqlite3.Connection, path: str, stat: FileStat, shapes: ExchangeShapes, kept: str) -> None:
    """Record a summary's shapes and the parts it kept, in the caller's transaction."""
    db.execute(
        "INSERT OR REPLACE INTO session_shapes(path, mtime_ns, size, user, reply, body, kept) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (path, stat.mtime_ns, stat.size, shapes.user, shapes.reply, shapes.body, kept),
    )


def forget(db: sqlite3.Connection, path: str) -> None:
    """Forget a summary that left the vault, in the caller's transaction."""
    db.execute("DELETE FROM session_shapes WHERE path = ?", (path,))


def boilerplate(db: sqlite3.Connection, min_sessions: int) -> Boilerplate:
    """The vault's boilerplate as the recorded summaries count it (each summary counts once per shape)."""
    if min_sessions <= 0:
        return Boilerplate({}, 0)
    rows = db.execute(
        "SELECT s, count(DISTINCT path) FROM ("
        " SELECT path, user AS s FROM session_shapes UNION ALL SELECT path, reply FROM session_shapes"
        " UNION ALL SELECT path, body FROM session_shapes"
        ") WHERE s != '' GROUP BY s HAVING count(DISTINCT path) >= ?",
        (min_sessions,),
    )
    return Boilerplate({str(s): int(n) for s, n in rows}, min_sessions)


def verdicts(db: sqlite3.Connection) -> list[tuple[str, ExchangeShapes, str]]:
    """(path, shapes, parts kept when indexed) of every recorded summary."""
    rows = db.execute("SELECT path, user, reply, body, kept FROM session_shapes")
    return [(str(p), ExchangeShapes(str(u), str(r), str(b)), str(k)) for p, u, r, b, k in rows]


def left_out(db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Path to (mtime_ns, size) of the summaries that are no candidate (no row in `notes`)."""
    rows = db.execute("SELECT path, mtime_ns, size FROM session_shapes WHERE kept = ''")
    return {str(p): (int(m), int(s)) for p, m, s in rows}


UNJUDGED = "?"
"""The parts kept of a summary recorded ahead of its judgement."""


def unjudged(db: sqlite3.Connection) -> set[str]:
    """Summaries recorded ahead of a judgement that never came (a run stopped between the two)."""
    return {str(p) for (p,) in db.execute("SELECT path FROM session_shapes WHERE kept = ?", (UNJUDGED,))}


def unrecorded(db: sqlite3.Connection) -> set[str]:
    """Summaries in `notes` with no recorded shapes (a run stopped between the two)."""
    rows = db.execute("SELECT path FROM notes WHERE kind = 'session' AND path NOT IN (SELECT path FROM session_shapes)")
    return {str(p) for (p,) in rows}
