"""Bring the index in line with the vault: incremental, rename-aware and safe to kill at any moment.

A restart with nothing changed reads no note: it compares `stat` results with the manifest. A changed note is
read and hashed; if its bytes are the same, only the stat is recorded. Otherwise it is chunked, and only chunks
whose text is new are embedded: unchanged chunks keep their vectors, and a note that moved (same bytes under a new
path) takes its vectors along under the new ids. Every write to the vector store is journalled first, so a crash
between the store and the manifest is undone on the next start instead of leaving orphans or stale vectors.

Words come first, meaning after: notes are read and committed in batches (their manifest entry, their lexical text
and their chunks queued with their text), so a vault of thousands of notes answers by its words within a minute and
memory stays bounded whatever its size; the queued chunks are then embedded, the newest notes first, each batch
committed on its own. Recall meanwhile answers from what is there and says how much of the meaning side is built.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from companion.embedding.providers import Embedder
from companion.errors import NoteError, VaultError
from companion.vault.notes import FileStat, Note
from companion.vault.reader import ObsidianVault, valid_name
from indexer.chunking import Chunk, Chunker, redact_note
from indexer.embedphase import EMBED_BATCH, EmbeddingPhase, Progress
from indexer.manifest import Manifest
from indexer.owner import SharedStore
from indexer.plans import Plan, chunk_records, guess_tokens, meta_hash, note_metadata, note_record, queue_day, words_of
from indexer.records import ChunkRecord, Unembedded
from indexer.report import IndexReport
from indexer.store import VectorStore
from indexer.summaries import Summaries

log = logging.getLogger(__name__)

Reading = Callable[[int, int], None]
"""Called with (notes read, notes to read) while changed notes are read and chunked, before any is embedded."""

_WORDS_BATCH_NOTES = 200  # notes read and committed together in the words phase
_URGENT_NOTES = 64  # up to this many changed notes are an edit, embedded before any backlog
_URGENT_DAY = 99_991_231  # the queue's order key of an edit's chunks: after every real date


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
        self.logs_skips = True
        """Whether a skipped note or a note with a problem is logged as a warning; False when the caller reports the
        report's `skipped` and `problems` itself (the command line's summary), so they are not said twice."""
        self.manifest = manifest
        self._chunker_factory = chunker_factory
        self._embedder_factory = embedder_factory
        self._store_factory = store_factory
        self._chunker: Chunker | None = None
        self._embedder: Embedder | None = None
        self._store: VectorStore | SharedStore | None = None
        self.batch_chunks = batch_chunks
        self.summaries = Summaries(manifest, vault.config.sessions.boilerplate_sessions, self._read_redacted)
        """What of each session summary is indexed (its boilerplate left out)."""
        self.embedding = EmbeddingPhase(manifest, lambda: self.embedder, lambda: self.store)
        """The meaning phase: embeds what the words phase queued, and measures its own rate."""

    def time_left(self, tokens: int) -> float | None:
        """Seconds to embed `tokens` model tokens at the rate measured so far (see `EmbeddingPhase.time_left`)."""
        return self.embedding.time_left(tokens)

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

    def sync(
        self, progress: Progress | None = None, reading: Reading | None = None, *, embed_for_s: float | None = None
    ) -> IndexReport:
        """Compare the whole vault with the manifest and apply every difference (`reading` sees the notes read,
        `progress` the chunks embedded); with `embed_for_s`, embed for at most that long (0: words only)."""
        started = time.perf_counter()
        report = IndexReport(recovered=self.recover())
        self.manifest.read_skipped_again()  # once, after the way notes are read changed
        self.manifest.derived.guess_languages_again()  # once, after the way languages are guessed changed
        current = self.vault.scan()
        known = self.manifest.stats()
        changed = {p: st for p, st in current.items() if known.get(p) != (st.mtime_ns, st.size)}
        deleted = set(known) - set(current)
        report.notes_seen = len(current)
        self._apply(changed, deleted, report, progress, reading, embed_for_s, settle=True)
        report.elapsed_s = time.perf_counter() - started
        return report

    def update(
        self, paths: Iterable[str], progress: Progress | None = None, *, embed_for_s: float | None = None
    ) -> IndexReport:
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
        self._apply(changed, deleted, report, progress, embed_for_s=embed_for_s)
        report.elapsed_s = time.perf_counter() - started
        return report

    def recover(self) -> int:
        """Undo the vector writes of an interrupted run: drop the journalled ids from the store and the
        manifest and mark their notes for re-indexing. Returns how many ids were undone.

        An id still queued for embedding only loses what may have reached the store: its text is in the queue, so
        it is embedded again without its note being read again (a build killed while embedding goes on from there).
        """
        pending = self.manifest.queue.pending()
        if not pending:
            return 0
        log.warning(
            "dropping %d journalled chunk ids (left by an interrupted run, or queued by a repair)", len(pending)
        )
        self.store.delete(pending)
        queued = self.manifest.queue.unembedded_among(pending)
        with self.manifest.transaction() as db:
            self.manifest.forget_chunks(db, [i for i in pending if i not in queued])
            self.manifest.queue.clear_journal(db, pending)
        return len(pending)

    # -- the work ------------------------------------------------------------------------------

    def _apply(
        self,
        changed: dict[str, FileStat],
        deleted: set[str],
        report: IndexReport,
        progress: Progress | None,
        reading: Reading | None = None,
        embed_for_s: float | None = None,
        *,
        settle: bool = False,
    ) -> None:
        """Words first, meaning after: every changed note's manifest entry and lexical text are written in batches
        as it is read (bounded memory, and searchable by its words within seconds), then the chunks still without a
        vector are embedded, newest notes first (for at most `embed_for_s` seconds when given).

        With `settle`, or when a session summary changed, the summaries whose boilerplate verdict moved are indexed
        again before anything is embedded, so a reply that just became boilerplate is never embedded."""
        donors: dict[str, list[str]] = {}
        for path in sorted(deleted):
            record = self.manifest.note(path)
            if record is not None and record.content_hash:
                donors.setdefault(record.content_hash, []).append(path)

        # A handful of changed notes is an edit a person or an agent just made: embedded before any backlog.
        urgent = 0 < len(changed) <= _URGENT_NOTES
        arriving = {p: st for p, st in changed.items() if self.vault.is_summary(p)}
        try:
            if arriving:
                self.summaries.foresee(arriving, self._read_redacted)
            moved = self._read_all(changed, donors, report, reading, urgent)
            gone = sorted(deleted - moved)
            if gone:
                self._delete(gone, report)
            if settle or arriving or any(self.vault.is_summary(p) for p in gone):
                self._settle(report, urgent)
        finally:
            # A watcher keeps this indexer after a failed run: nothing it read ahead may stand for a later file.
            self.summaries.discard()
        self.manifest.reread_done()
        self.embed(progress, report, for_s=embed_for_s)

    def _read_redacted(self, path: str) -> Note:
        return redact_note(self.vault.read_note(path))

    def _settle(self, report: IndexReport, urgent: bool) -> None:
        """Index again the summaries whose boilerplate verdict moved (their shapes recorded first, so the counts
        they are judged by hold them all); a second look finds none left but after a summary changed meanwhile."""
        for _ in range(2):
            again: dict[str, FileStat] = {}
            for path in self.summaries.changed():
                try:
                    info = self.vault.resolve_path(path).stat()
                except (OSError, VaultError):
                    self.summaries.forget(path)  # gone since: it counts toward no boilerplate
                    continue
                again[path] = FileStat(info.st_mtime_ns, info.st_size)
            if not again:
                return
            self.summaries.foresee(again, self._read_redacted)
            self._read_all(again, {}, report, None, urgent)

    def _read_all(
        self,
        changed: dict[str, FileStat],
        donors: dict[str, list[str]],
        report: IndexReport,
        reading: Reading | None,
        urgent: bool,
    ) -> set[str]:
        """Read, plan and commit the words of these notes in batches; returns the paths their notes moved from."""
        moved: set[str] = set()
        batch: list[Plan] = []
        size = 0
        for number, path in enumerate(sorted(changed), 1):
            if reading:
                reading(number, len(changed))
            plan = self._read(path, changed[path], donors, report)
            if plan is None:
                continue
            batch.append(plan)
            size += len(plan.chunks)
            if size >= self.batch_chunks or len(batch) >= _WORDS_BATCH_NOTES:
                moved.update(self._commit_words(batch, report, urgent))
                self.summaries.flush()
                batch, size = [], 0
        if batch:
            moved.update(self._commit_words(batch, report, urgent))
        self.summaries.flush()
        return moved

    def _read(self, path: str, stat: FileStat, donors: dict[str, list[str]], report: IndexReport) -> Plan | None:
        """One changed note read and planned; a session summary is read as its exchange, or left out whole."""
        note = self.summaries.take(path)
        if note is None:
            try:
                note = redact_note(self.vault.read_note(path))
            except NoteError as exc:
                self._skip(path, stat, exc.reason, report)
                return None
        if note.kind != "session":
            return self._plan(note, stat, donors, report)
        view = self.summaries.judge(note)
        if view.note is None:
            if self.manifest.note(path) is not None:
                self._delete([path], IndexReport())
            report.sessions_left_out += 1
            plan = None
        else:
            plan = self._plan(view.note, stat, donors, report, view.verdict)
            if plan is not None:
                plan.words = view.words
        self.summaries.remember(path, stat, view)
        return plan

    def _plan(
        self,
        note: Note,
        stat: FileStat,
        donors: dict[str, list[str]],
        report: IndexReport,
        kept: str | None = None,
    ) -> Plan | None:
        meta = note_metadata(note)
        if kept is not None:
            meta["kept"] = kept  # a summary's verdict and context change its text, though not its file
        record = self.manifest.note(note.path)
        if record is not None and record.content_hash == note.content_hash and record.meta_hash == meta_hash(meta):
            with self.manifest.transaction() as db:
                self.manifest.touch_note(db, note.path, stat.mtime_ns, stat.size)
            report.notes_unchanged += 1
            return None
        plan = Plan(note, stat, self.chunker.chunk(note), meta)
        old: list[ChunkRecord] = []
        waiting: set[str] = set()  # old chunks whose vectors were never made
        if record is not None:
            old = self.manifest.chunks(note.path)
            waiting = self.manifest.queue.unembedded_ids(note.path)
        elif donors.get(note.content_hash):
            plan.moved_from = donors[note.content_hash].pop(0)
            old = self.manifest.chunks(plan.moved_from)
            waiting = self.manifest.queue.unembedded_ids(plan.moved_from)
            report.notes_renamed += 1
        same_meta = record is not None and record.meta_hash == meta_hash(meta)
        by_id = {c.id: c for c in old}
        by_text = {c.text_hash: c.id for c in old if c.id not in waiting}
        for chunk in plan.chunks:
            prior = by_id.get(chunk.id)
            if prior is not None and prior.text_hash == chunk.text_hash and same_meta and chunk.id not in waiting:
                continue  # the vector and its metadata are already right
            plan.write.append(chunk)
            donor = by_text.get(chunk.text_hash)
            if donor is not None:
                plan.reuse[chunk.id] = donor
            if prior is not None and chunk.id not in waiting:
                plan.replaced.append(chunk.id)
        new_ids = {c.id for c in plan.chunks}
        plan.stale = [c.id for c in old if c.id not in new_ids]
        return plan

    def _commit_words(self, plans: Sequence[Plan], report: IndexReport, urgent: bool = False) -> set[str]:
        """Write a batch of read notes: their manifest entries and lexical text, the vectors that can be carried
        over (renames, moved paragraphs), and their other chunks queued for embedding (`urgent`: before everything
        queued so far). Returns the paths the batch's notes moved from."""
        writes = [c for p in plans for c in p.write]
        stale = [i for p in plans for i in p.stale]
        replaced = [i for p in plans for i in p.replaced]
        donor_ids = sorted({d for p in plans for d in p.reuse.values()})
        touched = [c.id for c in writes] + stale
        if touched:
            self.manifest.queue.journal(touched)
        kept = self.store.embeddings(donor_ids) if donor_ids else {}
        carried: list[tuple[Chunk, Plan]] = []
        queued: list[tuple[Chunk, Plan]] = []
        for plan in plans:
            for chunk in plan.write:
                donor = plan.reuse.get(chunk.id)
                (carried if donor is not None and donor in kept else queued).append((chunk, plan))
        if carried:
            self.store.upsert(
                [c.id for c, _ in carried],
                np.stack([kept[p.reuse[c.id]] for c, p in carried]).astype(np.float32),
                # Line numbers stay in the manifest only: an edit above a chunk moves them without a re-upsert.
                [{**p.meta, "anchor": c.anchor} for c, p in carried],
            )
        carried_ids = {c.id for c, _ in carried}
        # A chunk whose text changed must not answer with its old vector until the new one is made.
        drop = stale + [i for i in replaced if i not in carried_ids]
        if drop:
            self.store.delete(drop)
        report.chunks_reused += len(carried)
        report.chunks_deleted += len(stale)
        with self.manifest.transaction() as db:
            for plan in plans:
                if plan.moved_from:
                    self.manifest.delete_note(db, plan.moved_from)
                self.manifest.put_note(
                    db, note_record(plan), chunk_records(plan), words_of(plan), plan.note.frontmatter_problem
                )
            order = {c.id: i for p in plans for i, c in enumerate(p.chunks)}
            self.manifest.queue.queue_chunks(
                db,
                [
                    (
                        Unembedded(
                            c.id,
                            p.note.path,
                            c.text,
                            json.dumps({**p.meta, "anchor": c.anchor}, ensure_ascii=False),
                            c.tokens or guess_tokens(c.text),
                        ),
                        _URGENT_DAY if urgent else queue_day(p),
                        p.stat.mtime_ns,
                        order[c.id],
                    )
                    for c, p in queued
                ],
            )
            self.manifest.queue.clear_journal(db, touched)
        report.notes_indexed += len(plans)
        for plan in plans:
            if plan.note.frontmatter_problem:
                if self.logs_skips:
                    log.warning("problem %s: %s", plan.note.path, plan.note.frontmatter_problem)
                report.problems.append((plan.note.path, plan.note.frontmatter_problem))
        report.chunks_queued += len(queued)
        moved = {p.moved_from for p in plans if p.moved_from}
        if self.on_moved is not None:
            for plan in plans:
                if plan.moved_from:
                    self.on_moved(plan.moved_from, plan.note.path)
        return moved

    def embed(
        self,
        progress: Progress | None = None,
        report: IndexReport | None = None,
        *,
        for_s: float | None = None,
        batch: int = EMBED_BATCH,
    ) -> IndexReport:
        """Embed what the words phase left without a vector, newest notes first, for at most `for_s` seconds when
        given (see `EmbeddingPhase.run`)."""
        return self.embedding.run(progress, report, for_s=for_s, batch=batch)

    def _delete(self, paths: Sequence[str], report: IndexReport) -> None:
        ids = [c.id for p in paths for c in self.manifest.chunks(p)]
        if ids:
            self.manifest.queue.journal(ids)
            self.store.delete(ids)
        with self.manifest.transaction() as db:
            for path in paths:
                self.manifest.delete_note(db, path)
            self.manifest.queue.clear_journal(db, ids)
        report.chunks_deleted += len(ids)
        report.notes_deleted += len(paths)

    def _skip(self, path: str, stat: FileStat, reason: str, report: IndexReport) -> None:
        if self.logs_skips:
            log.warning("skipped %s: %s", path, reason)
        report.notes_skipped += 1
        report.skipped.append((path, reason))
        # A note that was fine and is now broken leaves the index: its old vectors describe other text.
        if self.manifest.note(path) is not None:
            self._delete([path], IndexReport())
        with self.manifest.transaction() as db:
            self.manifest.mark_skipped(db, path, stat.mtime_ns, stat.size, reason)
