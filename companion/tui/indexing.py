"""The app's own indexer: catch up, then watch the vault; or follow another process that writes the index.

An `IndexKeeper` runs in one of the app's thread workers and tells the app what happens by posting messages
(`IndexStatus`, `IndexChanged`, `Notice`); the app answers `IndexChanged` by recalling again. The indexer thread
writes through its own SQLite connection, so the app's recalls never wait for a batch.
"""

from __future__ import annotations

import datetime as dt
import gc
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from companion.errors import CompanionError, IndexLockedError
from companion.pipeline.imports.run import AGENT_NAMES
from companion.tui.messages import IndexChanged, IndexStatus, Notice
from companion.words import counted
from companion.workspace import Workspace
from indexer.lock import WriterLock
from indexer.report import IndexReport
from indexer.sync import Indexer

if TYPE_CHECKING:
    from companion.pipeline.imports.follow import Followed, ImportFollower

RETRY_S = 5.0  # after a failed index write, before the next catch-up
FOLLOW_S = 1.0  # how often an attached app looks for another process's writes
ASK_AGAIN_S = 15.0  # how often an attached app asks the holder for the index again (a reader lets go)
APP_WRITE_BATCH = 128  # vectors per Chroma write: each holds the GIL, so the event loop waits ~40 ms at most
WATCH_DEBOUNCE_MS = 800  # quiet period that turns an editor's save (temp file, rename) into one batch


def built(left: int, chunks: int) -> str:
    """ ", meaning 40% built" while `left` of the index's `chunks` wait for their vectors; empty once none does."""
    if not left or not chunks:
        return ""
    return f", meaning {int(100 * (chunks - left) / chunks)}% built"


class _Stopped(Exception):
    """The app is closing: the indexer worker leaves its batch."""


class IndexKeeper:
    """Keeps a vault's index fresh from a worker thread, or attaches to the process that does."""

    def __init__(self, workspace: Workspace, post: Callable[[Message], object], *, read_only: bool = False) -> None:
        """Index `workspace`, telling the app through `post` (its `post_message`, safe from any thread)."""
        self.workspace = workspace
        """The vault, its config and its index."""
        workspace.store_write_batch = APP_WRITE_BATCH
        workspace.long_lived = True  # an indexer started beside the app asks it, never waits for it to end
        self.read_only = read_only
        """Only follow other writers; never write the index."""
        self.idle = False
        """Caught up and waiting for file events (or only following another writer)."""
        self.batches = 0
        """How many syncs and watch batches have finished (for tests)."""
        self.lock = threading.Lock()
        """Held around every use of the workspace's shared manifest connection (readers take turns on it)."""
        self.first_shown = threading.Event()
        """Set by the app once its first screen is up: indexing waits for it."""
        self._stop = threading.Event()
        self._post = post
        self._frozen = False
        self._sessions_touched = False  # a batch's events reached the session summaries (see `_saw`)
        self._sessions_prefix = workspace.config.sessions.folder.strip("/") + "/"
        self.follower: ImportFollower | None = None
        """The thread following the agents' sessions (`imports.follow`) while the app writes the index."""

    def stop(self) -> None:
        """Ask the worker to end (it checks between chunks and file events, within a fraction of a second)."""
        self._stop.set()

    def run(self) -> None:
        """Keep the index fresh until `stop`: catch up, then watch the vault (the body of the app's worker).

        When another process (`companion index --watch`) holds the writer lock, this attaches: it follows that
        process's writes and takes over once the lock is free. Read-only mode only follows.
        """
        while not (self.first_shown.wait(0.05) or self._stop.is_set()):
            pass  # the first screen comes first; a quit before it ends the worker at once
        while not self._stop.is_set():
            if self.read_only:
                self._post(IndexStatus(mode="read-only: the index is not written"))
                self._follow(until_lock_free=False)
                return
            try:
                with self.workspace.writing(wait=False):
                    self._post(IndexStatus(mode="indexer in the app"))
                    with self.lock:  # the mend reads and journals through the readers' manifest connection
                        mended = self.workspace.mend()
                    for line in mended.actions:
                        self._post(Notice(line, title="index repaired", severity="warning"))
                    self._index_and_watch()
                return
            except IndexLockedError:
                # Short: the status line is one line at 120 columns (the holder's command line is in `doctor`).
                who = WriterLock(self.workspace.data_dir).holder_short()
                self._post(IndexStatus(mode=f"attached to {who}: it writes the index, the app follows"))
                self._follow(until_lock_free=True)
            except _Stopped:
                return
            except Exception as exc:  # noqa: BLE001 - the worker must never die silently, whatever broke
                # The store, the model, the OS watch or the disk failed; the journal keeps the index consistent and
                # the next catch-up redoes what was lost.
                if self._stop.is_set():
                    return
                self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        self._post(IndexStatus(state=f"error: {exc} (retrying in {RETRY_S:.0f} s)"))
        self._post(Notice(str(exc), title="indexing failed", severity="error"))
        self.idle = True
        self._stop.wait(RETRY_S)

    def _index_and_watch(self) -> None:
        from indexer.watcher import watch  # deferred: watchfiles is needed only once the first screen is up

        def progress(done: int, total: int, left_s: float | None) -> None:
            if self._stop.is_set():
                raise _Stopped  # a quit mid-batch: the journal undoes the half-written batch on the next start
            self.idle = False
            # Short enough for an 80-column status line beside the indexer's mode.
            when = "" if left_s is None else f", ~{round(left_s / 60)} min" if left_s >= 90 else f", ~{left_s:.0f} s"
            self._post(IndexStatus(state=f"embedding: {total - done:,} chunks left{when}"))

        with self.lock:  # the meta checks use the readers' connection
            indexer = self.workspace.indexer(own_connections=True)
        follower = self._import_follower()
        # The indexer writes through its own connection, so recalls (knob presses) never wait for a batch. The catch-up
        # is the watcher's own first sync, made once the OS watch is live: one walk of the vault, and no change
        # between the two is missed.
        try:

            def on_batch(report: IndexReport, events: int) -> None:
                self._after_batch(indexer, report)

            def on_paths(paths: frozenset[str]) -> None:
                self._saw(paths)

            def on_ready() -> None:
                if not self._frozen:
                    # Everything loaded so far (the index's caches, the session refs, Textual's widgets) lives as
                    # long as the app: moved out of the collector's sight, a full collection no longer stalls a
                    # key press for 100-250 ms on a 10k-note vault.
                    self._frozen = True
                    gc.collect()
                    gc.freeze()
                self._after_batch(indexer, IndexReport())

            if follower is not None:
                follower.start()
            while not self._stop.is_set():
                try:
                    watch(
                        indexer,
                        self._stop,
                        on_batch,
                        debounce_ms=WATCH_DEBOUNCE_MS,
                        progress=progress,
                        on_ready=on_ready,
                        on_paths=on_paths,
                    )
                except CompanionError as exc:
                    self._failed(exc)
        finally:
            if follower is not None:
                follower.stop()
            indexer.manifest.close()

    def _import_follower(self) -> ImportFollower | None:
        """The thread importing the sessions of the agents `imports.follow` names, while the app writes the index;
        the notes it writes reach the index through the app's note watcher. Only a new problem or a failure is
        told, and the import at start when it wrote notes, not each rewrite of a running session's note."""
        ws = self.workspace
        if not ws.config.imports.follow:
            return None
        from companion.pipeline.imports.follow import ImportFollower  # deferred, as the note watcher is

        def on_import(done: Followed) -> None:
            name = AGENT_NAMES[done.agent]
            for problem in done.problems:
                self._post(Notice(problem, title=f"import of {name}", severity="warning"))
            if done.catch_up and done.report.written:
                self._post(Notice(f"{counted(len(done.report.written), 'session')} imported", title=name))

        def on_error(agent: str, exc: Exception) -> None:
            what = f"import of {AGENT_NAMES[agent]}" if agent else "watch of the agents' sessions"
            self._post(Notice(f"{exc} (tried again on the next change)", title=f"{what} failed", severity="error"))

        self.follower = ImportFollower(ws.root, ws.data_dir, ws.config.imports, on_import=on_import, on_error=on_error)
        return self.follower

    def _after_batch(self, indexer: Indexer, report: IndexReport) -> None:
        """Say what a sync or a batch of file events did, and recall again if the index changed."""
        for path, reason in report.skipped:
            self._post(Notice(reason, title=f"skipped {path}", severity="warning"))
        notes, chunks = indexer.manifest.counts()
        self.batches += 1
        self.idle = True
        state = f"watching, {counted(notes, 'note')}, {counted(chunks, 'chunk')}{built(report.chunks_left, chunks)}"
        self._post(IndexStatus(state=state))
        touched, self._sessions_touched = self._sessions_touched, False
        # The meaning side finishing changes every ranking; each stretch of it on the way would only stir the panes.
        finished = (report.chunks_embedded > 0 or report.titles_embedded > 0) and not report.waiting
        if report.notes_indexed or report.notes_deleted or touched or finished:
            self._post(IndexChanged())

    def _saw(self, paths: frozenset[str]) -> None:
        """Note whether a batch touched the session summaries: the index may leave their folder out, but the hot
        tier reads them from the vault, so a session the agent just wrote must show whatever the index does."""
        prefix = self._sessions_prefix
        if any(p.startswith(prefix) or prefix.startswith(p + "/") for p in paths):
            self._sessions_touched = True

    def _sessions_stamp(self) -> tuple[tuple[str, str, str], ...]:
        """What the hot window's session summaries are now (path, date, time), to notice new ones while only
        following another writer (which indexes, but does not tell the app about notes it leaves out)."""
        since = dt.date.today() - dt.timedelta(days=max(self.workspace.config.retention.hot_window_days, 1) + 1)
        with self.lock:  # the vault's summary cache is shared with the app's recalls
            vault = self.workspace.vault
            known = len(vault.problems)
            stamp = tuple((s.path, s.date, s.time) for s in vault.sessions(since=since))
            del vault.problems[known:]  # polled every second: a broken summary is reported by recall, not each time
            return stamp

    def _following(self) -> str:
        """The status line while another process writes the index."""
        with self.lock:
            notes, chunks = self.workspace.manifest.counts()
            left = self.workspace.manifest.queue.unembedded_totals()[0]
        return f"following, {counted(notes, 'note')}, {counted(chunks, 'chunk')}{built(left, chunks)}"

    def _follow(self, *, until_lock_free: bool) -> None:
        """Show another process's writes as they land; return when the writer lock is free (to take over)."""
        with self.lock:
            generation = self.workspace.manifest.generation()
        self._post(IndexStatus(state=self._following()))
        self.idle = True
        ask_again = time.monotonic() + ASK_AGAIN_S
        sessions = self._sessions_stamp()
        while not self._stop.wait(FOLLOW_S):
            with self.lock:
                now = self.workspace.manifest.generation()
            sessions_now = self._sessions_stamp()
            if sessions_now != sessions:
                sessions = sessions_now
                self._post(IndexChanged())
            if now != generation:
                generation = now
                self._post(IndexStatus(state=self._following()))
                self._post(IndexChanged())
            if until_lock_free and (
                self.workspace.owner.owned  # the app's own recall took the store when the other writer left
                or not WriterLock.held(self.workspace.data_dir)
                or time.monotonic() >= ask_again  # a holder that only reads hands the store over when asked
            ):
                return
