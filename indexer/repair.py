"""Finding and mending damage to a vault's index: missing, orphaned or unreadable vectors, damaged vector-index
files, a full-text index that does not match the notes, and an unreadable access-statistics store.

`companion doctor` checks for real (every vector read back); `companion index` mends before it syncs, re-embedding
only the chunks that were lost where it can: their ids go into the manifest's journal, so the sync that follows
drops them and embeds their notes' missing chunks again, as after an interrupted run.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from companion.atomic import write_atomic
from companion.errors import IndexLockedError, StoreError, says_disk_full
from companion.locations import DataPaths, private_folder
from indexer import fulltext
from indexer.manifest import Manifest
from indexer.remote import StoreUnavailable
from indexer.store import StoreHealth
from indexer.storefiles import damaged_files

log = logging.getLogger(__name__)

_SURROUNDINGS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENAMETOOLONG}


class CheckableStore(Protocol):
    """What mending needs of a vector store."""

    def count(self) -> int:
        """How many vectors it holds."""

    def ids(self) -> set[str]:
        """Every id it holds."""

    def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id."""


@dataclass(frozen=True)
class Mended:
    """What `mend` found and did, one line each, and how many chunks it queued for embedding again."""

    actions: list[str] = field(default_factory=list)
    """Human lines: what was damaged and what was done about it."""
    requeued: int = 0
    """Chunk ids queued to be embedded again."""


def sqlite_damage(path: Path) -> str | None:
    """Why an SQLite file is unreadable or damaged (`PRAGMA quick_check`), or None when it is sound or absent."""
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            rows = db.execute("PRAGMA quick_check").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    return "; ".join(problems[:3]) or None


def record_damage(
    paths: DataPaths, ids: Sequence[str], whole: str | None = None, *, fulltext: str | None = None
) -> None:
    """Remember chunk ids found unreadable (or, with `whole`, why the store as a whole failed its check), and with
    `fulltext` why the full-text index failed FTS5's own check (too slow for every `companion index` to make), for
    the next `companion index`; kept beside what an earlier check left; nothing is written when nothing was found."""
    if not (ids or whole or fulltext):
        return
    record = _record(paths)
    if ids or whole:
        record.update({"ids": sorted(ids), "whole": whole})
    if fulltext:
        record["fulltext"] = fulltext
    private_folder(paths.root)
    write_atomic(paths.damage, json.dumps(record).encode("utf-8"))


def _record(paths: DataPaths) -> dict[str, object]:
    """What `record_damage` left (an unreadable record counts as none)."""
    try:
        data = json.loads(paths.damage.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_damage(paths: DataPaths) -> tuple[list[str], str | None]:
    """The chunk ids and the reason `record_damage` left."""
    data = _record(paths)
    ids = data.get("ids")
    whole = data.get("whole")
    return ([str(i) for i in ids] if isinstance(ids, list) else []), (str(whole) if whole else None)


def recorded_fulltext_damage(paths: DataPaths) -> str | None:
    """Why `doctor` found the full-text index damaged, if it recorded that."""
    reason = _record(paths).get("fulltext")
    return str(reason) if reason else None


def set_aside(path: Path) -> Path:
    """Move a damaged file (and its SQLite side files) out of the way; returns where it went."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return aside


def mend(
    paths: DataPaths,
    manifest: Manifest,
    store: Callable[[], CheckableStore],
    reset_vectors: Callable[[], None],
    *,
    embedded: bool,
    full: bool = False,
    before_set_aside: Callable[[], None] = lambda: None,
) -> Mended:
    """Mend what is damaged before a sync (the caller holds the index for writing).

    Damaged vector-index files drop every vector (nothing in them can be trusted) and queue every chunk; a store
    holding other ids than the manifest loses its orphans and queues its missing chunks; chunks `doctor` found
    unreadable are queued; full-text rows missing or wrong are removed and their notes marked to be read again (a
    full-text table that is missing or damaged is created again, and every note read again); a damaged access store
    is set aside. The sync that follows embeds what was queued and reads what was marked.
    """
    actions: list[str] = []
    # Every id is read only when the counts disagree (a catch-up runs this often); chunks still queued for embedding
    # have no vector yet, and are not missing.
    chunks = manifest.queue.embedded_count()
    ids: set[str] = set()

    def expected() -> set[str]:
        if not ids:
            ids.update(manifest.queue.embedded_ids())
        return ids

    requeue: set[str] = set()
    problems = damaged_files(paths.chroma, deep=full) if embedded else []
    recorded, whole = recorded_damage(paths)
    if whole and embedded and not problems:
        problems = [f"doctor found: {whole}"]
    if problems:
        reset_vectors()
        requeue = set(expected())
        actions.append(f"the vector index files were damaged ({'; '.join(problems)}): every chunk is embedded again")
    elif embedded and chunks and not paths.chroma.exists():
        reset_vectors()
        requeue = set(expected())
        actions.append("the vector store folder was missing: every chunk is embedded again")
    elif chunks or paths.chroma.exists() or not embedded:
        try:
            opened = store()
            count = opened.count()
        except StoreError as exc:
            if not embedded or _not_damage(exc):
                raise  # a server away, a full disk, no permission: dropping the vectors would mend nothing
            reset_vectors()
            requeue = set(expected())
            actions.append(f"the vector store could not be opened ({exc}): every chunk is embedded again")
        else:
            if full or count != chunks:
                held = opened.ids()
                missing = expected() - held
                orphans = sorted(held - expected())
                if orphans:
                    opened.delete(orphans)
                    actions.append(f"removed {len(orphans)} vectors no note has")
                if missing:
                    requeue |= missing
                    actions.append(f"{len(missing)} chunks had no vector: they are embedded again")
    damaged = [i for i in recorded if i in expected() and i not in requeue] if recorded else []
    if damaged:
        try:
            store().delete(damaged)
        except StoreError as exc:
            if not embedded or _not_damage(exc):
                raise
            reset_vectors()
            requeue = set(expected())
            actions.append(f"damaged vectors could not be removed ({exc}): every chunk is embedded again")
        else:
            requeue |= set(damaged)
            actions.append(f"{len(damaged)} chunks doctor found unreadable are embedded again")
    if requeue:
        manifest.queue.journal(sorted(requeue))
    actions += _mend_fulltext(manifest, full=full, recorded=recorded_fulltext_damage(paths))
    paths.damage.unlink(missing_ok=True)
    reason = sqlite_damage(paths.access)
    if reason is not None:
        before_set_aside()
        aside = set_aside(paths.access)
        actions.append(
            f"the access statistics were damaged ({reason}): set aside as {aside.name}, and started afresh "
            "(decay scores start again from the notes' dates)"
        )
    for line in actions:
        log.warning("repair: %s", line)
    return Mended(actions, len(requeue))


def _mend_fulltext(manifest: Manifest, *, full: bool, recorded: str | None) -> list[str]:
    """Check the full-text index against the notes (counts only, unless `full` or something is found) and mend it:
    the notes whose rows are missing or wrong are read again by the sync that follows."""
    with manifest.transaction() as db:
        health = fulltext.quick_health(db)
        if full or recorded or not health.healthy:
            health = fulltext.full_health(db)
        if recorded and not health.broken:
            health = dataclasses.replace(health, broken=recorded)
        return fulltext.mend(db, health)


def _not_damage(exc: BaseException) -> bool:
    """Whether a store error comes from the surroundings (the disk, permissions, another process), not damage."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, StoreUnavailable | IndexLockedError) or says_disk_full(str(seen)):
            return True
        if isinstance(seen, OSError) and seen.errno in _SURROUNDINGS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def health_lines(health: StoreHealth) -> list[str]:
    """What a full check found, one line each, with the repair named."""
    lines: list[str] = []
    if health.unreadable:
        lines.append(
            f"{len(health.unreadable)} vectors are unreadable (damaged): run `companion index` to embed those "
            "chunks again"
        )
    if health.missing:
        lines.append(f"{len(health.missing)} chunks have no vector: run `companion index` to embed them")
    if health.orphans:
        lines.append(f"{len(health.orphans)} vectors belong to no note: run `companion index` to remove them")
    if health.search_error:
        lines.append(f"a search of the vector store fails ({health.search_error}): run `companion index --rebuild`")
    return lines
