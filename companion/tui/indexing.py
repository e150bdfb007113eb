"""The app's own indexer: catch up, then watch the vault; or follow another process that writes the index.

A base class of the app, so the indexing worker (its modes, its status line, its stop) reads on its own; the app
answers `_index_changed` by recalling again. The indexer thread writes through its own SQLite connection, so the
app's recalls never wait for a batch.
"""

from __future__ import annotations

import gc
import threading

from textual import work
from textual.app import App

from companion.errors import CompanionError, IndexLockedError
from companion.workspace import Workspace
from indexer.lock import WriterLock
from indexer.sync import Indexer, IndexReport
from widgets.status_line import StatusLine

RETRY_S = 5.0  # after a failed index write, before the next catch-up
FOLLOW_S = 1.0  # how often an attached app looks for another process's writes
APP_WRITE_BATCH = 128  # vectors per Chroma write: each holds the GIL, so the event loop waits ~40 ms at most
WATCH_DEBOUNCE_MS = 800  # quiet period that turns an editor's save (temp file, rename) into one batch


class _Stopped(Exception):
    """The app is closing: the indexer worker leaves its batch."""


class IndexingApp(App[int]):
    """An app that keeps a vault's index fresh in a worker, or attaches to the process that does."""

    def __init__(self, workspace: Workspace, *, read_only: bool = False) -> None:
        super().__init__()
        self.workspace = workspace
        """The vault, its config and its index."""
        workspace.store_write_batch = APP_WRITE_BATCH
        self.read_only = read_only
        """Refuse every write (the policy file included); the index is not written either."""
        self.index_idle = False
        """The in-app indexer has caught up and waits for file events (or the app only follows another writer)."""
        self.indexed_batches = 0
        """How many syncs and watch batches the in-app indexer has finished (for tests)."""
        self._index_lock = threading.Lock()  # the readers' shared manifest connection, one thread at a time
        self._first_shown = threading.Event()  # set by the app once its first screen is up
        self._stop = threading.Event()  # ends the indexer worker when the app closes
        self._frozen = False

    def _index_changed(self) -> None:
        """The index changed (called on the event loop); the app recalls again."""

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def run_indexer(self) -> None:
        """Keep the index fresh for as long as the app runs: catch up, then watch the vault.

        When another process (`companion index --watch`) holds the writer lock, the app attaches: it follows that
        process's writes and takes over once the lock is free. Read-only mode only follows.
        """
        while not (self._first_shown.wait(0.05) or self._stop.is_set()):
            pass  # the first screen comes first; a quit before it ends the worker at once
        while not self._stop.is_set():
            if self.read_only:
                self._status(mode="read-only: the index is not written")
                self._follow(until_lock_free=False)
                return
            try:
                with WriterLock(self.workspace.data_dir):
                    self._status(mode="indexer in the app")
                    self._index_and_watch()
                return
            except IndexLockedError:
                who = WriterLock(self.workspace.data_dir).holder_summary()
                self._status(mode=f"attached to {who}: it writes the index, the app follows")
                self._follow(until_lock_free=True)
            except _Stopped:
                return
            except Exception as exc:  # noqa: BLE001 - the worker must never die silently, whatever broke
                # The store, the model, the OS watch or the disk failed; the journal keeps the index consistent and
                # the next catch-up redoes what was lost.
                if self._stop.is_set():
                    return
                self._status(state=f"error: {exc} (retrying in {RETRY_S:.0f} s)")
                self.call_from_thread(self.notify, str(exc), title="indexing failed", severity="error")
                self.index_idle = True
                self._stop.wait(RETRY_S)

    def _index_and_watch(self) -> None:
        from indexer.watcher import watch  # deferred: watchfiles is needed only once the first screen is up

        def progress(done: int, total: int) -> None:
            if self._stop.is_set():
                raise _Stopped  # a quit mid-batch: the journal undoes the half-written batch on the next start
            self.index_idle = False
            self._status(state=f"indexing {done} of {total} chunks")

        with self._index_lock:  # the meta checks use the readers' connection
            indexer = self.workspace.indexer(own_connections=True)
        # The indexer writes through its own connection, so recalls (knob presses) never wait for a batch. The catch-up
        # is the watcher's own first sync, made once the OS watch is live: one walk of the vault, and no change
        # between the two is missed.
        try:

            def on_batch(report: IndexReport, events: int) -> None:
                self._after_batch(indexer, report)

            def on_ready() -> None:
                if not self._frozen:
                    # Everything loaded so far (the index's caches, the session refs, Textual's widgets) lives as
                    # long as the app: moved out of the collector's sight, a full collection no longer stalls a
                    # key press for 100-250 ms on a 10k-note vault.
                    self._frozen = True
                    gc.collect()
                    gc.freeze()
                self._after_batch(indexer, IndexReport())

            while not self._stop.is_set():
                try:
                    watch(
                        indexer,
                        self._stop,
                        on_batch,
                        debounce_ms=WATCH_DEBOUNCE_MS,
                        progress=progress,
                        on_ready=on_ready,
                    )
                except CompanionError as exc:
                    self._status(state=f"error: {exc} (retrying in {RETRY_S:.0f} s)")
                    self.call_from_thread(self.notify, str(exc), title="indexing failed", severity="error")
                    self.index_idle = True
                    self._stop.wait(RETRY_S)
        finally:
            indexer.manifest.close()

    def _after_batch(self, indexer: Indexer, report: IndexReport) -> None:
        """Say what a sync or a batch of file events did, and recall again if the index changed."""
        for path, reason in report.skipped:
            self.call_from_thread(self.notify, reason, title=f"skipped {path}", severity="warning")
        notes, chunks = indexer.manifest.counts()
        self.indexed_batches += 1
        self.index_idle = True
        self._status(state=f"watching, {notes} notes, {chunks} chunks")
        if report.notes_indexed or report.notes_deleted:
            self.call_from_thread(self._index_changed)

    def _follow(self, *, until_lock_free: bool) -> None:
        """Show another process's writes as they land; return when the writer lock is free (to take over)."""
        with self._index_lock:
            generation = self.workspace.manifest.generation()
            notes, chunks = self.workspace.manifest.counts()
        self._status(state=f"following, {notes} notes, {chunks} chunks")
        self.index_idle = True
        while not self._stop.wait(FOLLOW_S):
            with self._index_lock:
                now = self.workspace.manifest.generation()
            if now != generation:
                generation = now
                self.call_from_thread(self._index_changed)
            if until_lock_free and not WriterLock.held(self.workspace.data_dir):
                return

    def _status(self, *, mode: str | None = None, state: str | None = None) -> None:
        status = self.query_one(StatusLine)
        if mode is not None:
            self.call_from_thread(setattr, status, "mode", mode)
        if state is not None:
            self.call_from_thread(setattr, status, "state", state)

    @property
    def busy(self) -> bool:
        """Whether a recall, a note read or an index batch is still running (tests and the bench wait on this)."""
        working = any(w.is_running for w in self.workers if w.group != "index")
        return working or not self.index_idle

    async def action_quit(self) -> None:
        """Quit: tell the indexer worker first, so the process does not wait for its batch."""
        self._stop.set()
        await super().action_quit()

    def on_unmount(self) -> None:
        """Stop the indexer worker (it checks between chunks and file events, within a fraction of a second)."""
        self._stop.set()
