"""The index's record of every session summary's shapes, from which the vault's boilerplate is counted.

Whether a reply is boilerplate depends on every other summary (`companion.vault.boilerplate`), so the index keeps
each summary's shapes (three short hashes) and the parts it kept: the counts come from one query, and a summary
whose verdict changed since it was indexed (the fifth `HEARTBEAT_OK` makes the first four boilerplate) is found
without reading any file. A summary that is no candidate has no row in `notes`; its row here, with its stat,
is what tells a restart it needs no reading.

Each row also places its summary in its session (the day and the session key) and in time, and keeps the stamp of
the exchange before it that it was embedded with (`Before`): when that one changes, leaves, or another arrives
between the two, the stamp the table gives no longer matches and the summary is embedded again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

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
    kept TEXT NOT NULL,
    session TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL DEFAULT '',
    context TEXT NOT NULL DEFAULT ''
);
"""
"""The table (created with the manifest's schema; `upgrade` brings an older one up to date)."""

_PLACE_COLUMNS = (
    ("session", "session TEXT NOT NULL DEFAULT ''"),
    ("at", "at TEXT NOT NULL DEFAULT ''"),
    ("context", "context TEXT NOT NULL DEFAULT ''"),
)


SESSION_INDEX = "CREATE INDEX IF NOT EXISTS session_shapes_session ON session_shapes(session, at)"
"""Finds a session's summaries without a table scan (run once the table is up to date)."""


def _missing(db: sqlite3.Connection) -> list[str]:
    have = {str(r[1]) for r in db.execute("PRAGMA table_info(session_shapes)")}
    return [sql for name, sql in _PLACE_COLUMNS if name not in have]


def outdated(db: sqlite3.Connection) -> bool:
    """Whether the table lacks columns (written by an older version): a read, no lock."""
    return bool(_missing(db))


def upgrade(db: sqlite3.Connection) -> None:
    """Add the columns an older index lacks, in the caller's transaction. Its summaries are read again (their rows
    forgotten, their notes marked stale), so each is placed in its session and embedded with the exchange before it."""
    missing = _missing(db)  # again, inside the transaction: another process may have done it meanwhile
    if not missing:
        return
    for sql in missing:
        db.execute(f"ALTER TABLE session_shapes ADD COLUMN {sql}")
    db.execute("DELETE FROM session_shapes")
    db.execute("UPDATE notes SET mtime_ns = -1 WHERE kind = 'session'")


@dataclass(frozen=True)
class Place:
    """Where a summary stands: its session (day and session key; empty for a summary with no readable moment) and
    its moment (ISO, as written), which orders a session's exchanges."""

    session: str = ""
    """The day and the session key."""
    at: str = ""
    """The moment."""


@dataclass(frozen=True)
class Before:
    """The exchange a summary is embedded after: the nearest earlier summary of its session with a side kept."""

    path: str
    """That summary's vault path."""
    stamp: str
    """Its path, stat and kept sides: what changes when the context it gives changes."""
    kept: str
    """Its sides kept (`u`, `r`), the body left out: an exchange is the context, not its notes."""


def record(
    db: sqlite3.Connection,
    path: str,
    stat: FileStat,
    shapes: ExchangeShapes,
    kept: str,
    place: Place = Place(),
    context: str = "",
) -> None:
    """Record a summary's shapes, the parts it kept, its place and the stamp of the context it was embedded with, in
    the caller's transaction."""
    db.execute(
        "INSERT OR REPLACE INTO session_shapes(path, mtime_ns, size, user, reply, body, kept, session, at, context) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            path,
            stat.mtime_ns,
            stat.size,
            shapes.user,
            shapes.reply,
            shapes.body,
            kept,
            place.session,
            place.at,
            context,
        ),
    )


_PLACED = "SELECT path, session, at, mtime_ns, size, user, reply FROM session_shapes"


def befores(db: sqlite3.Connection, rule: Boilerplate, session: str) -> dict[str, Before]:
    """The exchange before each summary of one session, as the table and `rule` have them; summaries with none are
    left out."""
    rows = db.execute(f"{_PLACED} WHERE session = ?", (session,))
    return _befores(
        (p, s, a, int(m), int(z), rule.kept(ExchangeShapes(u, r, "")).replace("b", "")) for p, s, a, m, z, u, r in rows
    )


def _befores(rows: Iterable[tuple[str, str, str, int, int, str]]) -> dict[str, Before]:
    """From (path, session, moment, mtime, size, sides kept) of placed summaries."""
    out: dict[str, Before] = {}
    last: dict[str, Before] = {}
    for path, session, _, mtime, size, sides in sorted(rows, key=lambda r: (r[1], r[2], r[0])):
        before = last.get(session)
        if before is not None:
            out[path] = before
        if sides:
            last[session] = Before(path, f"{path}|{mtime}|{size}|{sides}", sides)
    return out


def moved(db: sqlite3.Connection, rule: Boilerplate, contexts: bool) -> set[str]:
    """The recorded summaries whose kept parts are no longer what `rule` makes them, and (with `contexts`) those
    embedded after another exchange than the one now before them; one reading of the table, one judgement a row."""
    rows = db.execute(
        "SELECT path, session, at, mtime_ns, size, user, reply, body, kept, context FROM session_shapes"
    ).fetchall()
    now = {str(r[0]): rule.kept(ExchangeShapes(r[5], r[6], r[7])) for r in rows}
    out = {path for path, *_, kept, _ in rows if now[path] != kept}
    if not contexts:
        return out
    placed = _befores((p, s, a, int(m), int(z), now[p].replace("b", "")) for p, s, a, m, z, *_ in rows if s)
    for path, *_, kept, context in rows:
        if kept and path not in out:  # a summary that is no candidate is embedded with nothing
            before = placed.get(path)
            if context != (before.stamp if before is not None else ""):
                out.add(path)
    return out


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
