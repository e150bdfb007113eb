"""The full-text index checked against the manifest's notes, and mended.

Every indexed note has one row in the FTS5 table `fts`, under the note's own id, holding its title and text as the
words phase wrote them. Rows deleted (the table emptied, or some notes' rows gone), rows of no note, a row under
another note's title, a dropped table or an index damaged under its rows make lexical search find less or nothing
without any error, and no check of the vectors notices: `doctor` compares the rows with the notes, and `companion
index` mends what it finds by reading the affected notes again (their chunks come out the same, so no vector is made
again).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.words import counted, segment
from indexer.schema import FULLTEXT_SCHEMA

_SHADOW_TABLES = {
    "data": "CREATE TABLE IF NOT EXISTS main.fts_data(id INTEGER PRIMARY KEY, block BLOB)",
    "idx": "CREATE TABLE IF NOT EXISTS main.fts_idx(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
    "content": "CREATE TABLE IF NOT EXISTS main.fts_content(id INTEGER PRIMARY KEY, c0, c1)",
    "docsize": "CREATE TABLE IF NOT EXISTS main.fts_docsize(id INTEGER PRIMARY KEY, sz BLOB)",
    "config": "CREATE TABLE IF NOT EXISTS main.fts_config(k PRIMARY KEY, v) WITHOUT ROWID",
}
"""FTS5's own tables behind `fts`, as FTS5 creates them. SQLite cannot open (nor drop) a full-text table when one of
them is missing or damaged, so a repair first makes them those of an empty table."""

_EXAMPLES = 3
_PROBES = 16  # notes looked up by their titles: a few milliseconds
_REPAIR = "run `companion index` to"
_NOTHING_EMBEDDED = "no chunk is embedded again"


@dataclass(frozen=True)
class FulltextHealth:
    """What a check of the full-text index found, against the notes the manifest holds."""

    notes: int
    """Notes the manifest holds."""
    rows: int | None
    """Rows the full-text index holds; None when it cannot be read."""
    missing: tuple[int, ...] = ()
    """Ids of notes without a row."""
    extra: tuple[int, ...] = ()
    """Row ids of no note."""
    mismatched: tuple[int, ...] = ()
    """Ids of notes whose row holds another title than theirs."""
    examples: tuple[str, ...] = ()
    """A few paths of notes lexical search cannot find, to name in messages."""
    broken: str | None = None
    """Why the table as a whole cannot be trusted (missing, unreadable, its index unlike its rows)."""
    index_checked: bool = False
    """Whether the index under the rows was checked too (it needs a moment of write access)."""

    @property
    def healthy(self) -> bool:
        """Every note has its row, under its title, and nothing else is there."""
        return not (self.broken or self.missing or self.extra or self.mismatched or self.rows != self.notes)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (counts, not ids)."""
        return {
            "notes": self.notes,
            "rows": self.rows,
            "missing": len(self.missing),
            "extra": len(self.extra),
            "mismatched": len(self.mismatched),
            "broken": self.broken,
            "index_checked": self.index_checked,
            "problems": self.problems(),
        }

    def problems(self) -> list[str]:
        """What is wrong, one line each, with the repair named."""
        if self.broken:
            return [
                f"the full-text index {self.broken}: lexical search cannot be trusted; {_REPAIR} build it again "
                f"from the notes ({_NOTHING_EMBEDDED})"
            ]
        lines: list[str] = []
        named = f" (e.g. {', '.join(self.examples)})" if self.examples else ""
        if self.notes and self.rows == 0:
            lines.append(
                f"the full-text index is empty while the index holds {counted(self.notes, 'note')}: lexical search "
                f"finds nothing; {_REPAIR} fill it again from the notes ({_NOTHING_EMBEDDED})"
            )
        elif self.missing:
            lines.append(
                f"{counted(len(self.missing), 'note')} of {self.notes} have no row in the full-text index, so lexical "
                f"search cannot find them{named}: {_REPAIR} read them again ({_NOTHING_EMBEDDED})"
            )
        if self.mismatched:
            one = len(self.mismatched) == 1
            lines.append(
                f"{counted(len(self.mismatched), 'row')} of the full-text index {'holds' if one else 'hold'} another "
                f"title than {'its' if one else 'their'} note's{named}: {_REPAIR} read those notes again"
            )
        if self.extra:
            belong = "belongs" if len(self.extra) == 1 else "belong"
            lines.append(
                f"{counted(len(self.extra), 'row')} of the full-text index {belong} to no note: {_REPAIR} remove them"
            )
        if not lines and self.rows != self.notes:
            lines.append(
                f"the full-text index holds {self.rows} rows for {counted(self.notes, 'note')}: {_REPAIR} check "
                "it in full and mend it"
            )
        return lines


def quick_health(db: sqlite3.Connection) -> FulltextHealth:
    """Counts only (milliseconds at 50k notes, for every catch-up): the notes against the rows' sizes FTS5 keeps."""
    notes = int(db.execute("SELECT count(*) FROM notes").fetchone()[0])
    if not _exists(db):
        return FulltextHealth(notes, None, broken="is missing (its table was dropped)")
    try:
        db.execute("SELECT rowid FROM fts LIMIT 1").fetchall()  # FTS5 opens its own tables: a missing one fails
        rows = int(db.execute("SELECT count(*) FROM fts_docsize").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        return FulltextHealth(notes, None, broken=f"is unreadable ({exc})")
    return FulltextHealth(notes, rows)


def full_health(db: sqlite3.Connection, *, check_index: bool = False) -> FulltextHealth:
    """Every row's id and title against the notes' (0.4 s at 50k notes), and a few notes looked up by their titles,
    which finds an index emptied under its rows. With `check_index`, FTS5's own check that its whole index matches
    its rows too (`doctor`: 8 s at 50k notes of 350 words; skipped when the file cannot be written at the moment)."""
    own = not db.in_transaction
    if own:
        db.execute("BEGIN")  # one snapshot: a writer commits a note and its row together
    try:
        notes = {int(i): (str(p), str(t)) for i, p, t in db.execute("SELECT id, path, title FROM notes")}
        if not _exists(db):
            return FulltextHealth(len(notes), None, broken="is missing (its table was dropped)")
        try:
            rows = {int(i): str(t) for i, t in db.execute("SELECT rowid, title FROM fts")}
            broken = _lookup_damage(db, notes, rows)
        except sqlite3.DatabaseError as exc:
            return FulltextHealth(len(notes), None, broken=f"is unreadable ({exc})")
    finally:
        if own:
            db.execute("COMMIT")
    missing = tuple(sorted(i for i in notes if i not in rows))
    extra = tuple(sorted(i for i in rows if i not in notes))
    mismatched = tuple(sorted(i for i, (_, title) in notes.items() if i in rows and rows[i] != segment(title)))
    examples = tuple(sorted(notes[i][0] for i in (*missing, *mismatched))[:_EXAMPLES])
    checked = check_index and not rows  # nothing to check in an empty index
    if check_index and rows and broken is None:
        broken, checked = _index_damage(db)
    return FulltextHealth(len(notes), len(rows), missing, extra, mismatched, examples, broken, checked)


def _lookup_damage(db: sqlite3.Connection, notes: dict[int, tuple[str, str]], rows: dict[int, str]) -> str | None:
    """Why a few notes, spread over the index, cannot be found by their own titles (None when they all can)."""
    sound = sorted(i for i, (_, title) in notes.items() if rows.get(i) == segment(title) and _has_words(title))
    step = max(1, len(sound) // _PROBES)
    for rowid in sound[::step][:_PROBES]:
        phrase = '"' + rows[rowid].replace('"', '""') + '"'
        found = db.execute("SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid = ?", (f"title : {phrase}", rowid))
        if not found.fetchone()[0]:
            return f"does not find {notes[rowid][0]} by its title (its index is damaged under its rows)"
    return None


def _has_words(title: str) -> bool:
    return any(ch.isalnum() for ch in title)


def _exists(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'fts'").fetchone() is not None


def _index_damage(db: sqlite3.Connection) -> tuple[str | None, bool]:
    """Why FTS5's integrity check fails (None when it passes), and whether it could run at all: it is written as an
    insert, so a read-only file or another process writing the index leaves it unchecked."""
    try:
        db.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
    except sqlite3.OperationalError as exc:
        text = str(exc).lower()
        if "readonly" in text or "locked" in text or "busy" in text:
            return None, False
        return f"fails its own check ({exc})", True
    except sqlite3.DatabaseError as exc:
        return f"fails its own check ({exc})", True
    return None, True


def file_health(path: Path) -> FulltextHealth:
    """`full_health` of the manifest at `path`, with FTS5's own check, on a connection of its own (`doctor`); waits at
    most a second for a process writing the index, and leaves the index unchecked then."""
    db = sqlite3.connect(path, timeout=1.0, isolation_level=None)
    try:
        return full_health(db, check_index=True)
    finally:
        db.close()


def mend(db: sqlite3.Connection, health: FulltextHealth) -> list[str]:
    """Mend what `full_health` found, in the caller's transaction; the notes read again at the next sync fill their
    rows. Returns what was done, one line each."""
    if health.healthy:
        return []
    if health.broken:
        _create_again(db)
        reread = [int(r[0]) for r in db.execute("SELECT id FROM notes")]
        _read_again(db, reread)
        return [
            f"the full-text index {health.broken}: created again, and {counted(len(reread), 'note')} read again "
            f"to fill it ({_NOTHING_EMBEDDED})"
        ]
    actions: list[str] = []
    wrong = [*health.extra, *health.mismatched]
    db.executemany("DELETE FROM fts WHERE rowid = ?", [(i,) for i in wrong])
    if health.extra:
        actions.append(f"removed {counted(len(health.extra), 'row')} of the full-text index that belonged to no note")
    reread = [*health.missing, *health.mismatched]
    _read_again(db, reread)
    if reread:
        actions.append(
            f"{counted(len(reread), 'note')} had no row (or another note's) in the full-text index: read again "
            f"({_NOTHING_EMBEDDED})"
        )
    return actions


def _create_again(db: sqlite3.Connection) -> None:
    """Drop the full-text table whatever is left of it, and create it empty."""
    if _exists(db):
        try:
            db.execute("DROP TABLE fts")
        except sqlite3.DatabaseError:
            _blank_shadow_tables(db)
            db.execute("DROP TABLE fts")
    db.execute("DROP TABLE IF EXISTS fts_terms")
    for statement in FULLTEXT_SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def _blank_shadow_tables(db: sqlite3.Connection) -> None:
    """Give FTS5's own tables the rows of an empty full-text table (copied from a scratch one), creating any that
    is missing, so the table opens again and can be dropped."""
    db.execute("CREATE VIRTUAL TABLE temp.fts_blank USING fts5(title, body, tokenize = 'porter unicode61')")
    try:
        for part, sql in _SHADOW_TABLES.items():
            db.execute(sql)
            db.execute(f"DELETE FROM main.fts_{part}")
            db.execute(f"INSERT INTO main.fts_{part} SELECT * FROM temp.fts_blank_{part}")
    finally:
        db.execute("DROP TABLE temp.fts_blank")


def _read_again(db: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Have the next sync read these notes again (as if their files had changed) and rewrite their rows."""
    db.executemany("UPDATE notes SET content_hash = '', mtime_ns = -1 WHERE id = ?", [(i,) for i in ids])
