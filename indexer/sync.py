"""Bring the index in line with the vault: incremental, rename-aware and safe to kill at any moment.

A restart with nothing changed reads no note: it compares `stat` results with the manifest. A changed note is
read and hashed; if its bytes are the same, only the stat is recorded. Otherwise it is chunked, and only chunks
whose text is new are embedded: unchanged chunks keep their vectors, and a note that moved (same bytes under a new
path) takes its vectors along under the new ids. Every write to the vector store is journalled first, so a crash
between the store and the manifest is undone on the next start instead of leaving orphans or stale vectors.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.embedding.providers import Embedder
from companion.errors import NoteError
from companion.vault.dates import note_day
from companion.vault.notes import FileStat, Note
from companion.vault.reader import ObsidianVault, valid_name
from indexer.chunking import Chunk, Chunker, redact_note
from indexer.manifest import ChunkRecord, Manifest, NoteRecord
from indexer.owner import SharedStore
from indexer.store import VectorStore

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called with (chunks done, chunks to write) while notes are indexed."""
Reading = Callable[[int, int], None]
"""Called with (notes read, notes to read) while changed notes are read and chunked, before any is embedded."""

_EMBED_SLICE = 64


@dataclass
class IndexReport:
    """What one sync or update did; the CLI prints it and `--json` dumps it."""

    notes_seen: int = 0
    """Indexable notes found in the vault (or touched by the events) in this run."""
    notes_indexed: int = 0
    """New or changed notes written to the index."""
    notes_unchanged: int = 0
    """Notes whose stat changed but whose bytes did not."""
    notes_renamed: int = 0
    """Notes recognised as moved or renamed (vectors carried over)."""
    notes_deleted: int = 0
    """Notes removed from the index."""
    notes_skipped: int = 0
    """Notes that could not be read; listed in `skipped`."""
    chunks_embedded: int = 0
    """Chunks sent to the embedding model."""
    chunks_reused: int = 0
    """Chunks whose vectors were carried over from an earlier text (renames, moved paragraphs)."""
    chunks_deleted: int = 0
    """Chunk vectors removed."""
    recovered: int = 0
    """Chunk ids undone after an interrupted run."""
    elapsed_s: float = 0.0
    """Wall time of the run."""
    embed_s: float = 0.0
    """Time spent inside the embedding model."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) of every note skipped in this run."""

    def merge(self, other: IndexReport) -> None:
        """Add another report's counts to this one (batches of a watch session)."""
        # Every field is a count or a duration except the list of skipped notes: derive, don't list them.
        for f in fields(self):
            if f.name != "skipped":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.skipped.extend(other.skipped)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data = dict(self.__dict__)
        data["elapsed_s"] = round(self.elapsed_s, 4)
        data["embed_s"] = round(self.embed_s, 4)
        data["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        return data


def note_metadata(note: Note) -> dict[str, str | int]:
    """The per-note fields stored with each chunk vector, for filtering in the store."""
    fm = note.frontmatter
    date = fm.get("date")
    day = note_day(date)
    date_s = day.isoformat() if day else (str(date)[:10] if date else "")
    digits = date_s.replace("-", "")
    return {
        "path": note.path,
        "kind": note.kind,
        "type": note.note_type or "",
        "date": date_s,
        "day": int(digits) if len(digits) == 8 and digits.isdigit() else 0,
        "user_id": str(fm.get("user_id") or ""),
        "chat_id": str(fm.get("chat_id") or ""),
    }


def _meta_hash(meta: dict[str, str | int]) -> str:
    return hashlib.sha1(json.dumps(meta, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass
class _Plan:
    note: Note
    stat: FileStat
    chunks: list[Chunk]
    meta: dict[str, str | int]
    write: list[Chunk] = field(default_factory=list)
    reuse: dict[str, str] = field(default_factory=dict)  # new chunk id -> donor chunk id
    stale: list[str] = field(default_factory=list)
    moved_from: str | None = None


class Indexer:
    """Keeps one vault's manifest and vector store in step with its files.

    The embedding model and the vector store are opened only when there is something to embed or delete, so a
    restart with nothing changed costs a directory walk and one SQLite read.
    """

    def __init__(
        self,
        vault: ObsidianVault,
        manifest: Manifest,
        chunker_factory: Callable[[], Chunker],
        embedder_factory: Callable[[], Embedder],
        store_factory: Callable[[], VectorStore | SharedStore],
        *,
        batch_chunks: int = 1024,
        on_moved: Callable[[str, str], None] | None = None,
    ) -> None:
        self.vault = vault
        self.on_moved = on_moved
        """Called with (old path, new path) after a moved note is recorded, so access statistics follow it."""
        self.manifest = manifest
        self._chunker_factory = chunker_factory
        self._embedder_factory = embedder_factory
        self._store_factory = store_factory
        self._chunker: Chunker | None = None
        self._embedder: Embedder | None = None
        self._store: VectorStore | SharedStore | None = None
        self.batch_chunks = batch_chunks

    @property
    def store(self) -> VectorStore | SharedStore:
        """The vector store, opened on first use."""
        if self._store is None:
            self._store = self._store_factory()
        return self._store

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    @property
    def chunker(self) -> Chunker:
        """The chunker, built on first use (it needs the model's tokenizer)."""
        if self._chunker is None:
            self._chunker = self._chunker_factory()
        return self._chunker

    # -- entry points --------------------------------------------------------------------------

    def sync(self, progress: Progress | None = None, reading: Reading | None = None) -> IndexReport:
        """Compare the whole vault with the manifest and apply every difference (`reading` sees the notes read,
        `progress` the chunks written)."""
        started = time.perf_counter()
        report = IndexReport(recovered=self.recover())
        current = self.vault.scan()
        known = self.manifest.stats()
        changed = {p: st for p, st in current.items() if known.get(p) != (st.mtime_ns, st.size)}
        deleted = set(known) - set(current)
        report.notes_seen = len(current)
        self._apply(changed, deleted, report, progress, reading)
        report.elapsed_s = time.perf_counter() - started
        return report

    def update(self, paths: Iterable[str], progress: Progress | None = None) -> IndexReport:
        """Apply what happened to some vault-relative paths (files or folders), as the watcher reports them.

        A folder that appeared is scanned; a folder that vanished removes every note under it, so a folder
        rename (reported as one delete and one add of the folder) becomes per-note renames.
        """
        started = time.perf_counter()
        report = IndexReport(recovered=self.recover())
        known = self.manifest.stats()
        changed: dict[str, FileStat] = {}
        deleted: set[str] = set()
        scan: dict[str, FileStat] | None = None
        for rel in set(paths):
            if not valid_name(rel):
                continue  # an undecodable file name: the scan reports it, nothing can index it
            full = self.vault.root / rel
            try:
                is_dir = full.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                prefix = rel.rstrip("/") + "/"
                # Folder events are rare (a rename, a paste); one full walk per batch is cheap next to embedding.
                if scan is None:
                    scan = self.vault.scan()
                under = {p: st for p, st in scan.items() if p.startswith(prefix)}
                for path, st in under.items():
                    if known.get(path) != (st.mtime_ns, st.size):
                        changed[path] = st
                deleted.update(p for p in known if p.startswith(prefix) and p not in under)
                continue
            try:
                st_raw = os.stat(full)
            except OSError:
                st_raw = None
            if st_raw is not None and self.vault.is_indexable(rel):
                stat = FileStat(st_raw.st_mtime_ns, st_raw.st_size)
                if known.get(rel) != (stat.mtime_ns, stat.size):
                    changed[rel] = stat
                continue
            if rel in known:
                deleted.add(rel)
            prefix = rel.rstrip("/") + "/"
            deleted.update(p for p in known if p.startswith(prefix))
        report.notes_seen = len(changed)
        self._apply(changed, deleted, report, progress)
        report.elapsed_s = time.perf_counter() - started
        return report

    def recover(self) -> int:
        """Undo the vector writes of an interrupted run: drop the journalled ids from the store and the
        manifest and mark their notes for re-indexing. Returns how many ids were undone."""
        pending = self.manifest.pending()
        if not pending:
            return 0
        log.warning(
            "dropping %d journalled chunk ids (left by an interrupted run, or queued by a repair)", len(pending)
        )
        self.store.delete(pending)
        with self.manifest.transaction() as db:
            self.manifest.forget_chunks(db, pending)
            self.manifest.clear_journal(db, pending)
        return len(pending)

    # -- the work ------------------------------------------------------------------------------

    def _apply(
        self,
        changed: dict[str, FileStat],
        deleted: set[str],
        report: IndexReport,
        progress: Progress | None,
        reading: Reading | None = None,
    ) -> None:
        donors: dict[str, list[str]] = {}
        for path in sorted(deleted):
            record = self.manifest.note(path)
            if record is not None and record.content_hash:
                donors.setdefault(record.content_hash, []).append(path)

        plans: list[_Plan] = []
        for number, path in enumerate(sorted(changed), 1):
            if reading:
                reading(number, len(changed))
            stat = changed[path]
            try:
                note = redact_note(self.vault.read_note(path))
            except NoteError as exc:
                self._skip(path, stat, exc.reason, report)
                continue
            plan = self._plan(note, stat, donors, report)
            if plan is not None:
                plans.append(plan)
        moved = {p.moved_from for p in plans if p.moved_from}

        total = sum(len(p.write) for p in plans)
        done = 0

        def tick(chunks: int) -> None:
            nonlocal done
            done += chunks
            if progress:
                progress(done, total)

        batch: list[_Plan] = []
        size = 0
        for plan in plans:
            batch.append(plan)
            size += len(plan.write)
            if size >= self.batch_chunks:
                self._commit(batch, report, tick)
                batch, size = [], 0
        if batch:
            self._commit(batch, report, tick)

        gone = sorted(deleted - moved)
        if gone:
            self._delete(gone, report)

    def _plan(
        self,
        note: Note,
        stat: FileStat,
        donors: dict[str, list[str]],
        report: IndexReport,
    ) -> _Plan | None:
        meta = note_metadata(note)
        record = self.manifest.note(note.path)
        if record is not None and record.content_hash == note.content_hash and record.meta_hash == _meta_hash(meta):
            with self.manifest.transaction() as db:
                self.manifest.touch_note(db, note.path, stat.mtime_ns, stat.size)
            report.notes_unchanged += 1
            return None
        plan = _Plan(note, stat, self.chunker.chunk(note), meta)
        old: list[ChunkRecord] = []
        if record is not None:
            old = self.manifest.chunks(note.path)
        elif donors.get(note.content_hash):
            plan.moved_from = donors[note.content_hash].pop(0)
            old = self.manifest.chunks(plan.moved_from)
            report.notes_renamed += 1
        same_meta = record is not None and record.meta_hash == _meta_hash(meta)
        by_id = {c.id: c for c in old}
        by_text = {c.text_hash: c.id for c in old}
        for chunk in plan.chunks:
            prior = by_id.get(chunk.id)
            if prior is not None and prior.text_hash == chunk.text_hash and same_meta:
                continue  # the vector and its metadata are already right
            plan.write.append(chunk)
            donor = by_text.get(chunk.text_hash)
            if donor is not None:
                plan.reuse[chunk.id] = donor
        new_ids = {c.id for c in plan.chunks}
        plan.stale = [c.id for c in old if c.id not in new_ids]
        return plan

    def _commit(self, plans: Sequence[_Plan], report: IndexReport, tick: Callable[[int], None]) -> None:
        writes = [c for p in plans for c in p.write]
        stale = [i for p in plans for i in p.stale]
        self.manifest.journal([c.id for c in writes] + stale)
        donor_ids = sorted({d for p in plans for d in p.reuse.values()})
        kept = self.store.embeddings(donor_ids) if donor_ids else {}
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        to_embed: list[Chunk] = []
        for plan in plans:
            for chunk in plan.write:
                donor = plan.reuse.get(chunk.id)
                if donor is not None and donor in kept:
                    vectors[chunk.id] = kept[donor]
                else:
                    to_embed.append(chunk)
        tick(len(writes) - len(to_embed))
        # Sorted by length so each slice pads little; sliced so progress moves while the model works.
        to_embed.sort(key=lambda c: len(c.text))
        for start in range(0, len(to_embed), _EMBED_SLICE):
            part = to_embed[start : start + _EMBED_SLICE]
            started = time.perf_counter()
            embedded = self.embedder.embed([c.text for c in part])
            report.embed_s += time.perf_counter() - started
            for chunk, vector in zip(part, embedded, strict=True):
                vectors[chunk.id] = vector
            tick(len(part))
        report.chunks_embedded += len(to_embed)
        report.chunks_reused += len(writes) - len(to_embed)
        if writes:
            self.store.upsert(
                [c.id for c in writes],
                np.stack([vectors[c.id] for c in writes]).astype(np.float32),
                # Line numbers stay in the manifest only: an edit above a chunk moves them without a re-upsert.
                [{**p.meta, "anchor": c.anchor} for p in plans for c in p.write],
            )
        if stale:
            self.store.delete(stale)
        report.chunks_deleted += len(stale)
        with self.manifest.transaction() as db:
            for plan in plans:
                if plan.moved_from:
                    self.manifest.delete_note(db, plan.moved_from)
                self.manifest.put_note(db, self._record(plan), self._chunk_records(plan), self._lexical(plan.note))
            self.manifest.clear_journal(db, [c.id for c in writes] + stale)
        report.notes_indexed += len(plans)
        if self.on_moved is not None:
            for plan in plans:
                if plan.moved_from:
                    self.on_moved(plan.moved_from, plan.note.path)

    def _delete(self, paths: Sequence[str], report: IndexReport) -> None:
        ids = [c.id for p in paths for c in self.manifest.chunks(p)]
        if ids:
            self.manifest.journal(ids)
            self.store.delete(ids)
        with self.manifest.transaction() as db:
            for path in paths:
                self.manifest.delete_note(db, path)
            self.manifest.clear_journal(db, ids)
        report.chunks_deleted += len(ids)
        report.notes_deleted += len(paths)

    def _skip(self, path: str, stat: FileStat, reason: str, report: IndexReport) -> None:
        log.warning("skipped %s: %s", path, reason)
        report.notes_skipped += 1
        report.skipped.append((path, reason))
        # A note that was fine and is now broken leaves the index: its old vectors describe other text.
        if self.manifest.note(path) is not None:
            self._delete([path], IndexReport())
        with self.manifest.transaction() as db:
            self.manifest.mark_skipped(db, path, stat.mtime_ns, stat.size, reason)

    @staticmethod
    def _record(plan: _Plan) -> NoteRecord:
        note = plan.note
        return NoteRecord(
            path=note.path,
            mtime_ns=plan.stat.mtime_ns,
            size=plan.stat.size,
            content_hash=note.content_hash,
            meta_hash=_meta_hash(plan.meta),
            kind=note.kind,
            note_type=note.note_type,
            title=note.title,
            date=str(plan.meta["date"]) or None,
            fields_json=json.dumps(note.frontmatter, ensure_ascii=False, default=str),
            links_json=json.dumps(list(dict.fromkeys(link.target for link in note.links if link.target))),
        )

    @staticmethod
    def _chunk_records(plan: _Plan) -> list[ChunkRecord]:
        return [
            ChunkRecord(c.id, plan.note.path, c.anchor, c.text_hash, c.start_line, c.end_line, i)
            for i, c in enumerate(plan.chunks)
        ]

    @staticmethod
    def _lexical(note: Note) -> str:
        # Frontmatter values are searchable too (people, tags, topics), after the body.
        extras = " ".join(str(v) for k, v in note.frontmatter.items() if k not in {"date", "time"} and v)
        return f"{note.body}\n{extras}" if extras else note.body
