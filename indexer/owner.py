"""Who may open a vault's embedded store: exactly one process at a time, the owner; every other process asks it.

The owner is the process holding the writer lock. It opens the store, writes it when it indexes, and answers the
reads of other processes over a local socket (`indexer.remote`). A process that needs the store and finds the lock
free takes it (a recall, doctor, the MCP server); one that finds it held reads through the owner. When a writer
needs the store (`companion index`), an owner that is only reading hands it over and becomes a reader itself; an
owner that is writing keeps it, and a short-lived one is waited for. So Chroma's files are only ever opened by one
process, which is what keeps them whole.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from companion.errors import IndexLockedError, StoreError
from indexer.lock import WriterLock
from indexer.remote import RemoteStore, StoreServer, StoreUnavailable, ask
from indexer.store import Metadata, StoreHealth, VectorStore

log = logging.getLogger(__name__)

T = TypeVar("T")

WAIT_FOR_SHORT_S = 120.0
"""How long a writer waits for a short-lived command (a recall catching up) to finish with the index."""
HAND_OVER_GRACE_S = 5.0
"""After handing the store over, how long a process leaves the lock to the writer that asked for it."""


class StoreOwner:
    """This process's claim on one vault's embedded store: the lock, the open store, and the socket serving it."""

    def __init__(
        self, data_dir: Path, open_local: Callable[[], VectorStore], *, purpose: str | None, long_lived: bool
    ) -> None:
        self.data_dir = data_dir
        self._open_local = open_local
        self._purpose = purpose
        self.long_lived = long_lived
        """A process that runs until stopped (the app, `index --watch`, the MCP server): writers do not wait for
        it to finish."""
        self._state = threading.RLock()
        self._idle = threading.Condition(self._state)  # notified when the last call using the store returns
        self._taking = threading.Lock()  # one thread at a time tries for the lock
        self._lock: WriterLock | None = None
        self._server: StoreServer | None = None
        self._local: VectorStore | None = None
        self._remote: RemoteStore | None = None
        self._writing = 0
        self._busy = 0
        self._handed_at = -HAND_OVER_GRACE_S

    # -- ownership -------------------------------------------------------------------------------

    @property
    def owned(self) -> bool:
        """Whether this process holds the lock now."""
        return self._lock is not None

    def take(self, *, wait_s: float = 0.0, ask_release: bool = False) -> None:
        """Hold the lock (once per process; taking it again is a no-op) and start serving the store.

        With `ask_release`, an owner that is only reading is asked to hand over; with `wait_s`, a short-lived
        owner that is busy is waited for that long. Raises `IndexLockedError` naming the holder otherwise.
        """
        with self._taking:
            if self._lock is not None:
                return
            lock = self._acquire(wait_s, ask_release)
            with self._state:
                self._lock = lock
                self._remote = None
            try:
                server = StoreServer(self.data_dir, self._serving, self._hand_over, lock.purpose)
                server.start()
            except (OSError, StoreUnavailable) as exc:  # the store still works here; others answer from words only
                log.warning("cannot serve the index to other processes: %s", exc)
                return
            with self._state:
                self._server = server

    def _acquire(self, wait_s: float, ask_release: bool) -> WriterLock:
        deadline = time.monotonic() + wait_s
        asked: object = None  # the holder last asked to hand over (by pid): a new holder is asked again
        released = False
        while True:
            lock = WriterLock(self.data_dir, self._purpose, long_lived=self.long_lived)
            try:
                lock.acquire()
                return lock
            except IndexLockedError:
                holder = lock.holder() or {}
                if ask_release and holder.get("pid") != asked:
                    asked = holder.get("pid")
                    try:
                        released = bool(ask(self.data_dir, {"op": "release"}, timeout=5).get("released"))
                    except StoreError:
                        released = False
                    if released:
                        deadline = max(deadline, time.monotonic() + 5.0)  # it lets go within moments
                        continue
                if time.monotonic() >= deadline or (holder.get("long_lived") and not released):
                    raise
                time.sleep(0.1)

    @contextlib.contextmanager
    def writing(self, *, wait_s: float = 0.0, ask_release: bool = True) -> Iterator[None]:
        """Hold the lock for writing: a request to hand the store over is refused until the block ends."""
        while True:
            self.take(wait_s=wait_s, ask_release=ask_release)
            with self._state:
                if self._lock is not None:  # not handed over between taking it and counting this write
                    self._writing += 1
                    break
        try:
            yield
        finally:
            with self._state:
                self._writing -= 1

    def _hand_over(self) -> bool:
        """Let go of the store for a writer that asks (called from a serving thread); False while in use."""
        if not self._state.acquire(timeout=10):
            return False
        try:
            if self._writing or self._busy or self._lock is None:
                return False
            log.info("handing the index over to another process")
            self._drop()
            self._handed_at = time.monotonic()
            return True
        finally:
            self._state.release()

    def release(self) -> None:
        """Close the store and give the lock back (at the end of the process's use of the index), once the
        calls using it have returned (a few seconds at most)."""
        with self._state:
            self._idle.wait_for(lambda: self._busy == 0, timeout=5.0)
            self._drop()
            self._remote = None

    def _drop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._local is not None:
            self._local.close()
            self._local = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # -- the store -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _using(self) -> Iterator[VectorStore | None]:
        """The local store, counted as in use for the block (so it is not handed over under a call); None when
        this process does not hold the lock."""
        with self._state:
            if self._lock is None:
                store = None
            else:
                store = self._local_store()
                self._busy += 1
        try:
            yield store
        finally:
            if store is not None:
                with self._state:
                    self._busy -= 1
                    self._idle.notify_all()

    @contextlib.contextmanager
    def _serving(self) -> Iterator[VectorStore]:
        """The local store for another process's request."""
        with self._using() as store:
            if store is None:
                raise StoreUnavailable("this process no longer holds the index")
            yield store

    def _local_store(self) -> VectorStore:
        if self._local is None:
            self._local = self._open_local()
        return self._local

    def local(self) -> VectorStore:
        """The store opened here, taking the lock if it is free (raises `IndexLockedError` naming the process that
        holds it otherwise: only the holder may write)."""
        if self._lock is None:
            self.take()
        with self._state:
            if self._lock is None:
                raise IndexLockedError("the index was handed over to another process meanwhile; try again")
            return self._local_store()

    def reset_local(self) -> None:
        """Forget the open store (after it was deleted for a rebuild or repair); the lock stays held."""
        with self._state:
            if self._local is not None:
                self._local.close()
                self._local = None

    def run(self, fn: Callable[[VectorStore | RemoteStore], T], model: tuple[str, int]) -> T:
        """Call `fn` with the store this process may use now: its own, the owner's, or the lock if it is free."""
        for _attempt in range(4):
            with self._using() as store:
                if store is not None:
                    return fn(store)
            with self._state:
                remote = self._remote
            if remote is None:
                # Just handed over: the writer that asked is about to take the lock; leave it to it.
                if time.monotonic() - self._handed_at > HAND_OVER_GRACE_S:
                    try:
                        self.take()
                        continue
                    except IndexLockedError:
                        pass
                    except OSError as exc:  # a data dir this process cannot write: it cannot own the store
                        raise StoreUnavailable(f"cannot take the index ({exc})") from exc
                try:
                    remote = RemoteStore(self.data_dir, model_id=model[0], dim=model[1])
                except StoreUnavailable:
                    if not WriterLock.held(self.data_dir):
                        self._handed_at = -HAND_OVER_GRACE_S
                        continue  # the owner just left: the lock is free to take
                    raise
                with self._state:
                    self._remote = remote
            try:
                return fn(remote)
            except StoreUnavailable:
                with self._state:
                    self._remote = None  # the owner left or handed over: find the store again
        raise StoreUnavailable("the index changed hands several times during one request; try again")


class SharedStore:
    """The vector store as the rest of the program uses it, whoever owns it at the moment of each call."""

    def __init__(self, owner: StoreOwner, model_id: str, dim: int) -> None:
        self._owner = owner
        self.model_id = model_id
        self.dim = dim
        self.location = str(owner.data_dir)

    @property
    def write_batch(self) -> int:
        """Vectors per write of the local store."""
        return self._owner.local().write_batch

    @write_batch.setter
    def write_batch(self, value: int) -> None:
        self._owner.local().write_batch = value

    def _run(self, fn: Callable[[VectorStore | RemoteStore], T]) -> T:
        return self._owner.run(fn, (self.model_id, self.dim))

    def count(self) -> int:
        """How many chunk vectors the store holds."""
        return self._run(lambda s: s.count())

    def ids(self) -> set[str]:
        """Every id in the store."""
        return self._run(lambda s: s.ids())

    def nearest(self, vector: npt.NDArray[np.float32], n: int) -> list[tuple[str, float]]:
        """Nearest chunk ids with their cosine similarity, best first."""
        return self._run(lambda s: s.nearest(vector, n))

    def embeddings(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of the ids that exist."""
        return self._run(lambda s: s.embeddings(ids))

    def health(self, expected: Sequence[str]) -> StoreHealth:
        """A full check of every vector against the expected ids (run by the owner)."""
        return self._run(lambda s: s.health(expected))

    def upsert(self, ids: Sequence[str], embeddings: npt.NDArray[np.float32], metadatas: Sequence[Metadata]) -> None:
        """Insert or replace vectors (only while this process holds the index)."""
        self._owner.local().upsert(ids, embeddings, metadatas)

    def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id (only while this process holds the index)."""
        self._owner.local().delete(ids)

    def reset(self) -> None:
        """Drop every vector (only while this process holds the index)."""
        self._owner.local().reset()
